// Shared pieces of the CI black-box tests: an org with an owner, registration through the real
// `svc runner register`, real `svc runner run` processes, workflow pushes, and waiting on
// observable state (never sleeping for a fixed time). A test file starts with `startCiServer`
// (server, owner, repos; `ci.machine(...)` for agents; one dispose for all) in its `beforeAll`.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { caller, person, type Person } from "../../helpers/api.ts";
import { BUN, ROOT, cleanEnv, client, runSvc, startServer, type RunningServer, serverDb } from "../../helpers/server.ts";

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

/** A JSON client of a person (the owner's, mostly). */
export type Api = ReturnType<typeof caller>;

/** An org `acme` with an owner, and a JSON client for them. */
export async function ownerOf(server: RunningServer, org = "acme"): Promise<{ owner: Person; api: Api }> {
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
export function svc(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return runSvc(args, env);
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

/** Whether a run has reached a finished state. */
export const isFinished = (run: { state: string }): boolean => ["success", "failure", "cancelled"].includes(run.state);

/** Waits for the run of `commit` to reach a finished state; answers it. */
export async function finishedRun(api: ReturnType<typeof caller>, repo: string, commit: string, ms = 60_000, org = "acme"): Promise<any> {
  return until(
    `a finished run of ${commit}`,
    async () => {
      const run = (await runsOf(api, repo, org)).find((r) => r.commit === commit);
      return run && isFinished(run) ? run : null;
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
  const db = serverDb(server, { readonly: true });
  try {
    return db.query(query).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** A repository to create: its name, or its name and whether it is public. */
export type RepoSpec = string | readonly [name: string, isPublic: boolean];

/** Creates repositories of `org` through the API (each must answer 201). */
export async function createRepos(api: Api, repos: readonly RepoSpec[], org = "acme"): Promise<void> {
  for (const spec of repos) {
    const [name, isPublic] = typeof spec === "string" ? [spec, undefined] : spec;
    expect((await api.post(`/v1/orgs/${org}/repos`, isPublic === undefined ? { name } : { name, public: isPublic })).status).toBe(201);
  }
}

/** A registered machine whose `svc runner run` agent is polling for jobs. */
export type Machine = Agent & { runnerId: string; config: string; credential: string };

/** What a machine is: its name and labels, ephemeral or not, the group of its registration token, its workspace folder under the runner home (default `work`). */
export type MachineOptions = { name: string; labels?: string[]; ephemeral?: boolean; group?: string; workdir?: string };

/**
 * Registers a machine with the real CLI (`svc runner register`) and starts its agent (`svc runner
 * run`, workspaces under `<home>/<workdir>`); resolves once it polls for jobs. The caller stops or
 * disposes it (`await using`).
 */
export async function startMachine(server: RunningServer, api: Api, home: string, o: MachineOptions): Promise<Machine> {
  const reg = await registerMachine(server, await registrationToken(api, "acme", o.group), home, o);
  const agent = startAgent(reg.config, join(home, o.workdir ?? "work"));
  try {
    await agent.saw(/waiting for jobs/);
  } catch (e) {
    await agent.stop("SIGKILL");
    throw e;
  }
  return Object.assign(agent, reg);
}

/** The server of a CI test file: an org `acme` with its owner, repositories, and the machines started through it. */
export interface CiServer {
  server: RunningServer;
  owner: Person;
  api: Api;
  /** Runner configs, workspaces (`work` or `work-<name>`) and marker files; removed on dispose. */
  home: string;
  /** `startMachine` on this server and home; the agent is killed on dispose. */
  machine(o: MachineOptions): Promise<Machine>;
  /** Kills the agents, stops the server, removes `home`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts the server (`env`: SVC_* settings, e.g. SVC_RUNNER_CLAIM_WAIT_MS for agents), makes the
 * org `acme` with an owner and creates `repos`. One per test file, in `beforeAll`.
 */
export async function startCiServer(o: { env?: Record<string, string>; dataDir?: string; repos?: readonly RepoSpec[] } = {}): Promise<CiServer> {
  const server = await startServer({ env: o.env, dataDir: o.dataDir });
  const home = runnerHome();
  const agents: Agent[] = [];
  try {
    const { owner, api } = await ownerOf(server);
    await createRepos(api, o.repos ?? []);
    return {
      server,
      owner,
      api,
      home: home.dir,
      async machine(m) {
        const agent = await startMachine(server, api, home.dir, m);
        agents.push(agent);
        return agent;
      },
      async [Symbol.asyncDispose]() {
        await Promise.all(agents.map((a) => a.stop("SIGKILL")));
        await server[Symbol.asyncDispose]();
        home.cleanup();
      },
    };
  } catch (e) {
    await server[Symbol.asyncDispose]();
    home.cleanup();
    throw e;
  }
}

/** Registers a machine with a raw `POST /v1/runners/register` (no agent: the test claims for it). */
export async function registerRaw(
  server: RunningServer,
  api: Api,
  name: string,
  labels: string[] = [],
  group?: string,
): Promise<{ id: string; credential: string }> {
  const token = await registrationToken(api, "acme", group);
  const r = await client(server, { token }).post("/v1/runners/register", { name, os: "linux", arch: "x64", labels });
  expect(r.status).toBe(201);
  return { id: r.body.runner_id, credential: r.body.credential };
}

/** One claim of a machine (`POST /v1/runners/claim` with its credential): 200 with a job, or 204 after the wait. */
export function claimJob(server: RunningServer, credential: string) {
  return client(server, { token: credential }).post("/v1/runners/claim");
}

/** Commits `yaml` as `.svc/workflows/<file>` (a push event); answers the commit. */
export function pushWorkflow(api: Api, repo: string, yaml: string, file = "ci.yml", branch = "main"): Promise<string> {
  return commitFiles(api, repo, { [`.svc/workflows/${file}`]: yaml }, branch);
}

/** The run of `commit` in `repo`, if there is one yet (the newest of them). */
export async function runOf(api: Api, repo: string, commit: string, org = "acme"): Promise<any> {
  return (await runsOf(api, repo, org)).find((r) => r.commit === commit);
}

/** Waits until the run of `commit` exists and `ready(run)` holds (by default, that it exists); answers it. */
export function waitForRun(api: Api, repo: string, commit: string, what: string, ready: (run: any) => boolean = () => true, ms = 30_000): Promise<any> {
  return until(
    what,
    async () => {
      const run = await runOf(api, repo, commit);
      return run && ready(run) ? run : null;
    },
    ms,
  );
}

/** Waits until the run `id` (as `GET …/runs/{id}` answers it: its latest attempt) satisfies `ready` (by default, that it finished); answers it. */
export function waitForRunById(
  api: Api,
  repo: string,
  id: string,
  what: string,
  ready: (run: any) => boolean = isFinished,
  ms = 30_000,
  org = "acme",
): Promise<any> {
  return until(
    what,
    async () => {
      const run = (await api.get(`/v1/orgs/${org}/repos/${repo}/runs/${id}`)).body;
      return ready(run) ? run : null;
    },
    ms,
  );
}

/** A run's jobs by `name` (default) or by `key`. */
export function jobsBy(run: { jobs: any[] }, field: "name" | "key" = "name"): Record<string, any> {
  return Object.fromEntries(run.jobs.map((j) => [j[field], j]));
}
