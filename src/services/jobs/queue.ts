// Durable background work: a row written in the same transaction as its cause (DESIGN.md).
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now } from "../context.ts";
import { insertJob } from "./store.ts";
import { wakeWorkers } from "./worker.ts";

/** The kinds of durable job the workers understand. */
export type JobKind = "repo.purge" | "repo.fork" | "repo.compact" | "repo.sweep" | "repo.gc" | "ci.trigger" | "billing.seats" | "mirror.sync" | "contributions.record";

/** Schedules a job; call inside the transaction of the write that causes it. */
export async function enqueueJob(tx: Tx, kind: JobKind, payload: unknown, delayMs = 0): Promise<string> {
  const id = newId();
  const t = now();
  await insertJob(tx, { id, kind, payload, runAt: t + delayMs, createdAt: t });
  // A due job wakes the workers of its kind in this process; their claim is a transaction, so it runs after this one commits.
  if (delayMs <= 0) wakeWorkers(kind);
  return id;
}
