// Wake-ups (DESIGN.md "Background work"): a hint that something changed, sent to every
// subscriber of a topic. Inside a transaction a notification is sent only after COMMIT, so a
// woken worker never looks before the rows it was told about are visible. A signal is never the
// only path: every waiter also polls (bounded), so a lost signal costs latency, not work.
//
// LocalSignals: in-process (one node, SQLite). PgSignals (pg-signals.ts): the same plus NOTIFY /
// LISTEN across the nodes sharing one PostgreSQL database.
import type { Database, Tx } from "../../db/database.ts";

/** The topics: durable work by kind, CI queues by org key, authority facts. */
export type Topic = "work" | "ci.queue" | "facts";

/** The key of a synthetic "look again" (e.g. after PgSignals' LISTEN reconnected): anything of the topic may have changed. */
export const ANY_KEY = "*";

export interface Signals {
  /** A hint to every subscriber of `topic` (on every node); inside `tx` it is sent after COMMIT. */
  notify(topic: Topic, key: string, tx?: Tx): void;
  /** Calls `fn` with the key of every notification of `topic`; answers the unsubscribe. */
  subscribe(topic: Topic, fn: (key: string) => void): () => void;
  close(): Promise<void>;
}

/** Signals within this process. */
export class LocalSignals implements Signals {
  private readonly subs = new Map<Topic, Set<(key: string) => void>>();
  private closed = false;

  constructor(private readonly db: Database) {}

  notify(topic: Topic, key: string, tx?: Tx): void {
    this.db.afterCommit(tx, () => this.deliver(topic, key));
  }

  subscribe(topic: Topic, fn: (key: string) => void): () => void {
    let set = this.subs.get(topic);
    if (!set) this.subs.set(topic, (set = new Set()));
    set.add(fn);
    return () => void set.delete(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subs.clear();
  }

  private deliver(topic: Topic, key: string): void {
    if (this.closed) return;
    for (const fn of this.subs.get(topic) ?? []) {
      try {
        fn(key);
      } catch {
        // Why: one subscriber's failure must not keep the others asleep; they poll anyway.
      }
    }
  }
}
