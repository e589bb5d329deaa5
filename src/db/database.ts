// The metadata database as services see it: queries of committed data, and write transactions
// run one at a time through `transaction`. Stores (src/services/<domain>/store.ts) take a
// `Queryable` (the read handle or an open transaction) and are async, so a second database
// (PostgreSQL, several nodes) replaces the stores and this class, not the services.
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

/**
 * Times every statement drizzle runs on `sqlite` (it prepares each query through `prepare`):
 * a thin wrapper over run/all/get/values of each prepared statement, reporting to `report` when
 * it answers a sink. Why per statement: bun:sqlite gives each statement methods specialised to
 * its parameter count, so one shared wrapper would call the wrong one.
 */
export function timeStatements(sqlite: Sqlite, report: () => ((seconds: number) => void) | null): void {
  const prepare = sqlite.prepare.bind(sqlite) as unknown as (...args: unknown[]) => Record<string, (...a: unknown[]) => unknown>;
  (sqlite as { prepare: unknown }).prepare = (...args: unknown[]) => {
    const stmt = prepare(...args);
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

function runHook(fn: () => void): void {
  try {
    fn();
  } catch {
    // Why: an after-commit hook is a wake-up; the work it announces is found by the next poll anyway.
  }
}

/** Reads of committed data, and serialized write transactions. */
export class Database {
  private tail: Promise<void> = Promise.resolve();
  private open = false;
  private changed = 0;
  /** Hooks of the open transaction, run in order once it commits (dropped on rollback). */
  private onCommit: (() => void)[] = [];
  private readonly totalChanges;
  /** Where statement and transaction durations go; null until metrics are wired. */
  timings: DbTimings | null = null;

  constructor(
    /** Queries outside a transaction; read-only, sees only committed data. */
    readonly read: Queryable,
    private readonly writer: Tx,
    private readonly writerSqlite: Sqlite,
  ) {
    this.totalChanges = writerSqlite.query<{ n: number }, []>("SELECT total_changes() AS n");
  }

  /**
   * Moves each time a transaction of this process commits a change: the fact cache compares it
   * on every request instead of asking SQLite (see services/access/fact-cache.ts).
   */
  get ownEpoch(): number {
    return this.changed;
  }

  /**
   * Runs `fn` in one write transaction (BEGIN IMMEDIATE … COMMIT), after every earlier one in
   * this process; a throw rolls everything back. `fn` must do database work only: no network or
   * object-store I/O while the write lock is held.
   */
  async transaction<T>(fn: (tx: Tx) => Promise<T> | T): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    const asked = performance.now();
    await previous;
    this.open = true;
    const began = performance.now();
    let committed = false;
    this.onCommit = [];
    try {
      this.writerSqlite.exec("BEGIN IMMEDIATE");
      if (REPLAY) {
        try {
          await fn(this.writer);
        } finally {
          this.writerSqlite.exec("ROLLBACK");
          this.onCommit = [];
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
      const hooks = this.onCommit;
      this.onCommit = [];
      release();
      this.timings?.transaction((began - asked) / 1000, (performance.now() - began) / 1000, committed);
      if (committed) for (const fn of hooks) runHook(fn);
    }
  }

  /**
   * Runs `fn` once the open transaction `tx` commits (never when it rolls back): wake-ups that
   * must not reach another worker before the rows they announce are visible. Outside a
   * transaction (`tx` omitted or none open) `fn` runs now. A throw from `fn` is not the
   * transaction's failure: it is caught and dropped (hooks are hints, never the only path).
   */
  afterCommit(tx: Tx | undefined, fn: () => void): void {
    if (tx !== this.writer || !this.open) {
      runHook(fn);
      return;
    }
    this.onCommit.push(fn);
  }

  /** Whether a transaction is open now (diagnostics and tests). */
  get inTransaction(): boolean {
    return this.open;
  }
}
