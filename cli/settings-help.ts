// The footer of `svc serve --help`: where the settings are described, and their names.
import { SETTINGS } from "../src/config.ts";

/** Most-used settings first, with their defaults; then every other name. */
const COMMON: [string, string][] = [
  ["SVC_DATA_DIR", "./data: SQLite file, local object store, host keys"],
  ["SVC_HTTP_ADDR", "127.0.0.1:8080: HTTP listen address (port 0 picks a free port)"],
  ["SVC_BASE_URL", "http://{SVC_HTTP_ADDR}: public address used in clone URLs and mails"],
  ["SVC_SSH_ADDR", "unset: SSH listen address; unset = no SSH"],
  ["SVC_STORAGE", "fs: fs (objects under SVC_DATA_DIR) or s3 (SVC_S3_*)"],
  ["SVC_METRICS_TOKEN", "unset: bearer token that turns GET /metrics on"],
  ["SVC_LOG", "info: debug, info, warn or error"],
];

/** The settings footer text. */
export function settingsHelp(): string {
  const width = Math.max(...COMMON.map(([n]) => n.length));
  const common = COMMON.map(([n, d]) => `  ${n.padEnd(width)}  ${d}`);
  const others = SETTINGS.filter((s) => !COMMON.some(([n]) => n === s));
  const wrapped: string[] = [];
  let line = " ";
  for (const name of others) {
    if (line.length + name.length + 1 > 96) {
      wrapped.push(line);
      line = " ";
    }
    line += ` ${name}`;
  }
  if (line.trim()) wrapped.push(line);
  return [
    "SETTINGS",
    "",
    "  Environment variables, checked at start: a bad value (or a busy port) exits 2 with one line",
    "  naming the variable. The full table with defaults is the Configuration section of README.md.",
    "",
    ...common,
    "",
    "  Also:",
    ...wrapped,
  ].join("\n");
}
