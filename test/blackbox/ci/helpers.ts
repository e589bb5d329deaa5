// Shared pieces of the CI black-box tests: an org with an owner, registration through the real
// `svc runner register`, real `svc runner run` processes, workflow pushes, and waiting on
// observable state (never sleeping for a fixed time).
import { expect } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { caller, person, type Person } from "../../helpers/api.ts";
import { BUN, ROOT, cleanEnv, type RunningServer } from "../../helpers/server.ts";

/** Polls `probe` until it returns a truthy value (or throws after `ms`). */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An org `acme` with an owner, and a JSON client for them. */
export async function ownerOf(server: RunningServer, org = "acme"): Promise<{ owner: Person; api: ReturnType<typeof caller> }> {
  const owner = await person(server, org, `owner@${org}.example`, "owner");
  return { owner, api: caller(server, owner) };
}

/** A registration token of `group` (default `default`). */
export async function registrationToken(api: ReturnType<typeof caller>, org = "acme", group?: string): Promise<string> {
  const r = await api.post(`/v1/orgs/${org}/runners/registration-token`, group ? { group } : {});
  expect(r.status).toBe(201);
  return r.body.token;
}

/** A directory for runner configs and workspaces; removed by `cleanup()`. */
export function runnerHome(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "svc-runner-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs `svc <args>` (no SVC_* settings), as a runner machine would. */
export async function svc(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([BUN, join(ROOT, "src/main.ts"), ...args], { env: { ...cleanEnv(), ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** Registers a machine with the real CLI; answers its config path and the stored config. */
export async function registerMachine(
  server: RunningServer,
  token: string,
  home: string,
  o: { name: string; labels?: string[]; ephemeral?: boolean },
): Promise<{ config: string; runnerId: string; credential: string }> {
  const config = join(home, `${o.name}.json`);
  const args = ["runner", "register", "--url", server.url, "--token", token, "--name", o.name, "--config", config];
  if (o.labels?.length) args.push("--labels", o.labels.join(","));
  if (o.ephemeral) args.push("--ephemeral");
  const r = await svc(args);
  if (r.code !== 0) throw new Error(`register failed: ${r.stderr}`);
  const stored = JSON.parse(await Bun.file(config).text());
  return { config, runnerId: stored.runner_id, credential: stored.credential };
}

/** A running `svc runner run` process. */
export interface Agent {
  proc: ReturnType<typeof Bun.spawn>;
  stderr(): string;
  /** Waits until the agent's stderr matches. */
  saw(re: RegExp, ms?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts `svc runner run --config <config>`. */
export function startAgent(config: string, workdir: string): Agent {
  const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "runner", "run", "--config", config, "--workdir", workdir], {
    env: cleanEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  let err = "";
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += new TextDecoder().decode(chunk);
  })();
  void new Response(proc.stdout as ReadableStream).text();
  const agent: Agent = {
    proc,
    stderr: () => err,
    saw: async (re, ms = 30_000) => void (await until(`agent output ${re}\n--- agent stderr:\n${err}`, () => re.test(err), ms)),
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return await proc.exited;
    },
    async [Symbol.asyncDispose]() {
      await agent.stop("SIGKILL");
    },
  };
  return agent;
}

/** Commits `files` to `branch` through the commit API (a push event like any other). */
export async function commitFiles(api: ReturnType<typeof caller>, repo: string, files: Record<string, string>, branch = "main", org = "acme"): Promise<string> {
  const r = await api.post(`/v1/orgs/${org}/repos/${repo}/commits`, {
    branch,
    message: "ci change",
    operations: Object.entries(files).map(([path, content]) => ({ op: "put", path, content })),
  });
  if (r.status !== 201) throw new Error(`commit failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.commit;
}

/** The runs of a repo (newest first). */
export async function runsOf(api: ReturnType<typeof caller>, repo: string, org = "acme"): Promise<any[]> {
  const r = await api.get(`/v1/orgs/${org}/repos/${repo}/runs`);
  expect(r.status).toBe(200);
  return r.body.runs;
}

/** Waits for the run of `commit` to reach a finished state; answers it. */
export async function finishedRun(api: ReturnType<typeof caller>, repo: string, commit: string, ms = 60_000, org = "acme"): Promise<any> {
  return until(
    `a finished run of ${commit}`,
    async () => {
      const run = (await runsOf(api, repo, org)).find((r) => r.commit === commit);
      return run && ["success", "failure", "cancelled"].includes(run.state) ? run : null;
    },
    ms,
  );
}

/** A job's log text. */
export async function logOf(server: RunningServer, who: Person, repo: string, runId: string, jobId: string, org = "acme"): Promise<string> {
  const res = await fetch(`${server.url}/v1/orgs/${org}/repos/${repo}/runs/${runId}/jobs/${jobId}/logs`, { headers: { cookie: who.cookie } });
  expect(res.status).toBe(200);
  return res.text();
}

/** Reads rows from the server's database (read-only), for records no route shows yet (audit). */
export function dbRows<T>(server: RunningServer, query: string, ...params: (string | number)[]): T[] {
  const db = new Database(join(server.dataDir, "svc.db"), { readonly: true });
  try {
    return db.query(query).all(...params) as T[];
  } finally {
    db.close();
  }
}
