// Drives the real `git` CLI against a running server, with a controlled environment: a temp HOME
// with a minimal .gitconfig, no system config, no prompts, no askpass, English messages. Every
// process is spawned asynchronously (never spawnSync: the S3 server the svc child talks to may
// share our event loop). Also: pkt-line codecs and hand-made receive-pack requests for the
// bad-input tests, and fast-import streams to make long histories in one process.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, createUser, login, type RunningServer } from "./server.ts";

/** Exit code and captured output of one git process. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of one git invocation. */
export interface GitRunOptions {
  /** Working directory; defaults to the sandbox root (never the project checkout). */
  cwd?: string;
  /** Bytes or text fed to stdin. */
  input?: string | Uint8Array;
  /** Extra environment (GIT_TRACE_PACKET and the like). */
  env?: Record<string, string>;
}

const GITCONFIG = `[user]
	name = Svc Test
	email = test@example.com
[init]
	defaultBranch = main
[advice]
	detachedHead = false
	skippedCherryPicks = false
[gc]
	auto = 0
[maintenance]
	auto = false
[commit]
	gpgSign = false
[tag]
	gpgSign = false
[fetch]
	fsckObjects = true
[protocol]
	version = 2
[safe]
	directory = *
`;

/** A throwaway HOME and workspace for git; remove with dispose. */
export interface GitSandbox {
  root: string;
  env: Record<string, string>;
  /** A fresh, not yet existing path under the sandbox root. */
  path(name: string): string;
  /** Runs git; never throws on a non-zero exit. */
  run(args: string[], opts?: GitRunOptions): Promise<GitResult>;
  /** Runs git; throws (with the command and stderr) on a non-zero exit; returns trimmed stdout. */
  ok(args: string[], opts?: GitRunOptions): Promise<string>;
  /** Runs git and returns raw stdout bytes; throws on a non-zero exit. */
  bytes(args: string[], opts?: GitRunOptions): Promise<Uint8Array>;
  [Symbol.dispose](): void;
}

let counter = 0;

