// The runner agent (DECISIONS §0): `svc runner register` stores a machine credential;
// `svc runner run` claims jobs one at a time and runs them. For each job: clone the repository
// at the job's commit (plain `git`, with the per-job token), run each step with `sh -e` in a
// fresh workspace, each step in its own process group (killed whole on cancel or timeout),
// stream the output to the log call (at most ~0.5 s behind), report step states, heartbeat,
// report the verdict, remove the workspace, claim again. While the server is unreachable every
// call retries with backoff and says so on stderr. `--ephemeral` machines exit after one job.
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { arch as osArch, hostname, platform } from "node:os";
import { dirname, join, resolve } from "node:path";
import { call, pause, say, Stopped } from "./client.ts";

/** What `register` stores (mode 0600). */
export interface RunnerConfig {
  url: string;
  runner_id: string;
  name: string;
  credential: string;
  labels: string[];
  ephemeral: boolean;
  org: string | null;
  group: string | null;
}

/** The default config path: `.svc-runner.json` in the working directory. */
export const DEFAULT_CONFIG = ".svc-runner.json";

function osName(): "linux" | "macos" | "windows" {
  const p = platform();
  return p === "darwin" ? "macos" : p === "win32" ? "windows" : "linux";
}

function archName(): "x64" | "arm64" {
  return osArch() === "arm64" ? "arm64" : "x64";
}

