// Durable background work: a row written in the same transaction as its cause (DESIGN.md).
import { jobs } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import type { DbOrTx } from "../../db/client.ts";
import { now } from "../context.ts";

/** The kinds of durable job the workers understand. */
export type JobKind = "repo.purge" | "repo.compact" | "repo.sweep" | "repo.gc" | "webhook.deliver";

/** Schedules a job; call inside the transaction of the write that causes it. */
export function enqueueJob(db: DbOrTx, kind: JobKind, payload: unknown, delayMs = 0): string {
  const id = newId();
  const t = now();
  db.insert(jobs).values({ id, kind, payload, runAt: t + delayMs, createdAt: t }).run();
  return id;
}
