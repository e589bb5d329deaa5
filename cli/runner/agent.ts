// The runner agent (DECISIONS §0): `svc runner register` stores a machine credential;
// `svc runner run` claims jobs one at a time and runs them (job.ts: clone at the job's commit
// with the per-job token, each step in its own process group in a fresh workspace, the log
// streamed masked, step states, heartbeat, outputs and verdict; steps.ts: shells, working
// directories, timeouts, the step files; log.ts: masking and upload), then claims again. While
// the server is unreachable every call retries with backoff and says so on stderr.
// `--ephemeral` machines exit after one job.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { arch as osArch, hostname, platform } from "node:os";
import { dirname, join, resolve } from "node:path";
import { call, pause, say, Stopped } from "./client.ts";
import { type JobControl, runJob } from "./job.ts";
import { killGroup } from "./steps.ts";

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

/** The agent loop of `svc runner run`. */
export class Agent {
  private readonly stopper = new AbortController();
  private readonly control: JobControl = { cancelled: null, child: null };

  constructor(
    private readonly config: RunnerConfig,
    private readonly workdir: string,
  ) {}

  /** Stops claiming; a running job is cancelled and reported. */
  stop(): void {
    if (this.stopper.signal.aborted) return;
    say("stopping");
    this.control.cancelled ??= "stop";
    this.stopper.abort();
    if (this.control.child) killGroup(this.control.child);
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
    await runJob({ jobId, token, runnerUrl, workdir: this.workdir, runnerName: this.config.name, control: this.control, stopped: this.stopper.signal });
    this.control.child = null;
  }
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
