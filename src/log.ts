// JSON-lines logging on stderr, buffered: lines are written in batches (at most ~20 ms late, and
// at once for errors and at exit) so the access log does not cost a syscall per request.
// Each line is encoded into one reused byte buffer as it is logged: holding hundreds of lines as
// strings until the flush made them outlive the young generation and cost more than the formatting.
import { writeSync } from "node:fs";
import type { Logger } from "./services/context.ts";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
const FLUSH_MS = 20;
const FLUSH_LINES = 512;
const BUFFER_BYTES = 128 * 1024;

const buffer = Buffer.allocUnsafe(BUFFER_BYTES);
let used = 0;
let lines = 0;
let timer: ReturnType<typeof setTimeout> | null = null;

function writeOut(data: Uint8Array): void {
  try {
    writeSync(2, data);
  } catch {
    // stderr closed: nothing sensible left to do with a log line
  }
}

/** Writes every buffered line now. */
export function flushLogs(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  if (!used) return;
  writeOut(buffer.subarray(0, used));
  used = 0;
  lines = 0;
}

/** Buffers one line (flushing first if it might not fit); `urgent` writes it out at once. */
function append(line: string, urgent: boolean): void {
  // At most 3 UTF-8 bytes per UTF-16 code unit.
  if (used + line.length * 3 > BUFFER_BYTES) {
    flushLogs();
    if (line.length * 3 > BUFFER_BYTES) {
      writeOut(Buffer.from(line));
      return;
    }
  }
  used += buffer.write(line, used);
  if (urgent || ++lines >= FLUSH_LINES) flushLogs();
  else if (!timer) {
    timer = setTimeout(flushLogs, FLUSH_MS);
    timer.unref?.();
  }
}

process.on("exit", flushLogs);

/** One access-log line, formatted by hand (the hottest log line: one per request). */
export function accessLine(id: string, method: string, path: string, status: number, ms: number): string {
  return `{"time":${Date.now()},"level":"info","msg":"request","request_id":"${id}","method":"${method}","path":${JSON.stringify(path)},"status":${status},"ms":${ms}}\n`;
}

/** Appends a preformatted line (see accessLine) to the buffer. */
export function writeLine(line: string): void {
  append(line, false);
}

/** A logger writing one JSON object per line to stderr, at or above `level`. */
export function createLogger(level: keyof typeof LEVELS = "info"): Logger {
  const min = LEVELS[level];
  const write = (lvl: keyof typeof LEVELS, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    append(`${JSON.stringify({ time: Date.now(), level: lvl, msg, ...fields })}\n`, lvl === "error");
  };
  return {
    enabled: (lvl) => LEVELS[lvl] >= min,
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
