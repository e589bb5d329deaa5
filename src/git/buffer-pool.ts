// Reusable buffers for resolved objects (delta resolution allocates one result per object).
/**
 * Reusable buffers for resolved objects, by power-of-two capacity, so that resolving a pack does
 * not allocate (and leave to the collector) one buffer per object: pass 2 produces the whole
 * history's data, many times the pack's size. `alloc` hands out views; `release` takes back
 * views of its own buffers (anything else is left to the collector) while at most `maxFree`
 * bytes are idle.
 */
export class BufferPool {
  private readonly free: ArrayBuffer[][] = [];
  private readonly owned = new WeakSet<ArrayBuffer>();
  private idle = 0;

  constructor(private readonly maxFree: number) {}

  readonly alloc = (size: number): Uint8Array => {
    const b = bucketOf(size);
    // An idle buffer up to four times larger will do.
    const buf = this.free[b]?.pop() ?? this.free[b + 1]?.pop() ?? this.free[b + 2]?.pop();
    if (buf) {
      this.idle -= buf.byteLength;
      return new Uint8Array(buf, 0, size);
    }
    if (2 ** b > this.maxFree / 4) return new Uint8Array(size);
    const fresh = new ArrayBuffer(2 ** b);
    this.owned.add(fresh);
    return new Uint8Array(fresh, 0, size);
  };

  release(view: Uint8Array): void {
    const buf = view.buffer as ArrayBuffer;
    if (!this.owned.has(buf)) return;
    const b = bucketOf(buf.byteLength);
    (this.free[b] ??= []).push(buf);
    this.idle += buf.byteLength;
    // Over the cap: drop from the bucket holding the most idle bytes, so that what is kept
    // follows what is being asked for now (the sizes of a walk's objects shift as it goes).
    while (this.idle > this.maxFree) {
      let worst = b;
      let most = 0;
      for (let i = 0; i < this.free.length; i++) {
        const bytes = (this.free[i]?.length ?? 0) * 2 ** i;
        if (bytes > most) {
          most = bytes;
          worst = i;
        }
      }
      const dropped = this.free[worst]!.shift()!;
      this.idle -= dropped.byteLength;
    }
  }
}

/** Smallest b >= 12 with 2^b >= size. */
function bucketOf(size: number): number {
  if (size <= 4096) return 12;
  if (size > 2 ** 31) return Math.ceil(Math.log2(size));
  return 32 - Math.clz32(size - 1);
}

/**
 * A full collection, for the long loops of a clone or a repack. They churn through buffers that
 * live across awaits (pack reads, packets in flight), so the young-generation collector promotes
 * them and only a full collection frees them. Listing git.git's history up to v2.20 (252k
 * objects, 4 packs) in process peaked at 441 MB left alone and at 356 MB with a collection every
 * 16k trees (six collections); a whole in-process clone at 520-590 MB without collections and
 * 360-400 MB with them.
 */
export function collectGarbage(): void {
  Bun.gc(true);
}

/**
 * Growth of resident memory a paced loop tolerates between two collections: 32 MB on the push
 * path (a push of up to 100 MB must stay within 400 MB of RSS on a warm server), 64 MB for the
 * walks and pack writing of clones, whose target is C git's pack-objects (a collection costs
 * ~20-45 ms there, with a few hundred MB live).
 */
export const MEMORY_SLACK = 32 * 1024 * 1024;
export const CLONE_MEMORY_SLACK = 64 * 1024 * 1024;

/**
 * Paces full collections in a long loop by how much resident memory grew since the last one:
 * `tick()` once per item; every `every` items the process's RSS is read (~12 µs), and past
 * `slack` bytes of growth the heap is collected (collectGarbage). Why: JSC starts a collection
 * once what was allocated since the last one reaches about what the process held after it, so a
 * server holding a few hundred MB (caches, other requests) lets a loop's garbage grow by as much
 * before anything runs. Measured on the 98.9 MB git.git push into a server that had served
 * clones: garbage grew by 120-350 MB while deltas were resolved, and the push peaked at
 * 514-765 MB where a fresh process peaked at 260 MB. RSS rather than the heap's own figures:
 * Bun's heapUsed does not follow buffer garbage between collections. What the process's
 * bounded caches hold (countHeldBytes) is subtracted: that growth is live data a collection
 * cannot give back, and counting it ran a full collection every 32 MB of pack blocks a push
 * read from object storage (bench/README.md, issue 20).
 */
export class MemoryPacer {
  private base: number;
  private n = 0;

  constructor(
    private readonly every = 64,
    private readonly slack = MEMORY_SLACK,
    private readonly probe: MemoryProbe = PROCESS,
  ) {
    this.base = this.garbage();
  }

  /** One item done. */
  tick(): void {
    if (++this.n < this.every) return;
    this.n = 0;
    const now = this.garbage();
    if (now - this.base > this.slack) {
      this.probe.collect();
      this.base = this.garbage();
    } else if (now < this.base) this.base = now;
  }

  /** Resident memory less what the caches hold. */
  private garbage(): number {
    return this.probe.rss() - heldBytes();
  }
}

/** What a MemoryPacer measures and how it collects (the process, unless a test says otherwise). */
export interface MemoryProbe {
  rss(): number;
  collect(): void;
}

/**
 * Owners of the process's bounded caches (held weakly): what they hold is live data a collection
 * cannot give back, so its growth is not counted as a loop's garbage.
 */
const holders = new Set<WeakRef<{ heldBytes(): number }>>();

/** Registers a cache owner whose `heldBytes()` MemoryPacer subtracts from resident memory. */
export function countHeldBytes(owner: { heldBytes(): number }): void {
  holders.add(new WeakRef(owner));
}

/** Bytes the registered caches hold now. */
export function heldBytes(): number {
  let n = 0;
  for (const ref of holders) {
    const owner = ref.deref();
    if (owner) n += owner.heldBytes();
    else holders.delete(ref);
  }
  return n;
}

const PROCESS: Readonly<MemoryProbe> = { rss: () => process.memoryUsage.rss(), collect: collectGarbage };
