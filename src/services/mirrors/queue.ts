// Asking for mirror syncs: at creation, by POST …/sync, by inbound pushes and by the schedule.
// A request that finds one already waiting (queued, not started) is folded into it, so a burst
// of deliveries of the same push (or of several pushes) costs one sync; a request made while a
// sync runs queues the next one, since the running sync may have listed the origin's refs
// before the push.
import type { Tx } from "../../db/database.ts";
import type { Repo } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { jobKind } from "../jobs/kind.ts";
import type { MirrorOrigin } from "./origin.ts";
import * as store from "./store.ts";

/** The payload of a `mirror.sync` job. */
export interface SyncJob {
  repoId: string;
  /** Identifies the request row this job takes when it starts. */
  request: string;
}

/**
 * One sync of a mirror from its origin; a mirror's syncs run one at a time, in order. The lease
 * is short and renewed while the sync runs (a first sync may take many minutes), so the syncs
 * queued behind one cut short by a crash wait seconds, not minutes.
 */
export const MIRROR_SYNC = jobKind<SyncJob>("mirror.sync", { key: (p) => `mirror:${p.repoId}`, concurrency: 2, leaseMs: 15_000 });

/** The schedule's pass, once a minute across the cluster (and at once on a new install). */
export const MIRROR_SCHEDULE = jobKind<unknown>("mirror.schedule", { every: { ms: 60_000, scope: "cluster", immediate: true } });

/** Queues a sync of `repoId`, or folds this request into the one waiting; `receivedAt` is an inbound push's receipt time. */
export async function requestSync(ctx: Ctx, tx: Tx, repoId: string, receivedAt: number | null): Promise<"queued" | "folded"> {
  const waiting = await store.pendingRequest(tx, repoId);
  if (waiting) {
    if (receivedAt !== null && (waiting.receivedAt === null || receivedAt < waiting.receivedAt)) await store.setReceivedAt(tx, repoId, receivedAt);
    return "folded";
  }
  const request = newId();
  await ctx.work.enqueue(tx, MIRROR_SYNC, { repoId, request });
  await store.insertRequest(tx, { repoId, jobId: request, receivedAt, requestedAt: now() });
  return "queued";
}

/** Records a new mirror's origin and queues its first sync (inside the repository's create transaction). */
export async function registerMirror(ctx: Ctx, tx: Tx, repo: Repo, origin: MirrorOrigin): Promise<void> {
  await store.insertMirror(tx, { repoId: repo.id, originKey: origin.key, username: origin.username, password: origin.password, createdAt: repo.createdAt });
  await requestSync(ctx, tx, repo.id, null);
}

/** The schedule's pass: a sync for every mirror not synced within the interval (and none waiting). */
export async function scheduleMirrorSyncs(ctx: Ctx): Promise<number> {
  const due = await store.dueMirrors(ctx.db.read, now() - ctx.config.mirrorSyncIntervalMs, 500);
  if (due.length === 0) return 0;
  return ctx.db.transaction(async (tx) => {
    let queued = 0;
    for (const id of due) if ((await requestSync(ctx, tx, id, null)) === "queued") queued++;
    return queued;
  });
}
