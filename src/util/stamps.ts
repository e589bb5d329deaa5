// A write-behind buffer of "last seen" stamps (tokens used, machines seen, job heartbeats): the
// latest time per id, written in one batch later. Every write empties the fact cache, so these
// bookkeeping stamps are never written one request at a time. One per context (`ctx.buffers`).
export class Stamps {
  /** The latest stamp per id not yet written. */
  readonly pending = new Map<string, number>();

  constructor(
    /** When the buffer was last written (its owner decides how often). */
    public flushedAt = 0,
  ) {}

  /** Records `at` for `id` (the latest wins). */
  note(id: string, at: number): void {
    this.pending.set(id, at);
  }

  /** Empties the buffer, answering what it held; `at` becomes the last flush. */
  take(at: number): [string, number][] {
    this.flushedAt = at;
    const out = [...this.pending];
    this.pending.clear();
    return out;
  }
}
