// Load generators: wrk (preferred) or, when wrk is missing, a closed-loop Bun fetch generator
// in its own process (bench/lib/fetch-load.ts). Both report the same LoadResult.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, cleanEnv } from "./proc.ts";

export interface LoadOptions {
  url: string;
  connections: number;
  /** wrk threads (the fetch generator is one process, one thread). */
  threads: number;
  /** Run for this long (seconds)... */
  durationS: number;
  /** ...or stop after this many completed requests (durationS is then an upper bound). */
  maxRequests?: number;
  headers: Record<string, string>;
  /** Scratch directory (wrk's Lua script for count-limited runs lives here). */
  tmpDir: string;
}

export interface LoadResult {
  tool: "wrk" | "fetch";
  command: string;
  requests: number;
  duration_s: number;
  rps: number;
  p50_ms: number | null;
  p99_ms: number | null;
  /** Slowest request (wrk's Latency Max; the fetch generator's slowest), when reported. */
  max_ms?: number | null;
  /** Responses that were not 2xx/3xx: must be 0 for a valid figure. */
  non2xx: number;
  socket_errors: number;
}

export type LoadTool = "wrk" | "fetch";

/** The wrk binary and its version, or null when not installed. */
export async function findWrk(): Promise<{ path: string; version: string } | null> {
  const path = Bun.which("wrk");
  if (!path) return null;
  const p = Bun.spawn([path, "--version"], { stdout: "pipe", stderr: "pipe" });
  const text = (await new Response(p.stdout).text()) + (await new Response(p.stderr).text());
  await p.exited;
  return { path, version: /wrk (\S+)/.exec(text)?.[1] ?? "unknown" };
}

export const WRK_INSTALL_HINT = "wrk not found: install it with `apt-get update && apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk` (macOS)";

/** Runs one load phase with the chosen tool. */
export function runLoad(tool: LoadTool, o: LoadOptions): Promise<LoadResult> {
  return tool === "wrk" ? runWrk(o) : runFetch(o);
}

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/** Milliseconds from a wrk duration such as `812.00us`, `1.23ms`, `2.01s`, `1.5m`. */
function wrkMs(value: string): number | null {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(value);
  if (!m) return null;
  const n = Number(m[1]);
  const ms = m[2] === "us" ? n / 1000 : m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
  return Math.round(ms * 1000) / 1000;
}

// Per-thread request cap for count-limited runs: each thread stops its event loop after its
// share and says so on stdout; once every thread has, we SIGINT wrk so it prints its report
// (wrk's main thread otherwise sleeps for the full -d).
const LIMIT_LUA = `
local limit = 0
local n = 0
function init(args) limit = tonumber(args[1]) end
function response(status, headers, body)
  n = n + 1
  if n == limit then
    io.write("wrk-thread-limit-reached\\n")
    io.flush()
    wrk.thread:stop()
  end
end
`;

async function runWrk(o: LoadOptions): Promise<LoadResult> {
  const args = ["wrk", "-t", String(o.threads), "-c", String(o.connections), "-d", `${o.durationS}s`, "--latency"];
  for (const [k, v] of Object.entries(o.headers)) args.push("-H", `${k}: ${v}`);
  if (o.maxRequests) {
    const script = join(o.tmpDir, "limit.lua");
    writeFileSync(script, LIMIT_LUA);
    args.push("-s", script, o.url, "--", String(Math.ceil(o.maxRequests / o.threads)));
  } else {
    args.push(o.url);
  }
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const errText = new Response(proc.stderr).text();
  let out = "";
  let stoppedThreads = 0;
  for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
    out += new TextDecoder().decode(chunk);
    if (o.maxRequests) {
      const seen = out.split("wrk-thread-limit-reached").length - 1;
      if (seen > stoppedThreads) {
        stoppedThreads = seen;
        if (stoppedThreads >= o.threads) proc.kill("SIGINT");
      }
    }
  }
  const code = await proc.exited;
  if (code !== 0 && !/Requests\/sec/.test(out)) throw new Error(`wrk failed (${code}): ${await errText}\n${out}`);
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? "NaN");
  const m = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(out);
  const durationMs = m ? wrkMs(`${m[2]}${m[3]}`)! : NaN;
  const requests = m ? Number(m[1]) : NaN;
  const pct = (p: string) => {
    const r = new RegExp(`^\\s*${p}%\\s+(\\S+)`, "m").exec(out);
    return r ? wrkMs(r[1]!) : null;
  };
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    tool: "wrk",
    command: args.map(shellQuote).join(" "),
    requests,
    duration_s: Math.round(durationMs) / 1000,
    // Why: with a count limit wrk's own Requests/sec divides by its wall time including the
    // SIGINT hand-off; recompute from requests and measured duration for both modes alike.
    rps: Math.round(requests / (durationMs / 1000)) || num(/Requests\/sec:\s+([\d.]+)/),
    p50_ms: pct("50"),
    p99_ms: pct("99"),
    max_ms: (() => {
      const l = /^\s*Latency\s+\S+\s+\S+\s+(\S+)/m.exec(out);
      return l ? wrkMs(l[1]!) : null;
    })(),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    socket_errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

async function runFetch(o: LoadOptions): Promise<LoadResult> {
  const spec = { url: o.url, connections: o.connections, durationS: o.durationS, maxRequests: o.maxRequests ?? 0, headers: o.headers };
  const args = [BUN, join(ROOT, "bench/lib/fetch-load.ts"), JSON.stringify(spec)];
  const proc = Bun.spawn(args, { cwd: ROOT, env: cleanEnv(), stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`fetch load generator failed (${code}): ${stderr}`);
  const r = JSON.parse(stdout);
  return { tool: "fetch", command: `bun bench/lib/fetch-load.ts ${shellQuote(JSON.stringify({ ...spec, headers: "…" }))}`, ...r };
}
