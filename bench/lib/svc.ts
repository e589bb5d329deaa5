// The real svc server for benchmarks: `bun src/main.ts serve` on port 0 with a temp data dir,
// plus a bootstrap (user/org via the CLI, sign-in, token, repository) through the public API.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanEnv, run, spawnServer, type Child } from "./proc.ts";

export interface SvcServer extends Child {
  dataDir: string;
  env: Record<string, string>;
  /** The checkout it runs (ROOT when absent). */
  root?: string;
}

/**
 * Starts svc on a fresh data dir under `dir`; `env` adds SVC_* settings (e.g. SVC_LOG);
 * `bunArgs` go before the script (e.g. --cpu-prof); `root` is the checkout to run (another one
 * to compare with, e.g. an older commit unpacked with `git archive`).
 */
export async function startSvc(dir: string, env: Record<string, string> = {}, bunArgs: string[] = [], root = ROOT): Promise<SvcServer> {
  const dataDir = join(dir, "data");
  mkdirSync(dataDir, { recursive: true });
  const svcEnv = { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", ...env };
  const child = await spawnServer([BUN, ...bunArgs, join(root, "src/main.ts"), "serve"], {
    env: { ...cleanEnv(), ...svcEnv },
    stderrFile: join(dir, "stderr.log"),
  });
  return { ...child, dataDir, env: svcEnv, root };
}

export interface Fixture {
  org: string;
  repo: string;
  token: string;
  /** Path of the benchmarked request. */
  path: string;
}

async function call(url: string, init: RequestInit & { expect: number }): Promise<Response> {
  const res = await fetch(url, init);
  if (res.status !== init.expect) throw new Error(`${init.method ?? "GET"} ${url}: expected ${init.expect}, got ${res.status} ${await res.text()}`);
  return res;
}

/** Creates the owner, signs in, mints a bearer token and creates the repository. */
export async function bootstrap(s: SvcServer, f: { org: string; repo: string }): Promise<Fixture> {
  const email = "bench@example.com";
  const password = "correct horse battery staple";
  const created = await run(
    [
      BUN,
      join(s.root ?? ROOT, "src/main.ts"),
      "user-create",
      "--org",
      f.org,
      "--email",
      email,
      "--name",
      "Bench",
      "--handle",
      "bencher",
      "--password",
      password,
      "--role",
      "owner",
    ],
    {
      ...cleanEnv(),
      ...s.env,
    },
  );
  if (created.code !== 0) throw new Error(`user-create failed: ${created.stderr}`);
  const json = { "content-type": "application/json" };
  const login = await call(`${s.url}/v1/auth/login`, { method: "POST", headers: json, body: JSON.stringify({ email, password }), expect: 200 });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const minted = await call(`${s.url}/v1/orgs/${f.org}/tokens`, {
    method: "POST",
    headers: { ...json, cookie },
    body: JSON.stringify({ scopes: ["repo:read", "repo:write"], label: "bench" }),
    expect: 201,
  });
  const token = ((await minted.json()) as { token: string }).token;
  const auth = { authorization: `Bearer ${token}` };
  await call(`${s.url}/v1/orgs/${f.org}/repos`, { method: "POST", headers: { ...json, ...auth }, body: JSON.stringify({ name: f.repo }), expect: 201 });
  const path = `/v1/orgs/${f.org}/repos/${f.repo}`;
  const got = await call(`${s.url}${path}`, { headers: auth, expect: 200 });
  const body = (await got.json()) as { name?: string };
  if (body.name !== f.repo) throw new Error(`GET ${path} returned an unexpected body: ${JSON.stringify(body)}`);
  return { ...f, token, path };
}

/**
 * Registers a runner agent of this checkout with `labels` (a registration token minted by the
 * bootstrap's owner, signed in with a session) and starts `svc runner run`; its config and work
 * folders go under `dir`. Kill the answered process when done.
 */
export async function startAgent(s: SvcServer, dir: string, name: string, labels: string): Promise<ReturnType<typeof Bun.spawn>> {
  const json = { "content-type": "application/json" };
  const login = await call(`${s.url}/v1/auth/login`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
    expect: 200,
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const org = "acme";
  const minted = await call(`${s.url}/v1/orgs/${org}/runners/registration-token`, { method: "POST", headers: { ...json, cookie }, body: "{}", expect: 201 });
  const token = ((await minted.json()) as { token: string }).token;
  const config = join(dir, `${name}.json`);
  const reg = await run(
    [BUN, join(ROOT, "src/main.ts"), "runner", "register", "--url", s.url, "--token", token, "--name", name, "--config", config, "--labels", labels],
    cleanEnv(),
  );
  if (reg.code !== 0) throw new Error(`runner register: ${reg.stderr}`);
  return Bun.spawn([BUN, join(ROOT, "src/main.ts"), "runner", "run", "--config", config, "--workdir", join(dir, `${name}-work`)], {
    env: cleanEnv(),
    stdout: "ignore",
    stderr: "ignore",
  });
}
