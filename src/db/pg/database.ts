// The `Database` surface over PostgreSQL (issue 27, plan-27 §1.5): one Bun.sql pool through
// drizzle-orm/bun-sql. No process-wide write lock: every write transaction is SERIALIZABLE, so
// the read-decides-write callbacks written against SQLite's single writer keep their meaning with
// many writers on many nodes; a serialization failure or deadlock (40001/40P01) reruns the
// callback from the start after a jittered backoff, and after RETRIES attempts the caller gets a
// 503 `database_busy`. After-commit hooks belong to one attempt of one transaction: a retried
// attempt's hooks are dropped with it.
//
// Retries queue behind each other: an attempt after a serialization failure begins with a lock
// that only retries take (LOCK TABLE svc_fact_epoch IN SHARE ROW EXCLUSIVE MODE, its first
// statement, so its snapshot is taken once the lock is held; the table is the fact epoch's base
// row, which no ordinary write touches). Retried writes then never fail each other, only first
// attempts; without it, many writers that read what the others write (40 machines completing
// jobs of one run: each settles the run by reading all its jobs) kept failing each other until
// some ran out of attempts (503; test/service/ci/lifetimes "40 machines" on PostgreSQL).
import { sql } from "drizzle-orm";
import type { PgDatabase as DrizzlePg } from "drizzle-orm/pg-core";
import { appErrorOf, databaseBusy, isRetryable, sqlState } from "./errors.ts";
import { type Database, type DbTimings, type Queryable, runHook, type Tx } from "../database.ts";

/** Attempts of one write transaction before 503 `database_busy`. */
export const RETRIES = 8;
/** Backoff before attempt n+1: up to min(5 ms · 2^(n-1), 200 ms), jittered (full jitter). */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return random() * Math.min(5 * 2 ** (attempt - 1), 200);
}

// drizzle's pg handle over any driver and schema.
type PgHandle = DrizzlePg<any, any, any>;

/**
 * What the wrapper counts of the pool's use (Bun.sql does not expose its pool's state): pool-level
 * statements and transactions running or waiting for a connection now. Each holds one connection
 * while it runs; beyond `size` they wait.
 */
export interface PoolUse {
  readonly size: number;
  inUse: number;
}

export class PgDatabase implements Database {
  readonly dialect = "pg" as const;
  private changed = 0;
  private open = 0;
  /** The hooks of each open attempt, by its transaction handle. */
  private readonly hooks = new WeakMap<object, (() => void)[]>();
  timings: DbTimings | null = null;
  /** Serialization failures and deadlocks retried, by SQLSTATE (metrics). */
  readonly retried = new Map<string, number>();

  constructor(
    readonly read: Queryable,
    /** The pool's use as the client wrapper counts it (metrics: svc_db_pool_connections). */
    readonly pool: PoolUse = { size: 0, inUse: 0 },
  ) {}

  get ownEpoch(): number {
    return this.changed;
  }

  get inTransaction(): boolean {
    return this.open > 0;
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T> | T): Promise<T> {
    const handle = this.read as unknown as PgHandle;
    const asked = performance.now();
    for (let attempt = 1; ; attempt++) {
      const began = performance.now();
      const hooks: (() => void)[] = [];
      let wrote = false;
      let out: T;
      try {
        out = await handle.transaction(
          async (tx) => {
            this.hooks.set(tx, hooks);
            this.open++;
            try {
              if (attempt > 1) await tx.execute(sql`LOCK TABLE svc_fact_epoch IN SHARE ROW EXCLUSIVE MODE`);
              const result = await fn(tx as unknown as Tx);
              // Did this transaction write? (a transaction id is assigned on the first write)
              const rows = (await tx.execute(sql`SELECT txid_current_if_assigned() IS NOT NULL AS wrote`)) as unknown as { wrote: boolean }[];
              wrote = rows[0]?.wrote === true;
              return result;
            } finally {
              this.open--;
              this.hooks.delete(tx);
            }
          },
          { isolationLevel: "serializable" },
        );
      } catch (error) {
        this.timings?.transaction((began - asked) / 1000, (performance.now() - began) / 1000, false);
        if (isRetryable(error)) {
          const state = sqlState(error) ?? "40001";
          this.retried.set(state, (this.retried.get(state) ?? 0) + 1);
          if (attempt >= RETRIES) throw databaseBusy();
          await Bun.sleep(backoffMs(attempt));
          continue;
        }
        throw appErrorOf(error) ?? error;
      }
      this.timings?.transaction((began - asked) / 1000, (performance.now() - began) / 1000, true);
      if (wrote) this.changed++;
      for (const h of hooks) runHook(h);
      return out;
    }
  }

  async readView<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    const handle = this.read as unknown as PgHandle;
    try {
      return await handle.transaction(async (tx) => await fn(tx as unknown as Queryable), { isolationLevel: "repeatable read", accessMode: "read only" });
    } catch (error) {
      throw appErrorOf(error) ?? error;
    }
  }

  afterCommit(tx: Tx | undefined, fn: () => void): void {
    const hooks = tx ? this.hooks.get(tx) : undefined;
    if (!hooks) {
      runHook(fn);
      return;
    }
    hooks.push(fn);
  }
}
