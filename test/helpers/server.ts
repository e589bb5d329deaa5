// Starts the real server as a user would: `bun src/main.ts serve` on port 0 with a temp data
// dir, waiting for the `listening` line. Also runs CLI commands against the same data dir.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = process.execPath;

export interface RunningServer {
  url: string;
  ssh: string | null;
  /** Everything printed on stdout up to and including the listening line. */
  banner: string;
  /** The `ssh host key TYPE SHA256:…` lines printed at start (SSH on). */
  hostKeys: { type: string; fingerprint: string }[];
  dataDir: string;
  env: Record<string, string>;
  proc: ReturnType<typeof Bun.spawn>;
  stderr(): string;
  /** Runs `svc <args>` on the same data dir; resolves with exit code and output. */
  cli(args: string[], extraEnv?: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Runs `bun src/main.ts <args>` with the given environment. */
export async function runSvc(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([BUN, join(ROOT, "src/main.ts"), ...args], { env: { ...cleanEnv(), ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** The parent environment without any SVC_* variables (tests set their own). */
export function cleanEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SVC_") && v !== undefined) out[k] = v;
  return out;
}

/** Starts a server; `env` adds or overrides SVC_* settings. */
export async function startServer(opts: { env?: Record<string, string>; dataDir?: string } = {}): Promise<RunningServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "svc-test-"));
  // SVC_DRAIN_MS 0: a test's SIGTERM stops at once (the drain has its own test).
  const env: Record<string, string> = { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "warn", SVC_DRAIN_MS: "0", ...opts.env };
  const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "serve"], { env: { ...cleanEnv(), ...env }, stdout: "pipe", stderr: "pipe" });
  let errText = "";
  (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) errText += new TextDecoder().decode(chunk);
  })();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  let line: string | null = null;
  while (line === null) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited before listening: ${errText}`);
    out += new TextDecoder().decode(value);
    const m = /listening http=(\S+) ssh=(\S+)/.exec(out);
    if (m) line = m[0];
  }
  reader.releaseLock();
  const m = /listening http=(\S+) ssh=(\S+)/.exec(line)!;
  let stopped: Promise<number> | null = null;
  const server: RunningServer = {
    url: m[1]!,
    ssh: m[2] === "off" ? null : m[2]!,
    banner: out,
    hostKeys: [...out.matchAll(/^ssh host key (\S+) (\S+)$/gm)].map((k) => ({ type: k[1]!, fingerprint: k[2]! })),
    dataDir,
    env,
    proc,
    stderr: () => errText,
    cli: (args, extraEnv = {}) => runSvc(args, { ...env, ...extraEnv }),
    stop() {
      stopped ??= (async () => {
        proc.kill("SIGTERM");
        return await proc.exited;
      })();
      return stopped;
    },
    async [Symbol.asyncDispose]() {
      await server.stop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Creates a confirmed user through `svc user-create`; returns the printed JSON. */
export async function createUser(
  server: RunningServer,
  u: { org: string; email: string; name?: string; password?: string; role?: string; handle?: string },
): Promise<{ id: string; handle: string; email: string; password: string }> {
  const password = u.password ?? "correct horse battery staple";
  const args = [
    "user-create",
    "--org",
    u.org,
    "--email",
    u.email,
    "--name",
    u.name ?? u.email.split("@")[0]!,
    "--password",
    password,
    "--role",
    u.role ?? "owner",
  ];
  if (u.handle) args.push("--handle", u.handle);
  const r = await server.cli(args);
  if (r.code !== 0) throw new Error(`user-create failed: ${r.stderr}`);
  return { ...JSON.parse(r.stdout), password };
}

/** A response's text and its body: parsed JSON, the text itself when it is not JSON, null when empty. */
export async function readBody(res: Response): Promise<{ text: string; body: any }> {
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { text, body };
}

/** The `svc_session=…` pair of a response's Set-Cookie header, or null. */
export function sessionCookie(res: Response): string | null {
  const set = res.headers.get("set-cookie");
  return set?.startsWith("svc_session=") ? set.split(";")[0]! : null;
}

/** A small JSON client bound to a server and an optional credential. */
export function client(server: RunningServer, auth?: { token?: string; cookie?: string }) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { ...headers };
    if (auth?.token) h.authorization = `Bearer ${auth.token}`;
    if (auth?.cookie) h.cookie = auth.cookie;
    let payload: BodyInit | undefined;
    if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      h["content-type"] ??= "application/json";
    }
    const res = await fetch(server.url + path, { method, headers: h, body: payload });
    return { status: res.status, body: (await readBody(res)).body, headers: res.headers };
  };
  return {
    get: (p: string, h?: Record<string, string>) => call("GET", p, undefined, h),
    post: (p: string, b?: unknown, h?: Record<string, string>) => call("POST", p, b, h),
    put: (p: string, b?: unknown, h?: Record<string, string>) => call("PUT", p, b, h),
    patch: (p: string, b?: unknown, h?: Record<string, string>) => call("PATCH", p, b, h),
    delete: (p: string, h?: Record<string, string>) => call("DELETE", p, undefined, h),
    call,
  };
}

/** Signs in and returns the `svc_session=…` cookie pair. */
export async function login(server: RunningServer, email: string, password: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
  const set = res.headers.get("set-cookie")!;
  return set.split(";")[0]!;
}

/** Mints a token with a session cookie; returns the full token string. */
export async function mintToken(server: RunningServer, cookie: string, org: string, body: Record<string, unknown>): Promise<string> {
  const r = await client(server, { cookie }).post(`/v1/orgs/${org}/tokens`, body);
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.token;
}

/** A temp directory removed on dispose. */
export function tempDir(prefix = "svc-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * The running server's SQLite database, opened beside it by a test (to read, or to plant a state
 * no route makes). Why the busy timeout: the server's background work (sweeps, evictions, GC
 * passes) may hold the write lock at that moment; a write must wait for it, not fail with
 * "database is locked".
 */
export function serverDb(server: RunningServer, opts: { readonly?: boolean } = {}): Database {
  const db = new Database(join(server.dataDir, "svc.db"), opts.readonly ? { readonly: true } : undefined);
  db.run("PRAGMA busy_timeout = 30000");
  return db;
}
