// Terminal niceties of the CLI: colours and progress bars only on a terminal (never in a pipe,
// a log file or CI; NO_COLOR and TERM=dumb turn colours off), and help without escape codes
// when it is not read on a terminal.
import { renderUsage, type CommandDef } from "citty";

type Stream = { isTTY?: boolean; write(s: string): unknown };

/** Whether to colour what goes to `stream`. */
export function colorOn(stream: Stream): boolean {
  const env = process.env;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

/** ANSI colour helpers for `stream` (identity functions when colours are off). */
export function paint(stream: Stream) {
  const on = colorOn(stream);
  const c = (open: number, close: number) => (s: string) => (on ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return { red: c(31, 39), green: c(32, 39), yellow: c(33, 39), bold: c(1, 22), dim: c(2, 22) };
}

/** Drops ANSI escape sequences. */
export function stripAnsi(s: string): string {
  return s.replace(/\u001b\[[0-9;]*m/g, "");
}

/** Bytes as B, KiB, MiB or GiB. */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** A one-line progress bar redrawn in place on a terminal (at most ten times a second); silent elsewhere. */
export class Progress {
  private readonly on: boolean;
  private last = 0;
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly stream: Stream = process.stderr,
  ) {
    this.on = stream.isTTY === true && process.env.TERM !== "dumb";
  }

  /** Shows `done` of `total` (units), with an optional note (a byte count, the current item). */
  update(done: number, total: number, note = "", force = false): void {
    if (!this.on) return;
    const t = performance.now();
    if (!force && t - this.last < 100) return;
    this.last = t;
    const width = 24;
    const ratio = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(ratio * width);
    const columns = (this.stream as { columns?: number }).columns ?? 100;
    const line = `${this.label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}${note ? ` ${note}` : ""}`;
    this.stream.write(`\r\u001b[K${line.slice(0, columns - 1)}`);
    this.drawn = true;
  }

  /** Clears the bar (before printing results). */
  clear(): void {
    if (this.on && this.drawn) this.stream.write("\r\u001b[K");
    this.drawn = false;
  }
}

/** Text appended to a command's --help (the settings of `serve`, say). */
export const usageFooters = new WeakMap<object, string>();

/** citty's usage, with the command's footer, without colours unless stdout is a terminal. */
export async function showUsage<T extends CommandDef<any>>(cmd: T, parent?: T): Promise<void> {
  let text = await renderUsage(cmd, parent);
  const footer = usageFooters.get(cmd);
  if (footer) text += `\n\n${footer}`;
  process.stdout.write(`${colorOn(process.stdout) ? text : stripAnsi(text)}\n\n`);
}

/**
 * Asks for a secret on the terminal without echoing it (stdin must be a TTY): the prompt goes to
 * stderr, the answer ends at Enter; Ctrl-C or Ctrl-D before any input gives null.
 */
export async function promptSecret(prompt: string): Promise<string | null> {
  const stdin = process.stdin;
  // Raw (no echo) before the prompt shows: whatever is typed once it is visible must not echo.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  stdin.resume();
  try {
    return await new Promise<string | null>((resolve) => {
      let answer = "";
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString("utf8")) {
          if (ch === "\r" || ch === "\n") return done(answer);
          if (ch === "\u0003" || (ch === "\u0004" && answer === "")) return done(null);
          if (ch === "\u007f" || ch === "\b") answer = answer.slice(0, -1);
          else if (ch >= " ") answer += ch;
        }
      };
      const done = (value: string | null) => {
        stdin.off("data", onData);
        resolve(value);
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write("\n");
  }
}

/** The first line of stdin (without its line ending), read to the end; at most 64 KiB. */
export async function readStdinLine(): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size > 64 * 1024) break;
  }
  const text = Buffer.concat(chunks).toString("utf8");
  const end = text.search(/\r?\n/);
  return end < 0 ? text : text.slice(0, end);
}