/** Creates a sandbox: temp root, HOME with .gitconfig, and a git environment without leaks from ours. */
export function gitSandbox(prefix = "svc-git-"): GitSandbox {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const home = join(root, "home");
  mkdirSync(join(home, ".config"), { recursive: true });
  writeFileSync(join(home, ".gitconfig"), GITCONFIG);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("GIT_") || k.startsWith("SVC_") || k === "SSH_ASKPASS" || k.startsWith("LC_")) continue;
    env[k] = v;
  }
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CEILING_DIRECTORIES: root,
    LC_ALL: "C",
    LANG: "C",
  });
  const spawn = async (args: string[], opts: GitRunOptions = {}) => {
    const input = opts.input === undefined ? undefined : typeof opts.input === "string" ? new TextEncoder().encode(opts.input) : opts.input;
    const proc = Bun.spawn(["git", ...args], {
      cwd: opts.cwd ?? root,
      env: { ...env, ...opts.env },
      stdin: input ?? "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  };
  const fail = (args: string[], r: { code: number; stderr: string }, opts: GitRunOptions) =>
    new Error(`git ${args.join(" ")} (in ${opts.cwd ?? root}) exited ${r.code}:\n${r.stderr}`);
  return {
    root,
    env,
    path: (name: string) => join(root, `${name}-${++counter}`),
    async run(args, opts = {}) {
      const r = await spawn(args, opts);
      return { code: r.code, stdout: new TextDecoder().decode(r.stdout), stderr: r.stderr };
    },
    async ok(args, opts = {}) {
      const r = await spawn(args, opts);
      if (r.code !== 0) throw fail(args, r, opts);
      return new TextDecoder().decode(r.stdout).trim();
    },
    async bytes(args, opts = {}) {
      const r = await spawn(args, opts);
      if (r.code !== 0) throw fail(args, r, opts);
      return r.stdout;
    },
    [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Where a Basic credential goes: the token as user (password empty) or as password. */
export type TokenField = "user" | "password";

/**
 * `http://[cred@]host/org/repo.git`. The token goes in the user field as `token:@` (an empty
 * password, so git has a full credential and never prompts) or in the password field as
 * `x-token:token@`.
 */
export function repoUrl(server: { url: string }, org: string, repo: string, token?: string, field: TokenField = "password"): string {
  const u = new URL(server.url);
  const cred = !token ? "" : field === "user" ? `${encodeURIComponent(token)}:@` : `x-token:${encodeURIComponent(token)}@`;
  return `${u.protocol}//${cred}${u.host}/${org}/${repo}.git`;
}

/** Basic authorization header values for fetch, token in either field. */
export function basicAuth(token: string, field: TokenField = "password"): string {
  return `Basic ${Buffer.from(field === "user" ? `${token}:` : `x-token:${token}`).toString("base64")}`;
}

/** Every ref of a local repository: `{ "refs/heads/main": oid, … }` (HEAD excluded). */
export async function localRefs(g: GitSandbox, dir: string): Promise<Record<string, string>> {
  const out = await g.ok(["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: dir });
  return parseRefLines(out);
}

/** The server's refs as `git ls-remote` prints them (peeled `^{}` lines and HEAD left out). */
export async function lsRemote(g: GitSandbox, url: string): Promise<Record<string, string>> {
  const out = await g.ok(["ls-remote", url]);
  const all = parseRefLines(
    out
      .split("\n")
      .map((l) => l.split("\t").reverse().join(" "))
      .join("\n"),
  );
  for (const k of Object.keys(all)) if (k === "HEAD" || k.endsWith("^{}")) delete all[k];
  return all;
}

function parseRefLines(text: string): Record<string, string> {
  const refs: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const [name, oid] = line.trim().split(" ");
    if (name && oid) refs[name] = oid;
  }
  return refs;
}

/** Clones `url` into a new sandbox dir (extra args before the URL) and returns the dir; throws on failure. */
export async function clone(g: GitSandbox, url: string, args: string[] = [], opts: GitRunOptions = {}): Promise<string> {
  const dir = g.path("clone");
  await g.ok(["clone", ...args, url, dir], opts);
  return dir;
}

/** `git fsck --full` in `dir`; returns the result (callers expect code 0). */
export async function fsck(g: GitSandbox, dir: string): Promise<GitResult> {
  return g.run(["fsck", "--full", "--strict", "--no-progress"], { cwd: dir });
}

/** A fast-import stream of `count` commits on `ref`, each changing one of a handful of files. */
export function fastImportStream(o: { ref: string; count: number; from?: string; start?: number; step?: number; label?: string; files?: number }): string {
  const start = o.start ?? 1_600_000_000;
  const step = o.step ?? 60;
  const label = o.label ?? o.ref.replace(/^refs\/\w+\//, "");
  const files = o.files ?? 16;
  const parts: string[] = [];
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  for (let i = 0; i < o.count; i++) {
    parts.push(`commit ${o.ref}\n`);
    parts.push(`committer Svc Test <test@example.com> ${start + i * step} +0000\n`);
    parts.push(data(`${label} ${i}\n`));
    if (i === 0 && o.from) parts.push(`from ${o.from}\n`);
    parts.push(`M 644 inline dir${i % 4}/file${i % files}.txt\n`);
    parts.push(data(`${label} commit ${i}\n${"line\n".repeat(i % 7)}`));
  }
  parts.push("done\n");
  return parts.join("");
}

/** Runs `git fast-import` of `fastImportStream(o)` in `dir` (a repository); returns the new tip of `o.ref`. */
export async function importHistory(g: GitSandbox, dir: string, o: Parameters<typeof fastImportStream>[0]): Promise<string> {
  await g.ok(["fast-import", "--quiet", "--done"], { cwd: dir, input: fastImportStream(o) });
  return g.ok(["rev-parse", o.ref], { cwd: dir });
}

/** `git init` of a new local repository in the sandbox; returns its path. */
export async function initRepo(g: GitSandbox, name = "work"): Promise<string> {
  const dir = g.path(name);
  await g.ok(["init", "-q", dir]);
  return dir;
}

/** Writes `files` into the work tree of `dir`, stages everything and commits; returns the new HEAD. */
export async function commitFiles(g: GitSandbox, dir: string, files: Record<string, string | Uint8Array>, message = "change"): Promise<string> {
  for (const [name, content] of Object.entries(files)) {
    const p = join(dir, name);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, content);
  }
  await g.ok(["add", "-A"], { cwd: dir });
  await g.ok(["commit", "-q", "-m", message], { cwd: dir });
  return g.ok(["rev-parse", "HEAD"], { cwd: dir });
}

// ---------------------------------------------------------------------------------------------
// Accounts and repositories through the control plane.

/** An org with an owner: session cookie and a repo:write personal token. */
export interface OrgOwner {
  org: string;
  email: string;
  cookie: string;
  token: string;
}

/** Creates the org (via `svc user-create`), signs the owner in and mints a repo:write token. */
export async function setupOwner(server: RunningServer, org: string, role = "owner"): Promise<OrgOwner> {
  const email = `${role}-${org}-${++counter}@example.com`;
  const u = await createUser(server, { org, email, role });
  const cookie = await login(server, email, u.password);
  const { token } = await mintTokenWithId(server, cookie, org, { scopes: [role === "viewer" ? "repo:read" : "repo:write"], label: `git-${counter}` });
  return { org, email, cookie, token };
}

/** Mints a token and returns both its secret and id (for revocation). */
export async function mintTokenWithId(
  server: RunningServer,
  cookie: string,
  org: string,
  body: Record<string, unknown>,
): Promise<{ id: string; token: string }> {
  const r = await client(server, { cookie }).post(`/v1/orgs/${org}/tokens`, body);
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.id, token: r.body.token };
}

/** Revokes a token with the owner's session. */
export async function revokeToken(server: RunningServer, cookie: string, org: string, id: string): Promise<void> {
  const r = await client(server, { cookie }).delete(`/v1/orgs/${org}/tokens/${id}`, { origin: server.url });
  if (r.status !== 204) throw new Error(`revoke failed: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Creates a repository through the API (private unless `isPublic`). */
export async function createRepo(server: RunningServer, owner: OrgOwner, name: string, isPublic = false): Promise<void> {
  const r = await client(server, { token: owner.token }).post(`/v1/orgs/${owner.org}/repos`, { name, public: isPublic });
  if (r.status !== 201) throw new Error(`repo create failed: ${r.status} ${JSON.stringify(r.body)}`);
}

// ---------------------------------------------------------------------------------------------
// pkt-line and hand-made receive-pack requests.

/** One pkt-line: four hex digits of length (including themselves) then the payload. */
export function pkt(payload: string | Uint8Array): Uint8Array {
  const body = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, "0")), body]);
}

export const FLUSH = new TextEncoder().encode("0000");

/** Splits a pkt-line stream; flush is `null`. Stops (without throwing) at a truncated or bad length. */
export function parsePkts(bytes: Uint8Array): (string | null)[] {
  const out: (string | null)[] = [];
  let i = 0;
  const text = new TextDecoder();
  while (i + 4 <= bytes.length) {
    const len = parseInt(text.decode(bytes.subarray(i, i + 4)), 16);
    if (Number.isNaN(len)) break;
    if (len === 0 || len === 1 || len === 2) {
      out.push(null);
      i += 4;
      continue;
    }
    if (len < 4 || i + len > bytes.length) break;
    out.push(text.decode(bytes.subarray(i + 4, i + len)));
    i += len;
  }
  return out;
}

/** One ref update in a receive-pack request. */
export interface RefCommand {
  old: string;
  new: string;
  ref: string;
}

export const ZERO_OID = "0".repeat(40);

/** A receive-pack request body: commands (capabilities on the first), flush, then the pack if given. */
export function receivePackBody(commands: RefCommand[], caps: string[], pack?: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = commands.map((c, i) => pkt(`${c.old} ${c.new} ${c.ref}${i === 0 ? `\0${caps.join(" ")}` : ""}\n`));
  parts.push(FLUSH);
  if (pack) parts.push(pack);
  return Buffer.concat(parts);
}

/** An empty pack (version 2, zero objects) with its trailing SHA-1. */
export function emptyPack(): Uint8Array {
  const head = Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]);
  const sum = new Bun.CryptoHasher("sha1").update(head).digest();
  return Buffer.concat([head, sum]);
}

/** The parsed report-status of a receive-pack response (no side-band). */
export interface PushReport {
  status: number;
  contentType: string | null;
  raw: string;
  unpack: string | null;
  refs: Record<string, string>;
}

/** POSTs a hand-made body to git-receive-pack and parses the report-status lines. */
export async function postReceivePack(
  server: RunningServer,
  org: string,
  repo: string,
  body: Uint8Array,
  auth?: string,
  headers: Record<string, string> = {},
): Promise<PushReport> {
  const h: Record<string, string> = { "content-type": "application/x-git-receive-pack-request", ...headers };
  if (auth) h.authorization = auth;
  const res = await fetch(`${server.url}/${org}/${repo}.git/git-receive-pack`, { method: "POST", headers: h, body: body as Uint8Array<ArrayBuffer> });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const lines = parsePkts(bytes)
    .filter((l): l is string => l !== null)
    .map((l) => l.replace(/\n$/, ""));
  let unpack: string | null = null;
  const refs: Record<string, string> = {};
  for (const line of lines) {
    if (line.startsWith("unpack ")) unpack = line.slice(7);
    else if (line.startsWith("ok ")) refs[line.slice(3)] = "ok";
    else if (line.startsWith("ng ")) {
      const rest = line.slice(3);
      const sp = rest.indexOf(" ");
      refs[sp < 0 ? rest : rest.slice(0, sp)] = sp < 0 ? "ng" : `ng ${rest.slice(sp + 1)}`;
    }
  }
  return { status: res.status, contentType: res.headers.get("content-type"), raw: new TextDecoder().decode(bytes), unpack, refs };
}

/** Builds a pack with `git pack-objects --revs --stdout` from rev lines (`<tip>`, `^<base>`). */
export async function packRevs(g: GitSandbox, dir: string, revs: string[]): Promise<Uint8Array> {
  return g.bytes(["pack-objects", "--revs", "--stdout", "-q"], { cwd: dir, input: `${revs.join("\n")}\n` });
}

/** Builds a pack of exactly the listed object ids. */
export async function packObjects(g: GitSandbox, dir: string, oids: string[]): Promise<Uint8Array> {
  return g.bytes(["pack-objects", "--stdout", "-q"], { cwd: dir, input: `${oids.join("\n")}\n` });
}
