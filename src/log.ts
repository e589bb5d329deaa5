// JSON-lines logging on stderr, buffered: lines are written in batches (at most ~20 ms late, and
// at once for errors and at exit) so the access log does not cost a syscall per request.
import { writeSync } from "node:fs";
import type { Logger } from "./services/context.ts";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
const FLUSH_MS = 20;
const FLUSH_LINES = 512;

let pending: string[] = [];
let timer: ReturnType<typeof setTimeout> | null = null;

/** Writes every buffered line now. */
export function flushLogs(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  if (!pending.length) return;
  const text = pending.join("");
  pending = [];
  try {
    writeSync(2, text);
  } catch {
    // stderr closed: nothing sensible left to do with a log line
  }
}

process.on("exit", flushLogs);

/** One access-log line, formatted by hand (the hottest log line: one per request). */
export function accessLine(id: string, method: string, path: string, status: number, ms: number): string {
  return `{"time":${Date.now()},"level":"info","msg":"request","request_id":"${id}","method":"${method}","path":${JSON.stringify(path)},"status":${status},"ms":${ms}}\n`;
}

/** Appends a preformatted line (see accessLine) to the buffer. */
export function writeLine(line: string): void {
  pending.push(line);
  if (pending.length >= FLUSH_LINES) flushLogs();
  else if (!timer) {
    timer = setTimeout(flushLogs, FLUSH_MS);
    timer.unref?.();
  }
}

/** A logger writing one JSON object per line to stderr, at or above `level`. */
export function createLogger(level: keyof typeof LEVELS = "info"): Logger {
  const min = LEVELS[level];
  const write = (lvl: keyof typeof LEVELS, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    pending.push(`${JSON.stringify({ time: Date.now(), level: lvl, msg, ...fields })}\n`);
    if (lvl === "error" || pending.length >= FLUSH_LINES) flushLogs();
    else if (!timer) {
      timer = setTimeout(flushLogs, FLUSH_MS);
      timer.unref?.();
    }
  };
  return {
    enabled: (lvl) => LEVELS[lvl] >= min,
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
