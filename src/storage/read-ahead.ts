// Sequential reads with the latency hidden: while the caller consumes one chunk, the next few
// ranged reads are already in flight. A clone streams a stored pack of hundreds of megabytes
// this way; against a bucket that adds tens of milliseconds to every request, waiting for each
// range in turn would cost that latency once per range. Memory stays bounded: each stream has
// at most `window` chunks fetched or in flight, and all streams together draw on one budget.

/** Tuning of one sequential read. */
export interface ReadAheadOptions {
  /** Bytes per ranged read (default 4 MiB): a few requests per MiB at most. */
  chunkBytes?: number;
  /** The first read is smaller so the first bytes go out soon (default 1 MiB). */
  firstChunkBytes?: number;
  /** Ranged reads fetched or in flight at once per stream (default 4). */
  window?: number;
}

export const READ_AHEAD_DEFAULTS = { chunkBytes: 4 * 1024 * 1024, firstChunkBytes: 1024 * 1024, window: 4 } as const;

/** A pool of bytes shared by every read-ahead stream of a process; a stream waits when it is spent. */
export class ByteBudget {
  private available: number;
  private readonly waiting: { bytes: number; resolve: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  /** Bytes not taken now. */
  get free(): number {
    return this.available;
  }

  /** Take `bytes` if they are free now. */
  tryTake(bytes: number): boolean {
    if (this.waiting.length > 0 || bytes > this.available) return false;
    this.available -= bytes;
    return true;
  }

  /** Take `bytes`, waiting until they are free (a request larger than the capacity takes it all). */
  async take(bytes: number): Promise<void> {
    const want = Math.min(bytes, this.capacity);
    if (this.tryTake(want)) return;
    await new Promise<void>((resolve) => this.waiting.push({ bytes: want, resolve }));
  }

  /** Return `bytes` taken earlier. */
  give(bytes: number): void {
    this.available = Math.min(this.capacity, this.available + Math.min(bytes, this.capacity));
    while (this.waiting.length > 0 && this.waiting[0]!.bytes <= this.available) {
      const next = this.waiting.shift()!;
      this.available -= next.bytes;
      next.resolve();
    }
  }
}

interface Pending {
  bytes: number;
  data: Promise<Uint8Array>;
}

/**
 * The bytes `[offset, offset + length)` in order, as chunks, fetched by `read` with up to
 * `window` reads ahead of the consumer. A failed read is thrown when its turn comes (earlier
 * chunks are delivered first). Stopping early (break, throw) lets reads in flight finish quietly.
 */
export async function* readAhead(
  read: (offset: number, length: number) => Promise<Uint8Array>,
  offset: number,
  length: number,
  opts: ReadAheadOptions = {},
  budget?: ByteBudget,
): AsyncGenerator<Uint8Array> {
  const chunk = Math.max(1, opts.chunkBytes ?? READ_AHEAD_DEFAULTS.chunkBytes);
  const first = Math.max(1, Math.min(chunk, opts.firstChunkBytes ?? READ_AHEAD_DEFAULTS.firstChunkBytes));
  const window = Math.max(1, opts.window ?? READ_AHEAD_DEFAULTS.window);
  const end = offset + length;
  const queue: Pending[] = [];
  let next = offset;
  let held = 0;

  const issue = (bytes: number): void => {
    const at = next;
    next += bytes;
    const data = read(at, bytes);
    // Handled when its turn comes; this keeps an early failure from being reported as unhandled.
    data.catch(() => {});
    queue.push({ bytes, data });
  };
  const size = (): number => Math.min(next === offset ? first : chunk, end - next);

  try {
    while (next < end || queue.length > 0) {
      // Keep the window full; wait for budget only when nothing is in flight.
      while (next < end && queue.length < window) {
        const bytes = size();
        if (budget) {
          if (queue.length === 0) await budget.take(bytes);
          else if (!budget.tryTake(bytes)) break;
          held += bytes;
        }
        issue(bytes);
      }
      const head = queue.shift()!;
      const data = await head.data;
      yield data;
      if (budget) {
        budget.give(head.bytes);
        held -= head.bytes;
      }
    }
  } finally {
    // Stopped early or failed: the reads still in flight give their budget back when they settle.
    if (budget && held > 0) {
      const outstanding = queue.splice(0);
      const delivered = held - outstanding.reduce((n, p) => n + p.bytes, 0);
      if (delivered > 0) budget.give(delivered);
      for (const p of outstanding) {
        const give = () => budget.give(p.bytes);
        void p.data.then(give, give);
      }
    }
  }
}
