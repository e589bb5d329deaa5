// Child processes for benchmarks: start a server, wait for its `listening http=<url>` line,
// keep its stderr out of the way (to a file, so it never blocks), stop it.
import { closeSync, openSync, readFileSync } from "node:fs";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = process.execPath;

export interface Child {
  url: string;
  pid: number;
  proc: ReturnType<typeof Bun.spawn>;
  /** The last `n` characters the child wrote on stderr. */
  stderrTail(n?: number): string;
  stop(): Promise<number>;
}

/** The parent environment without any SVC_* variables. */
export function cleanEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SVC_") && v !== undefined) out[k] = v;
  return out;
}

/**
 * Spawns `cmd` and resolves once it prints `listening http=<url>` on stdout.
 * stderr goes to `stderrFile` (the svc access log is one JSON line per request; a file drains
 * it without the benchmark process spending CPU reading it).
 */
export async function spawnServer(cmd: string[], opts: { env: Record<string, string>; stderrFile: string; timeoutMs?: number }): Promise<Child> {
  const fd = openSync(opts.stderrFile, "w");
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: opts.env, stdout: "pipe", stderr: fd, stdin: "ignore" });
  closeSync(fd);
  const tail = (n = 2000) => {
    try {
      const s = readFileSync(opts.stderrFile, "utf8");
      return s.slice(-n);
    } catch {
      return "";
    }
  };
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  let out = "";
  let url: string | null = null;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  while (url === null) {
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`${cmd.join(" ")}: no listening line within ${opts.timeoutMs ?? 30_000} ms\n${tail()}`);
    }
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd.join(" ")} exited before listening (code ${await proc.exited})\n${tail()}`);
    out += new TextDecoder().decode(value);
    const m = /listening http=(\S+)/.exec(out);
    if (m) url = m[1]!;
  }
  // Keep draining stdout so the child never blocks on it.
  void (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // child gone
    }
  })();
  let stopped: Promise<number> | null = null;
  // Why: a server killed from outside (another process, OOM) should be named, not surface
  // later as a bare "connection refused" from the load generator.
  void proc.exited.then((code) => {
    if (!stopped)
      process.stderr.write(`[bench] ${cmd.slice(1).join(" ")} (pid ${proc.pid}) exited unexpectedly: code ${code}, signal ${proc.signalCode ?? "none"}\n`);
  });
  return {
    url,
    pid: proc.pid,
    proc,
    stderrTail: tail,
    stop() {
      stopped ??= (async () => {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        const code = await proc.exited;
        clearTimeout(timer);
        return code;
      })();
      return stopped;
    },
  };
}

/** Runs a command to completion, capturing output. */
export async function run(cmd: string[], env?: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn(cmd, { cwd: ROOT, env: env ?? cleanEnv(), stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}
