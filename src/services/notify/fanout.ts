// `notify.fanout` (plan §3.6): who hears about one thread activity. Recipients are the thread's
// participants (not muted) and the repository's watchers at `all`, less anyone ignoring the
// repository, the actor and muted rows; an activity's `only` narrows them. Everyone left must be
// able to read the repository now (`readersAmong`: `decide(…, "repo:read")` per person). Their
// inbox rows and their mail jobs are written with the job's completion, in one transaction.
import type { SubjectKind } from "../../db/schema/notifications.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import type { Attempt } from "../jobs/engine.ts";
import { jobKind } from "../jobs/kind.ts";
import { readersAmong } from "../access/lookup.ts";
import { NOTIFY_MAIL } from "./mail.ts";
import * as store from "./store.ts";

export interface FanoutPayload {
  activityId: string;
  subjectKind: SubjectKind;
  subjectId: string;
}

/** One thread's activities fan out in order (a per-thread key); four threads at once per node. */
export const NOTIFY_FANOUT = jobKind<FanoutPayload>("notify.fanout", {
  concurrency: 4,
  leaseMs: 120_000,
  key: (p) => `notify:${p.subjectKind}:${p.subjectId}`,
});

/** The people one activity notifies, with their reason, before the read check. */
export function recipientsOf(
  a: { actorUserId: string | null; summary: Record<string, unknown> },
  participants: readonly { userId: string; reason: string | null; muted: boolean }[],
  watchers: { all: readonly string[]; ignore: readonly string[] },
): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of watchers.all) out.set(w, "watching");
  // A participant's reason beats watching.
  for (const p of participants) if (!p.muted && p.reason !== null) out.set(p.userId, p.reason);
  for (const p of participants) if (p.muted) out.delete(p.userId);
  for (const i of watchers.ignore) out.delete(i);
  if (a.actorUserId) out.delete(a.actorUserId);
  const only = a.summary.only;
  if (Array.isArray(only)) {
    const keep = new Set(only.filter((x): x is string => typeof x === "string"));
    for (const id of [...out.keys()]) if (!keep.has(id)) out.delete(id);
  }
  return out;
}

/** The `notify.fanout` handler. */
export async function fanout(ctx: Ctx, p: FanoutPayload, at: Attempt): Promise<void> {
  const a = await store.activityById(ctx.db.read, p.activityId);
  if (!a) return; // pruned, or its repository is gone
  const found = (await store.reposWithOrgs(ctx.db.read, [a.repoId])).get(a.repoId);
  if (!found) return;
  const { repo, org } = found;
  const participants = await store.participantsOf(ctx.db.read, a.subjectKind, a.subjectId);
  const watchers = await store.watchersOf(ctx.db.read, a.repoId);
  const wanted = recipientsOf(a, participants, watchers);
  const readers = wanted.size ? await readersAmong(ctx, org, repo, [...wanted.keys()]) : new Set<string>();
  const recipients = [...wanted].filter(([userId]) => readers.has(userId));
  const addresses = recipients.length
    ? await store.mailable(
        ctx.db.read,
        recipients.map(([u]) => u),
      )
    : new Map<string, string>();
  const t = now();
  const delayMs = ctx.config.notifyMailDelayMs;
  await at.complete(async (tx) => {
    // Why again in the transaction: the thread may have been deleted (thread.deleted) since it was read.
    if (!(await store.activityById(tx, a.id))) return;
    await store.upsertNotifications(
      tx,
      recipients.map(([userId, reason]) => ({
        id: newId(),
        userId,
        repoId: a.repoId,
        subjectKind: a.subjectKind,
        subjectId: a.subjectId,
        subjectNumber: a.subjectNumber,
        title: a.title,
        reason,
        lastActivityId: a.id,
        lastActivityAt: a.createdAt,
        mailedThrough: a.createdAt - 1,
        at: t,
      })),
    );
    // Why after the upsert: the mail job locks the inbox row first, so a fold into a running attempt waits for it.
    // One multi-row INSERT per 500 people, not one enqueue each (bench/README §29: 500 watchers on PostgreSQL).
    await ctx.work.enqueueMany(
      tx,
      NOTIFY_MAIL,
      recipients.filter(([userId]) => addresses.has(userId)).map(([userId]) => ({ userId, subjectKind: a.subjectKind, subjectId: a.subjectId })),
      { delayMs },
    );
  });
}
