// A job's log on its way to the server: masked as it streams (plan-29 part D "Masking"), then
// uploaded at most ~0.5 s behind, 512 KiB per call, idempotent at byte offsets.
//
// Masking: every write goes through the job's Masker (src/services/ci/mask.ts) holding the job's
// secret values, the server's extra `mask` values, the job token, and every `::add-mask::VALUE`
// a step printed. A line that may be such a command is held until it is whole, so the value is
// known before the line itself is shown (it is shown as `::add-mask::***`). The masker holds back
// a tail that may start a secret until more output comes or the step ends (`endStep`).
import { MASK, Masker } from "../../src/services/ci/mask.ts";
import { call, say, Stopped } from "./client.ts";

const ADD_MASK = "::add-mask::";
/** Characters of an `::add-mask::` value (a secret's bound). */
export const ADD_MASK_MAX_CHARS = 48 * 1024;

/**
 * The masking front of a log: `write` takes raw output and answers what may be shown now.
 * Pure (no I/O), so the benchmark measures it alone.
 */
export class MaskedText {
  /** The current line while it may still be an `::add-mask::` command. */
  private line = "";
  /** Whether the current line started before the last write (so the start of `line` is a line start). */
  private atLineStart = true;

  constructor(readonly masker: Masker) {}

  /** Takes raw output; answers the masked text that is safe to show now. */
  write(text: string): string {
    let out = "";
    let rest = text;
    while (rest) {
      // Fast path: no line of `rest` can start a command (the usual output), one push for all of it.
      if (!this.line && !(this.atLineStart && rest.charCodeAt(0) === 0x3a) && !rest.includes("\n:")) {
        this.atLineStart = rest.endsWith("\n");
        return out + this.masker.push(rest);
      }
      if (this.atLineStart || this.line) {
        // At the start of a line: it may be a command, held until its newline.
        const nl = rest.indexOf("\n");
        const candidate = this.line + (nl < 0 ? rest : rest.slice(0, nl + 1));
        const maybe = candidate.startsWith(ADD_MASK) || ADD_MASK.startsWith(candidate);
        if (maybe && nl < 0 && candidate.length <= ADD_MASK.length + ADD_MASK_MAX_CHARS) {
          this.line = candidate;
          this.atLineStart = false;
          return out;
        }
        this.line = "";
        out += this.masker.push(maybe ? this.command(candidate) : candidate);
        if (nl < 0) {
          this.atLineStart = false;
          return out;
        }
        this.atLineStart = true;
        rest = rest.slice(nl + 1);
        continue;
      }
      const nl = rest.indexOf("\n");
      out += this.masker.push(nl < 0 ? rest : rest.slice(0, nl + 1));
      if (nl < 0) return out;
      this.atLineStart = true;
      rest = rest.slice(nl + 1);
    }
    return out;
  }

  /** A whole line that starts like `::add-mask::`: its value is masked from now on, the line shows `***` for it. */
  private command(line: string): string {
    if (!line.startsWith(ADD_MASK)) return line;
    const value = line
      .slice(ADD_MASK.length)
      .replace(/\r?\n$/, "")
      .trim();
    if (!value) return line;
    if (value.length > ADD_MASK_MAX_CHARS || !this.masker.add(value))
      return `${ADD_MASK}${MASK}\n##[warning] ::add-mask:: refused (longer than ${ADD_MASK_MAX_CHARS} characters, or too many masked values); the value above is hidden, later copies may not be\n`;
    return `${ADD_MASK}${MASK}${line.endsWith("\n") ? "\n" : ""}`;
  }

  /** A step ended: the held line and the masker's held tail, masked. */
  end(): string {
    const line = this.line;
    this.line = "";
    this.atLineStart = true;
    const out = line ? this.masker.push(this.command(line)) : "";
    return out + this.masker.flush();
  }
}

/**
 * The job's log as the server has acknowledged it, and the bytes still to send. Why a queue of
 * buffers and not one string: at 10 MB/s the unsent text can reach megabytes while an upload is
 * in flight, and re-encoding all of it for every 512 KiB call made the path quadratic.
 */
export class LogStream {
  private queue: Buffer[] = [];
  private queued = 0;
  private acked = 0;
  private flushing: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval>;
  private readonly text: MaskedText;
  /** Set when the server will take no more (job over, or the log limit reached). */
  closed = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly stop: AbortSignal,
    masker: Masker = new Masker(),
  ) {
    this.text = new MaskedText(masker);
    this.timer = setInterval(() => void this.flush(), 500);
  }

  /** The job's masker (values added while the job runs: `::add-mask::`). */
  get masker(): Masker {
    return this.text.masker;
  }

  write(text: string): void {
    if (this.closed || !text) return;
    this.enqueue(this.text.write(text));
    if (this.queued >= 256 * 1024) void this.flush();
  }

  /** A step ended: what the masker held back goes out now. */
  endStep(): void {
    if (this.closed) return;
    this.enqueue(this.text.end());
  }

  private enqueue(text: string): void {
    if (!text) return;
    const b = Buffer.from(text);
    this.queue.push(b);
    this.queued += b.length;
  }

  /** The first `limit` bytes or fewer of the queue, ending on a character boundary. */
  private head(limit: number): Buffer {
    const parts: Buffer[] = [];
    let n = 0;
    for (const b of this.queue) {
      if (n >= limit) break;
      parts.push(b);
      n += b.length;
    }
    const all = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (all.length <= limit) return all;
    let end = limit;
    while (end > 0 && (all[end]! & 0xc0) === 0x80) end--;
    return all.subarray(0, end);
  }

  /** Drops `n` acknowledged bytes from the front of the queue. */
  private drop(n: number): void {
    this.queued -= Math.min(n, this.queued);
    while (n > 0 && this.queue.length) {
      const b = this.queue[0]!;
      if (b.length <= n) {
        this.queue.shift();
        n -= b.length;
      } else {
        this.queue[0] = b.subarray(n);
        n = 0;
      }
    }
  }

  /** Sends what is pending (one call at a time); resolves when this round is done. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = this.send().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async send(): Promise<void> {
    while (this.queued > 0 && !this.closed) {
      const text = this.head(512 * 1024).toString("utf8");
      let res: Awaited<ReturnType<typeof call>>;
      try {
        res = await call(this.url, { token: this.token, method: "POST", body: { offset: this.acked, text }, stop: this.stop, what: "log upload" });
      } catch (error) {
        if (error instanceof Stopped) return;
        throw error;
      }
      if ((res.status === 200 || res.status === 409) && typeof res.body?.offset === "number") {
        // The server holds everything up to `offset`: drop that much from what is pending.
        const drop = res.body.offset - this.acked;
        if (drop > 0) this.drop(drop);
        this.acked = Math.max(this.acked, res.body.offset);
        continue;
      }
      if (res.status === 413) say(`log limit reached; further output is not uploaded (${res.body?.error ?? ""})`);
      this.closed = true;
    }
  }

  /** Uploads everything (retrying while the server is away), then stops the timer. */
  async close(): Promise<void> {
    this.endStep();
    clearInterval(this.timer);
    while (this.queued > 0 && !this.closed && !this.stop.aborted) await this.flush();
    this.closed = true;
  }
}
