// A least-recently-used map bounded by the total size of its values rather than their count.

/** LRU map that evicts the least recently used entries once the summed `sizeOf` exceeds `maxBytes`. */
export class ByteLru<K, V> {
  private readonly entries = new Map<K, { value: V; bytes: number }>();
  private total = 0;

  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V, key: K) => number,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {}

  /** Bytes currently held. */
  get bytes(): number {
    return this.total;
  }

  /** Number of entries currently held. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The value for `key`, marking it most recently used. Its size is measured again: a value
   * may have grown since it was stored (tables built on first use), and the budget must hold
   * what the values weigh now, so others are evicted for it (or it is dropped, once larger
   * than the budget).
   */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    const bytes = this.sizeOf(entry.value, key);
    if (bytes !== entry.bytes) {
      this.total += bytes - entry.bytes;
      entry.bytes = bytes;
      if (bytes > this.maxBytes) {
        this.total -= bytes;
        this.onEvict?.(key, entry.value);
        return entry.value;
      }
      this.shrink();
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Whether `key` is held, without touching its recency. */
  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Insert or replace `key`, then evict until within budget; a value larger than the budget is not kept. */
  set(key: K, value: V): void {
    this.delete(key);
    const bytes = this.sizeOf(value, key);
    if (bytes > this.maxBytes) {
      this.onEvict?.(key, value);
      return;
    }
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    this.shrink();
  }

  /** Evict least recently used entries until within budget. */
  private shrink(): void {
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.remove(oldest, entry);
    }
  }

  /** Remove `key` (calling onEvict); returns whether it was held. */
  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.remove(key, entry);
    return true;
  }

  /** Remove every entry whose key satisfies `match`. */
  deleteWhere(match: (key: K) => boolean): void {
    for (const [key, entry] of [...this.entries]) {
      if (match(key)) this.remove(key, entry);
    }
  }

  /** Remove every entry. */
  clear(): void {
    this.deleteWhere(() => true);
  }

  private remove(key: K, entry: { value: V; bytes: number }): void {
    this.entries.delete(key);
    this.total -= entry.bytes;
    this.onEvict?.(key, entry.value);
  }
}
