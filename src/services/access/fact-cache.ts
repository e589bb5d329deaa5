// Authority facts (tokens, sessions, orgs, repos, roles) cached in memory but never trusted
// beyond what the database says now.
//
// Why revocation stays immediate: each request (or SSH connection, or any lookup more than 1 ms
// after the last check) first reads `total_changes()`, which moves with every write of our own
// connection, and at most once per millisecond SQLite's `data_version`, which moves when another
// connection (the CLI, another process) commits. Any change drops every cached fact, so a token
// revoked through this server fails on the very next request, and a change committed by another
// process is seen by every request that starts more than 1 ms after it.
//
// Facts live in one map per space ("token", "org", …), keyed by one string or a pair of strings,
// never by a string built per lookup: keys are usually ids taken from cached rows, whose hashes
// the engine keeps, so a hit costs no string building or hashing.

/** Cheap probes of the database's change counters. */
export interface EpochProbes {
  /** Changes made through our own connection. */
  own(): number;
  /** Moves when another connection commits. */
  external(): number;
}

const MAX_ENTRIES = 50_000;
/** How long a validation, and a reading of other connections' commits, is trusted. */
const WINDOW_MS = 1;

/** A process-wide cache of read-mostly facts, validated against the database's change counters. */
export class FactCache {
  private own = -1;
  private external = -1;
  private validUntil = 0;
  private externalUntil = 0;
  private spaces = new Map<string, Map<string, unknown>>();
  private size = 0;
  /** Moves each time the cache is cleared. */
  private generation = 0;

  constructor(
    private readonly probes: EpochProbes,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Marks the start of a request (or connection): its first lookup re-validates. */
  fresh(): void {
    this.validUntil = 0;
  }

  private validate(now: number): void {
    this.validUntil = now + WINDOW_MS;
    const own = this.probes.own();
    let changed = own !== this.own;
    this.own = own;
    if (now >= this.externalUntil) {
      this.externalUntil = now + WINDOW_MS;
      const external = this.probes.external();
      changed ||= external !== this.external;
      this.external = external;
    }
    if (changed || this.size > MAX_ENTRIES) {
      this.spaces.clear();
      this.size = 0;
      this.generation++;
    }
  }

  /** The valid map of `space` (validating first when due). */
  private space(space: string): Map<string, unknown> {
    const now = this.clock();
    if (now >= this.validUntil) this.validate(now);
    let map = this.spaces.get(space);
    if (!map) this.spaces.set(space, (map = new Map()));
    return map;
  }

  /** Looks up `key` in `map`, loading (and caching) on a miss unless the cache was cleared meanwhile. */
  private async lookup<T>(map: Map<string, unknown>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = map.get(key);
    if (hit !== undefined || map.has(key)) return hit as T;
    const generation = this.generation;
    const value = await load();
    // Why: a write that landed while the load ran cleared the cache; what we read may predate it.
    if (generation === this.generation) {
      map.set(key, value);
      this.size++;
    }
    return value;
  }

  /** The cached value for `key` in `space`, or `load()` (null results are cached too). */
  get<T>(space: string, key: string, load: () => Promise<T>): Promise<T> {
    return this.lookup(this.space(space), key, load);
  }

  /** The cached value for the pair (`a`, `b`) in `space`, or `load()`. */
  getPair<T>(space: string, a: string, b: string, load: () => Promise<T>): Promise<T> {
    const outer = this.space(space);
    let inner = outer.get(a) as Map<string, unknown> | undefined;
    if (!inner) outer.set(a, (inner = new Map()));
    return this.lookup(inner, b, load);
  }
}
