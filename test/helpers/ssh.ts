// Drives the SSH front door with the real OpenSSH client: a server launcher with SSH on, key generation with ssh-keygen in temp dirs, `ssh git@host [command]`,
// and the GIT_SSH_COMMAND that points git at one key. Every process is spawned asynchronously.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, createUser, login, startServer, type RunningServer } from "./server.ts";

/** Exit code and captured output of one process. */
export interface ProcResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command asynchronously; never throws on a non-zero exit. */
export async function run(cmd: string[], opts: { env?: Record<string, string>; input?: string | Uint8Array; cwd?: string } = {}): Promise<ProcResult> {
  const input = opts.input === undefined ? undefined : typeof opts.input === "string" ? new TextEncoder().encode(opts.input) : opts.input;
  const p = Bun.spawn(cmd, {
    env: opts.env ?? (process.env as Record<string, string>),
    cwd: opts.cwd,
    stdin: input ?? "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

// ---------------------------------------------------------------------------------------------
// The server, with its host key lines.

/** A server started with SSH on, with its SSH address split into host and port. */
export interface SshRunningServer extends RunningServer {
  sshHost: string;
  sshPort: number;
}

/** Starts `svc serve` with SSH on 127.0.0.1:0 (unless `env` says otherwise). */
export async function startSshServer(opts: { env?: Record<string, string>; dataDir?: string } = {}): Promise<SshRunningServer> {
  const server = await startServer({ dataDir: opts.dataDir, env: { SVC_SSH_ADDR: "127.0.0.1:0", ...opts.env } });
  const colon = server.ssh ? server.ssh.lastIndexOf(":") : -1;
  return Object.assign(server, {
    sshHost: server.ssh ? server.ssh.slice(0, colon) : "",
    sshPort: server.ssh ? Number(server.ssh.slice(colon + 1)) : 0,
  });
}

// ---------------------------------------------------------------------------------------------
// Keys.

/** A key pair made by ssh-keygen: private key path, public key line, `ssh-keygen -lf` fingerprint. */
export interface SshKey {
  name: string;
  path: string;
  publicKey: string;
  fingerprint: string;
}

/** The OpenSSH client environment: temp HOME, no agent, English messages. */
export interface SshWorkspace {
  root: string;
  env: Record<string, string>;
  /** `ssh-keygen -q -N '' -t TYPE [-b BITS] -f <root>/<name>`; fingerprint from `ssh-keygen -lf`. */
  keygen(name: string, type: string, bits?: number): Promise<SshKey>;
  [Symbol.dispose](): void;
}

/** Creates a temp dir for keys and a HOME for ssh. */
export function sshWorkspace(prefix = "svc-ssh-"): SshWorkspace {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("SSH_") || k.startsWith("GIT_") || k.startsWith("SVC_") || k.startsWith("LC_")) continue;
    env[k] = v;
  }
  Object.assign(env, { HOME: root, LC_ALL: "C", LANG: "C" });
  return {
    root,
    env,
    async keygen(name, type, bits) {
      const path = join(root, name);
      const args = ["ssh-keygen", "-q", "-N", "", "-t", type, ...(bits ? ["-b", String(bits)] : []), "-C", `${name}@svc-test`, "-f", path];
      const made = await run(args, { env });
      if (made.code !== 0) throw new Error(`${args.join(" ")} exited ${made.code}: ${made.stderr}`);
      return { name, path, publicKey: (await Bun.file(`${path}.pub`).text()).trim(), fingerprint: await keygenFingerprint(`${path}.pub`, env) };
    },
    [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** The second field of `ssh-keygen -lf FILE`: `SHA256:…`. */
export async function keygenFingerprint(file: string, env?: Record<string, string>): Promise<string> {
  const r = await run(["ssh-keygen", "-lf", file], { env });
  if (r.code !== 0) throw new Error(`ssh-keygen -lf ${file} exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim().split(/\s+/)[1]!;
}

// ---------------------------------------------------------------------------------------------
// The client side.

/** ssh options shared by every client call: one key, no host key pinning, no prompts, no system config. */
export function sshOptions(key: SshKey): string[] {
  return [
    "-F",
    "/dev/null",
    "-i",
    key.path,
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "IdentityAgent=none",
    "-o",
    "BatchMode=yes",
    "-o",
    "StrictHostKeyChecking=no",
    "-o",
    "UserKnownHostsFile=/dev/null",
    "-o",
    "LogLevel=ERROR",
  ];
}

/** GIT_SSH_COMMAND for `key` (and `-p port`, for scp-like addresses that cannot carry one). */
export function gitSshEnv(key: SshKey, port?: number): Record<string, string> {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
  const args = ["ssh", ...sshOptions(key), ...(port ? ["-p", String(port)] : [])];
  return { GIT_SSH_COMMAND: args.map(quote).join(" ") };
}

/** `ssh://git@host:port/org/repo.git`, or the `/org/repo` form when `dotGit` is false. */
export function sshUrl(server: SshRunningServer, org: string, repo: string, dotGit = true): string {
  return `ssh://git@${server.ssh}/${org}/${repo}${dotGit ? ".git" : ""}`;
}

/** `git@host:org/repo.git`: git sends the path without a leading slash (port via gitSshEnv). */
export function scpUrl(server: SshRunningServer, org: string, repo: string): string {
  return `git@${server.sshHost}:${org}/${repo}.git`;
}

/**
 * `ssh -p PORT git@host [command]` with `key`; stdin is `input` or empty. `options` go first, so
 * they win over the defaults (ssh keeps the first value it sees for an option).
 */
export async function sshExec(
  ws: SshWorkspace,
  server: SshRunningServer,
  key: SshKey,
  command?: string,
  opts: { input?: string | Uint8Array; options?: string[] } = {},
): Promise<ProcResult> {
  const args = ["ssh", ...(opts.options ?? []), ...sshOptions(key), "-p", String(server.sshPort), `git@${server.sshHost}`];
  if (command !== undefined) args.push(command);
  return run(args, { env: ws.env, input: opts.input ?? "" });
}

// ---------------------------------------------------------------------------------------------
// The keys API.

/** Credentials for the JSON client: a cookie (sent with our Origin) or a bearer token. */
export type Caller = { cookie: string } | { token: string } | undefined;

/** A JSON client for `who`; cookie callers send our Origin so unsafe methods pass the CSRF check. */
export function as(server: RunningServer, who: Caller) {
  const c = client(server, who);
  const h = (): Record<string, string> => (who && "cookie" in who ? { origin: server.url } : {});
  return {
    get: (p: string) => c.get(p, h()),
    post: (p: string, b?: unknown) => c.post(p, b, h()),
    put: (p: string, b?: unknown) => c.put(p, b, h()),
    delete: (p: string) => c.delete(p, h()),
  };
}

/** POST /v1/orgs/{org}/ssh-keys; returns status and body (callers assert). */
export function postKey(server: RunningServer, who: Caller, org: string, body: Record<string, unknown>) {
  return as(server, who).post(`/v1/orgs/${org}/ssh-keys`, body);
}

/** Registers a key and throws unless the answer is 201; returns the key record. */
export async function registerKey(
  server: RunningServer,
  who: Caller,
  org: string,
  key: SshKey,
  tokenId?: string,
): Promise<{ id: string; kind: string; label: string; fingerprint: string; token_id: string | null; created_at: number }> {
  const r = await postKey(server, who, org, { public_key: key.publicKey, label: key.name, ...(tokenId ? { token_id: tokenId } : {}) });
  if (r.status !== 201) throw new Error(`register ${key.name} in ${org} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

// ---------------------------------------------------------------------------------------------
// People and repositories through the control plane.

/** A confirmed person with a session: id, handle, email, cookie. */
export interface SshPerson {
  id: string;
  handle: string;
  email: string;
  cookie: string;
}

/** Creates a person in `org` with `role` (`svc user-create`) and signs them in. */
export async function sshPerson(server: RunningServer, org: string, email: string, role: string): Promise<SshPerson> {
  const u = await createUser(server, { org, email, role });
  return { id: u.id, handle: u.handle, email: u.email, cookie: await login(server, u.email, u.password) };
}

/** Creates a repository with `who`'s session; throws unless 201; returns the repo body. */
export async function makeRepo(server: RunningServer, who: { cookie: string }, org: string, name: string, isPublic = false): Promise<any> {
  const r = await as(server, who).post(`/v1/orgs/${org}/repos`, { name, public: isPublic });
  if (r.status !== 201) throw new Error(`repo create ${org}/${name} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