/** `svc runner register`: registers this machine and writes its credential to `configPath`. */
export async function register(opts: {
  url: string;
  token: string;
  name?: string;
  labels?: string;
  ephemeral?: boolean;
  configPath: string;
  version: string;
}): Promise<RunnerConfig> {
  const url = opts.url.replace(/\/+$/, "");
  const name =
    opts.name ??
    (hostname()
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .slice(0, 64) ||
      "runner");
  const labels = opts.labels
    ? opts.labels
        .split(",")
        .map((l) => l.trim())
        .filter(Boolean)
    : [];
  const res = await call(`${url}/v1/runners/register`, {
    token: opts.token,
    method: "POST",
    body: { name, os: osName(), arch: archName(), labels, version: opts.version, ephemeral: opts.ephemeral ?? false },
    attempts: 5,
    what: "register",
  });
  if (res.status !== 201) throw new Error(`registration refused (${res.status}): ${res.body?.error ?? "unknown error"}`);
  const config: RunnerConfig = {
    url,
    runner_id: res.body.runner_id,
    name,
    credential: res.body.credential,
    labels: res.body.labels,
    ephemeral: opts.ephemeral ?? false,
    org: res.body.org,
    group: res.body.group,
  };
  const path = resolve(opts.configPath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return config;
}

/** Reads a config written by `register`. */
export function loadRunnerConfig(path: string): RunnerConfig {
  const raw = JSON.parse(readFileSync(resolve(path), "utf8"));
  if (typeof raw?.url !== "string" || typeof raw?.credential !== "string") throw new Error(`${path}: not a runner config (run \`svc runner register\` first)`);
  return raw as RunnerConfig;
}

interface Job {
  job_id: string;
  run_id: string;
  key: string;
  repo: string;
  clone_url: string;
  commit: string;
  ref: string;
  env: Record<string, string>;
  steps: { name: string; run: string; env: Record<string, string> }[];
  timeout_s: number;
  heartbeat_s: number;
}

/** Bytes of a string as UTF-8. */
const byteLength = (s: string) => Buffer.byteLength(s);

/** The longest prefix of `s` of at most `limit` UTF-8 bytes (never splitting a character). */
function prefixBytes(s: string, limit: number): string {
  const b = Buffer.from(s);
  if (b.length <= limit) return s;
  let end = limit;
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString("utf8");
}

/** The job's log as the server has acknowledged it, and the text still to send. */
class LogStream {
  private pending = "";
  private acked = 0;
  private flushing: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval>;
  /** Set when the server will take no more (job over, or the log limit reached). */
  closed = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly stop: AbortSignal,
  ) {
    this.timer = setInterval(() => void this.flush(), 500);
  }

  write(text: string): void {
    if (this.closed || !text) return;
    this.pending += text;
    if (byteLength(this.pending) >= 256 * 1024) void this.flush();
  }

  /** Sends what is pending (one call at a time); resolves when this round is done. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = this.send().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async send(): Promise<void> {
    while (this.pending && !this.closed) {
      const text = prefixBytes(this.pending, 512 * 1024);
      let res: Awaited<ReturnType<typeof call>>;
      try {
        res = await call(this.url, { token: this.token, method: "POST", body: { offset: this.acked, text }, stop: this.stop, what: "log upload" });
      } catch (error) {
        if (error instanceof Stopped) return;
        throw error;
      }
      if ((res.status === 200 || res.status === 409) && typeof res.body?.offset === "number") {
        // The server holds everything up to `offset`: drop that much from what is pending.
        const drop = res.body.offset - this.acked;
        if (drop > 0) this.pending = Buffer.from(this.pending).subarray(drop).toString("utf8");
        this.acked = Math.max(this.acked, res.body.offset);
        continue;
      }
      if (res.status === 413) say(`log limit reached; further output is not uploaded (${res.body?.error ?? ""})`);
      this.closed = true;
    }
  }

  /** Uploads everything (retrying while the server is away), then stops the timer. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    while (this.pending && !this.closed && !this.stop.aborted) await this.flush();
    this.closed = true;
  }
}

/** Kills a step's whole process group: TERM, then KILL if it lingers. */
function killGroup(child: ChildProcess): void {
  if (!child.pid || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  setTimeout(() => {
    try {
      if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }, 3000).unref();
}

/** Runs a command in its own process group, streaming merged output to `out`; resolves with its exit code. */
function runProcess(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; out: (s: string) => void; onChild?: (c: ChildProcess) => void },
): Promise<number> {
  return new Promise((resolvePromise) => {
    // Why detached: the step becomes a process group leader, so a cancel kills everything it started.
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    opts.onChild?.(child);
    const out = new TextDecoder();
    const err = new TextDecoder();
    child.stdout!.on("data", (b: Buffer) => opts.out(out.decode(b, { stream: true })));
    child.stderr!.on("data", (b: Buffer) => opts.out(err.decode(b, { stream: true })));
    child.on("error", (e) => {
      opts.out(`${e.message}\n`);
      resolvePromise(127);
    });
    child.on("close", (code, signal) => resolvePromise(code ?? (signal ? 128 + (signal === "SIGKILL" ? 9 : 15) : 1)));
  });
}

/** The agent loop of `svc runner run`. */
export class Agent {
  private readonly stopper = new AbortController();
  private child: ChildProcess | null = null;
  private cancelled: "cancel" | "timeout" | "stop" | null = null;

  constructor(
    private readonly config: RunnerConfig,
    private readonly workdir: string,
  ) {}

  /** Stops claiming; a running job is cancelled and reported. */
  stop(): void {
    if (this.stopper.signal.aborted) return;
    say("stopping");
    this.cancelled ??= "stop";
    this.stopper.abort();
    if (this.child) killGroup(this.child);
  }

  /** Claims and runs jobs until stopped (or after one job when ephemeral); resolves with the exit code. */
  async run(): Promise<number> {
    const base = this.config.url;
    say(`${this.config.name} (${this.config.runner_id}) waiting for jobs at ${base} with labels ${this.config.labels.join(",")}`);
    let busyWaits = 0;
    let claimTimeout = 90_000;
    while (!this.stopper.signal.aborted) {
      let res: Awaited<ReturnType<typeof call>>;
      try {
        // The client timeout must exceed the server's wait (SPEC §8); a timeout is just another claim.
        res = await call(`${base}/v1/runners/claim`, {
          token: this.config.credential,
          method: "POST",
          timeoutMs: claimTimeout,
          stop: this.stopper.signal,
          what: "claim",
        });
      } catch (error) {
        if (error instanceof Stopped) break;
        throw error;
      }
      const serverWait = Number(res.headers.get("x-svc-claim-wait-ms"));
      if (serverWait > 0) claimTimeout = Math.max(90_000, serverWait + 30_000);
      if (res.status === 204) continue;
      if (res.status === 401) {
        say("the server no longer accepts this runner's credential (removed, or replaced by a machine of the same name)");
        return this.config.ephemeral ? 0 : 1;
      }
      if (res.status === 409) {
        // The server still counts a job of ours as running (we were restarted mid-job); it ends after its heartbeat timeout.
        if (busyWaits++ % 6 === 0) say("the server says this machine still holds a running job; waiting for it to end");
        await pause(5_000, this.stopper.signal);
        continue;
      }
      if (res.status !== 200) {
        say(`claim refused (${res.status}): ${res.body?.error ?? ""}`);
        await pause(5_000, this.stopper.signal);
        continue;
      }
      busyWaits = 0;
      await this.runJob(res.body.job_id, res.body.token, res.body.runner_url ?? base);
      if (this.config.ephemeral) {
        say("ephemeral runner: one job done, exiting");
        return 0;
      }
    }
    return 0;
  }

  private async runJob(jobId: string, token: string, runnerUrl: string): Promise<void> {
    const base = runnerUrl.replace(/\/+$/, "");
    const jobUrl = `${base}/v1/runner/jobs/${jobId}`;
    // A job's calls survive a stop of the agent only as long as needed to report it.
    const reportStop = new AbortController();
    const desc = await call(jobUrl, { token, stop: reportStop.signal, what: "job description" });
    if (desc.status !== 200) {
      say(`job ${jobId}: the server refused its description (${desc.status}); skipping`);
      return;
    }
    const job = desc.body as Job;
    const tag = `job ${JSON.stringify(job.key)} (${job.job_id}) of ${job.repo}@${job.commit.slice(0, 7)}`;
    say(`${tag}: started`);
    this.cancelled = this.stopper.signal.aborted ? "stop" : null;
    const log = new LogStream(`${jobUrl}/logs`, token, reportStop.signal);
    const started = Date.now();
    // Heartbeats: the answer may say cancel.
    let over = false;
    const beatStop = new AbortController();
    const beat = async () => {
      while (!over) {
        const res = await call(`${jobUrl}/heartbeat`, { token, method: "POST", attempts: 1, what: "heartbeat", timeoutMs: 10_000 }).catch(() => null);
        if (res?.status === 200 && res.body?.cancel && !this.cancelled) {
          this.cancelled = "cancel";
          say(`${tag}: cancel requested`);
          if (this.child) killGroup(this.child);
        }
        if (res?.status === 401 || res?.status === 404) {
          // The server ended the job (removed machine, timeout, silence): stop working on it.
          if (!this.cancelled) say(`${tag}: the server ended the job`);
          this.cancelled ??= "cancel";
          if (this.child) killGroup(this.child);
        }
        if (Date.now() - started > (job.timeout_s + 30) * 1000 && !this.cancelled) {
          this.cancelled = "timeout";
          say(`${tag}: timed out after ${job.timeout_s}s`);
          if (this.child) killGroup(this.child);
        }
        await pause(Math.max(1, job.heartbeat_s ?? 5) * 1000, beatStop.signal);
      }
    };
    const beating = beat();
    const ws = join(this.workdir, job.job_id);
    let verdict: "success" | "failure" | "cancelled" = "success";
    const steps = job.steps.length;
    const stepState = (i: number, state: string, exitCode: number | null = null) =>
      call(`${jobUrl}/steps/${i}`, { token, method: "POST", body: { state, exit_code: exitCode }, stop: reportStop.signal, what: `step ${i + 1} state` }).catch(
        () => null,
      );
    try {
      rmSync(ws, { recursive: true, force: true });
      mkdirSync(ws, { recursive: true });
      log.write(`##[checkout] ${job.repo} at ${job.commit} (${job.ref})\n`);
      const gitEnv = {
        ...baseEnv(),
        GIT_TERMINAL_PROMPT: "0",
        // Why config by environment: the token stays out of argv (visible to other users) and out of .git/config.
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "http.extraHeader",
        GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}`,
      };
      const out = (s: string) => log.write(s);
      let code = await runProcess("git", ["init", "-q", "."], { cwd: ws, env: gitEnv, out });
      if (code === 0)
        code = await runProcess("git", ["fetch", "-q", "--no-tags", "--depth", "1", job.clone_url, job.commit], {
          cwd: ws,
          env: gitEnv,
          out,
          onChild: (c) => (this.child = c),
        });
      if (code === 0) code = await runProcess("git", ["checkout", "-q", "--detach", "FETCH_HEAD"], { cwd: ws, env: gitEnv, out });
      this.child = null;
      if (code !== 0) {
        log.write(`##[error] checkout failed (exit ${code})\n`);
        say(`${tag}: checkout failed`);
        verdict = this.cancelled ? "cancelled" : "failure";
        for (let i = 0; i < steps; i++) await stepState(i, "skipped");
      } else {
        for (let i = 0; i < steps; i++) {
          const step = job.steps[i]!;
          if (verdict !== "success" || this.cancelled) {
            await stepState(i, this.cancelled ? "cancelled" : "skipped");
            continue;
          }
          say(`${tag}: step ${i + 1}/${steps} ${JSON.stringify(step.name)} running`);
          await stepState(i, "running");
          log.write(`##[step ${i + 1}/${steps}] ${step.name}\n`);
          const script = join(this.workdir, `${job.job_id}.step${i}.sh`);
          // `exec 2>&1`: one stream, so the log keeps stdout and stderr in the order they were written.
          writeFileSync(script, `exec 2>&1\n${step.run}\n`);
          const env = {
            ...baseEnv(),
            CI: "true",
            SVC_CI: "true",
            SVC_JOB_ID: job.job_id,
            SVC_RUN_ID: job.run_id,
            SVC_JOB_KEY: job.key,
            SVC_REPOSITORY: job.repo,
            SVC_SHA: job.commit,
            SVC_REF: job.ref,
            SVC_WORKSPACE: ws,
            ...job.env,
            ...step.env,
          };
          const t0 = Date.now();
          const exit = await runProcess("sh", ["-e", script], { cwd: ws, env, out, onChild: (c) => (this.child = c) });
          this.child = null;
          rmSync(script, { force: true });
          const secs = ((Date.now() - t0) / 1000).toFixed(1);
          if (this.cancelled) {
            log.write(`##[cancelled] ${step.name}\n`);
            say(`${tag}: step ${i + 1}/${steps} ${JSON.stringify(step.name)} cancelled after ${secs}s`);
            await stepState(i, "cancelled", exit);
            verdict = "cancelled";
          } else if (exit !== 0) {
            log.write(`##[error] ${step.name} failed with exit code ${exit}\n`);
            say(`${tag}: step ${i + 1}/${steps} ${JSON.stringify(step.name)} failed (exit ${exit}) after ${secs}s`);
            await stepState(i, "failure", exit);
            verdict = "failure";
          } else {
            say(`${tag}: step ${i + 1}/${steps} ${JSON.stringify(step.name)} succeeded in ${secs}s`);
            await stepState(i, "success", 0);
          }
        }
      }
    } catch (error) {
      log.write(`##[error] the runner failed: ${String(error)}\n`);
      verdict = "failure";
    }
    if (this.cancelled) verdict = "cancelled";
    await log.close();
    over = true;
    beatStop.abort();
    const done = await call(`${jobUrl}/complete`, { token, method: "POST", body: { verdict }, stop: reportStop.signal, what: "verdict" }).catch(() => null);
    if (done && done.status !== 204 && done.status !== 401) say(`${tag}: verdict not recorded (${done.status}): ${done.body?.error ?? ""}`);
    await beating;
    rmSync(ws, { recursive: true, force: true });
    say(`${tag}: finished: ${verdict}`);
  }
}

/** The agent's environment for steps and git, without svc's own settings. */
function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_")) out[k] = v;
  return out;
}

/** `svc runner run`: loads the config and runs the agent until a signal (or one job, when ephemeral). */
export async function runAgent(opts: { configPath: string; workdir?: string }): Promise<number> {
  const config = loadRunnerConfig(opts.configPath);
  const workdir = resolve(opts.workdir ?? join(dirname(resolve(opts.configPath)), "_work"));
  if (!existsSync(workdir)) mkdirSync(workdir, { recursive: true });
  const agent = new Agent(config, workdir);
  process.once("SIGTERM", () => agent.stop());
  process.once("SIGINT", () => agent.stop());
  return agent.run();
}
