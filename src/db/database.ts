// The metadata database as services see it: queries of committed data, and write transactions
// through `transaction`. Stores (src/services/<domain>/store.ts) take a `Queryable` (the read
// handle or an open transaction) and are async. Two implementations: SQLite (this file, one
// writer per process) and PostgreSQL (src/db/pg/database.ts, SERIALIZABLE with retries).
//
// Why two SQLite connections: a transaction's callback is async, so other requests run while it
// is open. Their reads go to the read connection, which sees only committed data (WAL), never
// the half-done work of an open transaction; their writes wait for the lock below.
import type { Database as Sqlite } from "bun:sqlite";
import type { Db } from "./client.ts";

/** A handle queries run on: the read connection, or an open write transaction. */
export type Queryable = Db;

/** The handle a transaction's callback receives. */
export type Tx = Db;

/** Receives how long statements and write transactions took, in seconds (metrics; see services/ops). */
export interface DbTimings {
  /** One statement run on the read or the write connection. */
  statement(connection: "read" | "write", seconds: number): void;
  /** One write transaction: waiting for the process's write lock, then BEGIN … COMMIT. */
  transaction(waitSeconds: number, heldSeconds: number, committed: boolean): void;
}

/** Compiled statements kept per connection, by SQL text (the least recently used ones go first). */
const STATEMENT_CACHE = 2000;

/**
 * Times every statement drizzle runs on `sqlite` (it prepares each query through `prepare`):
 * a thin wrapper over run/all/get/values of each prepared statement, reporting to `report` when
 * it answers a sink. Why per statement: bun:sqlite gives each statement methods specialised to
 * its parameter count, so one shared wrapper would call the wrong one.
 *
 * Statements are cached by their SQL text (at most STATEMENT_CACHE per connection): drizzle
 * prepares every query it runs, and compiling the SQL cost more than running it on the hot paths
 * (bench/README §29: a third of a comment's CPU). Safe to share: bun:sqlite runs a statement to
 * completion in one synchronous call and resets it before the next, and drizzle never iterates
 * or finalizes the statements it prepares.
 */
export function timeStatements(sqlite: Sqlite, report: () => ((seconds: number) => void) | null): void {
  const prepare = sqlite.prepare.bind(sqlite) as unknown as (...args: unknown[]) => Record<string, (...a: unknown[]) => unknown>;
  const cache = new Map<string, Record<string, (...a: unknown[]) => unknown>>();
  (sqlite as { prepare: unknown }).prepare = (...args: unknown[]) => {
    const text = args.length === 1 && typeof args[0] === "string" ? args[0] : null;
    const hit = text === null ? undefined : cache.get(text);
    if (hit) {
      cache.delete(text!);
      cache.set(text!, hit);
      return hit;
    }
    const stmt = prepare(...args);
    if (text !== null) {
      if (cache.size >= STATEMENT_CACHE) cache.delete(cache.keys().next().value!);
      cache.set(text, stmt);
    }
    for (const method of ["run", "all", "get", "values"] as const) {
      const inner = stmt[method]!.bind(stmt);
      stmt[method] = (...a: unknown[]) => {
        const sink = report();
        if (!sink) return inner(...a);
        const started = performance.now();
        try {
          return inner(...a);
        } finally {
          sink((performance.now() - started) / 1000);
        }
      };
    }
    return stmt;
  };
}

/**
 * Test switch (`SVC_TEST_TX_REPLAY=1`): every write transaction runs its callback twice, the first
 * run rolled back, as a database that retries on serialization failures would (PostgreSQL). A
 * callback that is not safe to re-run (in-memory effects before COMMIT) fails the tests it is in.
 */
const REPLAY = process.env.SVC_TEST_TX_REPLAY === "1";

/** Runs one after-commit hook, dropping its throw. */
export function runHook(fn: () => void): void {
  try {
    fn();
  } catch {
    // Why: an after-commit hook is a wake-up; the work it announces is found by the next poll anyway.
  }
}

/**
 * The metadata database as services see it (one interface, two implementations: SQLite here,
 * PostgreSQL in src/db/pg/database.ts).
 */
