// JSON-lines logging on stderr.
import type { Logger } from "./services/context.ts";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/** A logger writing one JSON object per line to stderr, at or above `level`. */
export function createLogger(level: keyof typeof LEVELS = "info"): Logger {
  const min = LEVELS[level];
  const write = (lvl: keyof typeof LEVELS, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`);
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}
