// Authority facts (tokens, sessions, orgs, repos, roles) cached in memory but never trusted
// beyond what the database says now.
//
// Why revocation stays immediate: each request (or SSH connection, or any lookup more than 1 ms
// after the last check) first reads `total_changes()`, which moves with every write of our own
// connection, and at most once per millisecond SQLite's `data_version`, which moves when another
// connection (the CLI, another process) commits. Any change drops every cached fact, so a token
// revoked through this server fails on the very next request, and a change committed by another
// process is seen by every request that starts more than 1 ms after it. On a shared database
// (several nodes, issue 27) the external probe is a read of an epoch row, so it may answer with
// a promise: lookups then wait for one probe per window per node, and hits inside the window
// stay synchronous.
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
  /**
   * Moves when another connection commits. SQLite answers synchronously (`PRAGMA data_version`);
   * a shared database answers with a promise (a read of its epoch row, issue 27): the cache then
   * waits for it once per window, and every lookup in that window shares the one probe.
   */
  external(): number | Promise<number>;
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
  /** When the last external probe started, and whether the probe answers promises (a shared database). */
  private externalAt = Number.NEGATIVE_INFINITY;
  private externalAsync = false;
  /** getWithin's facts: kept across this process's own writes, dropped when the external epoch moves. */
  private loose = new Map<string, Map<string, unknown>>();
  private looseSize = 0;
  private looseGeneration = 0;
  private spaces = new Map<string, Map<string, unknown>>();
  private size = 0;
  /** Moves each time the cache is cleared. */
  private generation = 0;
  /** The asynchronous external probe in flight: lookups wait for it before trusting a fact. */
  private probing: Promise<void> | null = null;

  constructor(
    private readonly probes: EpochProbes,
    private readonly clock: () => number = Date.now,
    /** How long a reading of other connections' commits is trusted (an asynchronous probe may widen it). */
    private readonly externalWindowMs: number = WINDOW_MS,
  ) {}

  /** Marks the start of a request (or connection): its first lookup re-validates. */
  fresh(): void {
    this.validUntil = 0;
  }

  private clear(): void {
    this.spaces.clear();
    this.size = 0;
    this.generation++;
  }

  /** Re-reads the probes; answers the asynchronous external probe to wait for, if one is in flight. */
  private validate(now: number): Promise<void> | null {
    this.validUntil = now + WINDOW_MS;
    const own = this.probes.own();
    let changed = own !== this.own;
    this.own = own;
    if (now >= this.externalUntil) {
      this.externalUntil = now + this.externalWindowMs;
      this.externalAt = now;
      let external: number | Promise<number>;
      try {
        external = this.probes.external();
      } catch (error) {
        // Why: a probe that failed (the database unreachable) validated nothing; a lookup in the
        // same millisecond must probe again and meet the error (503), not answer from the cache.
        this.externalUntil = 0;
        this.externalAt = Number.NEGATIVE_INFINITY;
        this.validUntil = 0;
        throw error;
      }
      this.externalAsync = typeof external !== "number";
      if (typeof external === "number") {
        changed ||= external !== this.external;
        this.external = external;
      } else {
        const probe: Promise<void> = external.then(
          (value) => {
            if (this.probing === probe) this.probing = null;
            if (value !== this.external) {
              this.external = value;
              this.clear();
              this.clearLoose();
            }
          },
          (error: unknown) => {
            // Why: a failed probe proves nothing; the next lookup probes again (and meets the error).
            if (this.probing === probe) this.probing = null;
            this.externalUntil = 0;
            this.externalAt = Number.NEGATIVE_INFINITY;
            this.validUntil = 0;
            throw error;
          },
        );
        this.probing = probe;
      }
    }
    if (changed || this.size > MAX_ENTRIES) this.clear();
    return this.probing;
  }

  /** The valid map of `space` (validating first when due), or a promise of it while an external probe is in flight. */
  private space(space: string): Map<string, unknown> | Promise<Map<string, unknown>> {
    const now = this.clock();
    const probing = now >= this.validUntil ? this.validate(now) : this.probing;
    if (probing) return probing.then(() => this.mapOf(space));
    return this.mapOf(space);
  }

  private mapOf(space: string): Map<string, unknown> {
    let map = this.spaces.get(space);
    if (!map) this.spaces.set(space, (map = new Map()));
    return map;
  }

  /**
   * The cached value for `key` in `map`, or a load. A settled value is returned as it is (no
   * promise, no async frame: this is every request's hot path); a pending load is shared by
   * concurrent misses; a failed load is forgotten so the next lookup retries.
   */
  private lookup<T>(map: Map<string, unknown>, key: string, load: () => Promise<T>, loose = false): T | Promise<T> {
    const hit = map.get(key);
    if (hit !== undefined) return hit instanceof Settled ? (hit.value as T) : (hit as Promise<T>);
    const gen = () => (loose ? this.looseGeneration : this.generation);
    const generation = gen();
    const loading = load().then(
      (value) => {
        // Why: a write that lands while the load runs clears the cache (a new generation) and
        // drops this map with it, so nothing read before the write survives it.
        if (generation === gen() && map.get(key) === loading) map.set(key, new Settled(value));
        return value;
      },
      (error: unknown) => {
        if (map.get(key) === loading) {
          map.delete(key);
          if (loose) this.looseSize--;
          else this.size--;
        }
        // Why: a failed load (the database unreachable) leaves nothing validated: the next lookup,
        // even in the same millisecond, probes again instead of answering from what is cached.
        this.externalUntil = 0;
        this.externalAt = Number.NEGATIVE_INFINITY;
        this.validUntil = 0;
        throw error;
      },
    );
    map.set(key, loading);
    if (loose) this.looseSize++;
    else this.size++;
    return loading;
  }

  /**
   * The external epoch as last read: getWithin's facts in the cache are valid as of it (they are
   * dropped whenever a read finds it moved). -1 before the first read.
   */
  epochSeen(): number {
    return this.external;
  }

  /**
   * On a shared database, reads the external epoch now (a strict validation: lookups in the next
   * window share it; facts are dropped if it moved) and answers it; null with a synchronous
   * probe (SQLite), where every lookup is strict already.
   */
  async epochNow(): Promise<number | null> {
    if (!this.externalAsync) return null;
    this.validUntil = 0;
    this.externalUntil = 0;
    const probing = this.validate(this.clock());
    if (probing) await probing;
    return this.external;
  }

  /** Drops every getWithin fact now (after this process committed a change to one: its next use reloads). */
  dropWithin(): void {
    this.clearLoose();
  }

  private clearLoose(): void {
    this.loose.clear();
    this.looseSize = 0;
    this.looseGeneration++;
  }

  /**
   * As get, for a fact whose every use is re-checked where it matters (a runner credential: the
   * claim transaction re-reads the machine), on a shared database only (issue 27): the fact is
   * kept across this process's own writes and trusted while the shared fact epoch, read at most
   * once per `staleMs` for these facts, has not moved. So a change is seen within `staleMs` on
   * every node, and an idle long poll costs no query. With a synchronous probe (SQLite: no query
   * to save) this is exactly get().
   */
  getWithin<T>(space: string, key: string, load: () => Promise<T>, staleMs: number): T | Promise<T> {
    if (!this.externalAsync) return this.get(space, key, load);
    const now = this.clock();
    if (!this.probing && now >= this.externalAt + staleMs) {
      // Re-read the epoch now (a strict validation: the next strict lookup may share it).
      this.validUntil = 0;
      this.space(space);
    }
    const probing = this.probing;
    if (probing) return probing.then(() => this.looseLookup(space, key, load));
    return this.looseLookup(space, key, load);
  }

  private looseLookup<T>(space: string, key: string, load: () => Promise<T>): T | Promise<T> {
    if (this.looseSize > MAX_ENTRIES) this.clearLoose();
    let map = this.loose.get(space);
    if (!map) this.loose.set(space, (map = new Map()));
    return this.lookup(map, key, load, true);
  }

  /** The cached value for `key` in `space`, or `load()` (null results are cached too). */
  get<T>(space: string, key: string, load: () => Promise<T>): T | Promise<T> {
    const map = this.space(space);
    if (map instanceof Promise) return map.then((m) => this.lookup(m, key, load));
    return this.lookup(map, key, load);
  }

  /**
   * As get, for a fact whose table the shared fact epoch does not follow (no epoch trigger:
   * issue counts, watch levels). Cached only where the probes see every commit (SQLite: our own
   * writes and `data_version`); on a shared database (an asynchronous probe, several nodes) it is
   * loaded on every call, since another node's write to its table would never drop it here.
   */
  getLocal<T>(space: string, key: string, load: () => Promise<T>): T | Promise<T> {
    const map = this.space(space);
    if (map instanceof Promise) return map.then(() => load());
    return this.externalAsync ? load() : this.lookup(map, key, load);
  }

  /** As getLocal, keyed by a pair. */
  getPairLocal<T>(space: string, a: string, b: string, load: () => Promise<T>): T | Promise<T> {
    const outer = this.space(space);
    if (outer instanceof Promise) return outer.then(() => load());
    return this.externalAsync ? load() : this.lookupPair(outer, a, b, load);
  }

  /** The cached value for the pair (`a`, `b`) in `space`, or `load()`. */
  getPair<T>(space: string, a: string, b: string, load: () => Promise<T>): T | Promise<T> {
    const outer = this.space(space);
    if (outer instanceof Promise) return outer.then((m) => this.lookupPair(m, a, b, load));
    return this.lookupPair(outer, a, b, load);
  }

  private lookupPair<T>(outer: Map<string, unknown>, a: string, b: string, load: () => Promise<T>): T | Promise<T> {
    let inner = outer.get(a) as Map<string, unknown> | undefined;
    if (!inner) outer.set(a, (inner = new Map()));
    return this.lookup(inner, b, load);
  }
}

/** A loaded value in the cache (distinguishes it from a pending load). */
class Settled {
  constructor(readonly value: unknown) {}
}