export interface Database {
  /** Which database this is. */
  readonly dialect: "sqlite" | "pg";
  /** Queries outside a transaction; sees only committed data. */
  readonly read: Queryable;
  /**
   * Runs `fn` in one write transaction; a throw rolls everything back. `fn` must do database
   * work only (no network or object-store I/O), and may run more than once on PostgreSQL (a
   * serialization failure retries it from the start), so side effects belong in `afterCommit`.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T> | T): Promise<T>;
  /**
   * Runs `fn` once the open transaction `tx` commits (never when it rolls back or is retried):
   * wake-ups that must not reach another worker before the rows they announce are visible.
   * Outside a transaction (`tx` omitted or not open) `fn` runs now. A throw from `fn` is caught
   * and dropped (hooks are hints, never the only path).
   */
  afterCommit(tx: Tx | undefined, fn: () => void): void;
  /**
   * Runs `fn`'s reads in one consistent view of committed data, once (no writes; never retried):
   * PostgreSQL opens a REPEATABLE READ READ ONLY transaction, so reads that belong together (a
   * repository's pack rows and refs, which a push commits together) agree while other nodes
   * write. SQLite hands `fn` the read connection, as before (one process writes; `svc fsck` reads).
   */
  readView<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Moves each time a transaction of this process commits a change (the fact cache's own half). */
  readonly ownEpoch: number;
  /** Whether a transaction of this process is open now (diagnostics and tests). */
  readonly inTransaction: boolean;
  /** Where statement and transaction durations go; null until metrics are wired. */
  timings: DbTimings | null;
}

/** SQLite: reads of committed data, and write transactions run one at a time in this process. */
export class SqliteDatabase implements Database {
  readonly dialect = "sqlite" as const;
  private tail: Promise<void> = Promise.resolve();
  private open = false;
  private changed = 0;
  /** Hooks of the open transaction (one at a time: the write lock), run once it commits. */
  private onCommit: (() => void)[] | null = null;
  private readonly totalChanges;
  timings: DbTimings | null = null;

  constructor(
    readonly read: Queryable,
    private readonly writer: Tx,
    private readonly writerSqlite: Sqlite,
  ) {
    this.totalChanges = writerSqlite.query<{ n: number }, []>("SELECT total_changes() AS n");
  }

  get ownEpoch(): number {
    return this.changed;
  }

  /** BEGIN IMMEDIATE … COMMIT on the write connection, after every earlier one in this process. */
  async transaction<T>(fn: (tx: Tx) => Promise<T> | T): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    const asked = performance.now();
    await previous;
    this.open = true;
    const began = performance.now();
    let committed = false;
    const hooks: (() => void)[] = [];
    this.onCommit = hooks;
    try {
      this.writerSqlite.exec("BEGIN IMMEDIATE");
      if (REPLAY) {
        try {
          await fn(this.writer);
        } finally {
          this.writerSqlite.exec("ROLLBACK");
          hooks.length = 0;
        }
        this.writerSqlite.exec("BEGIN IMMEDIATE");
      }
      const before = this.totalChanges.get()!.n;
      let out: T;
      try {
        out = await fn(this.writer);
      } catch (error) {
        this.writerSqlite.exec("ROLLBACK");
        throw error;
      }
      const wrote = this.totalChanges.get()!.n !== before;
      this.writerSqlite.exec("COMMIT");
      committed = true;
      if (wrote) this.changed++;
      return out;
    } finally {
      this.open = false;
      this.onCommit = null;
      release();
      this.timings?.transaction((began - asked) / 1000, (performance.now() - began) / 1000, committed);
      if (committed) for (const fn of hooks) runHook(fn);
    }
  }

  afterCommit(tx: Tx | undefined, fn: () => void): void {
    if (tx !== this.writer || !this.open || !this.onCommit) {
      runHook(fn);
      return;
    }
    this.onCommit.push(fn);
  }

  get inTransaction(): boolean {
    return this.open;
  }

  readView<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return fn(this.read);
  }
}
