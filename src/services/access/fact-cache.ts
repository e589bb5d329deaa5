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

/** A value, or a promise of it: cache hits answer synchronously (callers `await` either). */
export type MaybePromise<T> = T | Promise<T>;

/** Applies `f` to a value that may still be loading: synchronously when it is already there. */
export function whenReady<T, U>(v: MaybePromise<T>, f: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

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

  /**
   * The cached value for `key` in `map`, or a load. A settled value is returned as it is (no
   * promise, no async frame: this is every request's hot path); a pending load is shared by
   * concurrent misses; a failed load is forgotten so the next lookup retries.
   */
  private lookup<T>(map: Map<string, unknown>, key: string, load: () => Promise<T>): T | Promise<T> {
    const hit = map.get(key);
    if (hit !== undefined) return hit instanceof Settled ? (hit.value as T) : (hit as Promise<T>);
    const generation = this.generation;
    const loading = load().then(
      (value) => {
        // Why: a write that lands while the load runs clears the cache (a new generation) and
        // drops this map with it, so nothing read before the write survives it.
        if (generation === this.generation && map.get(key) === loading) map.set(key, new Settled(value));
        return value;
      },
      (error: unknown) => {
        if (map.get(key) === loading) {
          map.delete(key);
          this.size--;
        }
        throw error;
      },
    );
    map.set(key, loading);
    this.size++;
    return loading;
  }

  /** The cached value for `key` in `space`, or `load()` (null results are cached too). */
  get<T>(space: string, key: string, load: () => Promise<T>): T | Promise<T> {
    return this.lookup(this.space(space), key, load);
  }

  /** The cached value for the pair (`a`, `b`) in `space`, or `load()`. */
  getPair<T>(space: string, a: string, b: string, load: () => Promise<T>): T | Promise<T> {
    const outer = this.space(space);
    let inner = outer.get(a) as Map<string, unknown> | undefined;
    if (!inner) outer.set(a, (inner = new Map()));
    return this.lookup(inner, b, load);
  }
}

/** A loaded value in the cache (distinguishes it from a pending load). */
class Settled {
  constructor(readonly value: unknown) {}
}
