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

/** Reads of committed data, and serialized write transactions. */
export class Database {
  private tail: Promise<void> = Promise.resolve();
  private open = false;
  private changed = 0;
  private readonly totalChanges;

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
    await previous;
    this.open = true;
    try {
      this.writerSqlite.exec("BEGIN IMMEDIATE");
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
      if (wrote) this.changed++;
      return out;
    } finally {
      this.open = false;
      release();
    }
  }

  /** Whether a transaction is open now (diagnostics and tests). */
  get inTransaction(): boolean {
    return this.open;
  }
}
