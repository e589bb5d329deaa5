// Starts svc for the git benchmarks (`bun src/main.ts serve` on port 0 with its own data dir)
// and bootstraps an owner, a token and repositories through the CLI and the public API.
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
const BUN = process.execPath;

export interface SvcServer {
  url: string;
  /** `host:port` of the SSH listener, when SVC_SSH_ADDR was set. */
  ssh: string | null;
  pid: number;
  dataDir: string;
  env: Record<string, string>;
  proc: ReturnType<typeof Bun.spawn>;
  /** Server stderr (JSON log lines) captured so far. */
  logs(): string;
  cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  stop(): Promise<number>;
}

/** The parent environment without SVC_* (svc rejects unknown SVC_ variables). */
function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SVC_") && v !== undefined) out[k] = v;
  return out;
}

export async function runSvc(args: string[], env: Record<string, string>, root = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([BUN, join(root, "src/main.ts"), ...args], { cwd: root, env: { ...baseEnv(), ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/**
 * Starts `bun [bunFlags] src/main.ts serve` (from `root`: another checkout, for side-by-side runs). `bunFlags` can carry `--cpu-prof`,
 * `--cpu-prof-dir=…`, `--cpu-prof-md` for profiling (written when the server exits).
 */
export async function startSvc(opts: { dataDir: string; log?: string; bunFlags?: string[]; env?: Record<string, string>; root?: string }): Promise<SvcServer> {
  const root = opts.root ?? ROOT;
  const env: Record<string, string> = { SVC_DATA_DIR: opts.dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: opts.log ?? "info", ...opts.env };
  const proc = Bun.spawn([BUN, ...(opts.bunFlags ?? []), join(root, "src/main.ts"), "serve"], {
    cwd: root,
    env: { ...baseEnv(), ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let errText = "";
  (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      errText += dec.decode(chunk);
      if (errText.length > 64 << 20) errText = errText.slice(-(32 << 20));
    }
  })();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  let url: string | null = null;
  let ssh: string | null = null;
  const deadline = Date.now() + 60000;
  while (url === null) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`svc exited before listening: ${errText.slice(-4000)}`);
    out += new TextDecoder().decode(value);
    const m = /listening http=(\S+) ssh=(\S+)/.exec(out);
    url = m?.[1] ?? null;
    ssh = m && m[2] !== "off" ? m[2]! : null;
  }
  // keep draining stdout so the server never blocks on a full pipe
  (async () => {
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
  })();
  let stopped: Promise<number> | null = null;
  return {
    url,
    ssh,
    pid: proc.pid,
    dataDir: opts.dataDir,
    env,
    proc,
    logs: () => errText,
    cli: (args) => runSvc(args, env, root),
    stop() {
      stopped ??= (async () => {
        proc.kill("SIGTERM");
        const t = setTimeout(() => proc.kill("SIGKILL"), 30000);
        const code = await proc.exited;
        clearTimeout(t);
        return code;
      })();
      return stopped;
    },
  };
}

async function api(
  url: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(url + path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = text;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, json, headers: res.headers };
}

export interface SvcAccount {
  org: string;
  token: string;
  cookie: string;
}

/** Creates an owner (CLI), signs in, mints a repo:read+repo:write token. */
export async function bootstrap(svc: SvcServer, org = "bench"): Promise<SvcAccount> {
  const email = "bench@example.com";
  const password = "correct horse battery staple";
  const r = await svc.cli(["user-create", "--org", org, "--email", email, "--name", "Bench", "--password", password, "--role", "owner"]);
  if (r.code !== 0) throw new Error(`user-create failed: ${r.stderr}`);
  const login = await api(svc.url, "POST", "/v1/auth/login", { email, password }, {});
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.json)}`);
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const mint = await api(
    svc.url,
    "POST",
    `/v1/orgs/${org}/tokens`,
    { scopes: ["repo:read", "repo:write", "org:read", "org:admin"], label: "bench" },
    { cookie },
  );
  if (mint.status !== 201) throw new Error(`token mint failed: ${mint.status} ${JSON.stringify(mint.json)}`);
  return { org, token: mint.json.token, cookie };
}

export async function createRepo(svc: SvcServer, acct: SvcAccount, name: string, defaultBranch?: string): Promise<void> {
  const body = defaultBranch ? { name, default_branch: defaultBranch } : { name };
  const r = await api(svc.url, "POST", `/v1/orgs/${acct.org}/repos`, body, { authorization: `Bearer ${acct.token}` });
  if (r.status !== 201) throw new Error(`repo create failed: ${r.status} ${JSON.stringify(r.json)}`);
}

/** The git remote URL with the token as Basic password. */
export function gitUrl(svc: SvcServer, acct: SvcAccount, name: string): string {
  const u = new URL(svc.url);
  return `${u.protocol}//x:${acct.token}@${u.host}/${acct.org}/${name}.git`;
}
