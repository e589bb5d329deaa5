// The `thread.activity` subscriber (plan §3.6): rows only, in the transaction of whatever
// happened in the thread — the participants (strongest reason kept), the activity row, and one
// `notify.fanout` job that works out who hears about it.
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import type { EventOf, NotifyReason, ThreadActivityEvent } from "../events/types.ts";
import { NOTIFY_FANOUT } from "./fanout.ts";
import * as store from "./store.ts";

/** Reasons from strongest to weakest: a person keeps the strongest one they ever had in a thread. */
const RANK: readonly NotifyReason[] = ["author", "review_requested", "assign", "mention", "review", "comment", "ci_activity", "watching"];

/** Whether `a` is a stronger reason than `b` (null: no reason yet). */
export function stronger(a: string, b: string | null): boolean {
  if (b === null) return true;
  const ia = RANK.indexOf(a as NotifyReason);
  const ib = RANK.indexOf(b as NotifyReason);
  return ia >= 0 && (ib < 0 || ia < ib);
}

/** Most excerpt a summary keeps (the rest is on the web). */
const EXCERPT_MAX = 500;
const COMMENT_IDS_MAX = 20;

/** Records one thread activity: participants, the activity row, the fan-out job. */
export async function recordActivity(ctx: Ctx, tx: Tx, e: ThreadActivityEvent): Promise<void> {
  const t = now();
  const kind = e.subject.kind;
  // One row per person: the strongest of the reasons this event gives them.
  const wanted = new Map<string, NotifyReason>();
  for (const p of e.participants) {
    const had = wanted.get(p.userId);
    if (had === undefined || stronger(p.reason, had)) wanted.set(p.userId, p.reason);
  }
  for (const [userId, reason] of wanted) {
    const row = await store.participant(tx, kind, e.subject.id, userId);
    if (!row) {
      await store.insertParticipant(tx, {
        subjectKind: kind,
        subjectId: e.subject.id,
        repoId: e.repoId,
        userId,
        reason,
        muted: false,
        createdAt: t,
        updatedAt: t,
      });
    } else if (stronger(reason, row.reason)) {
      await store.updateParticipant(tx, kind, e.subject.id, userId, { reason, updatedAt: t });
    }
  }
  const summary: Record<string, unknown> = { ...e.summary };
  if (typeof summary.excerpt === "string" && summary.excerpt.length > EXCERPT_MAX) summary.excerpt = `${summary.excerpt.slice(0, EXCERPT_MAX - 1)}…`;
  if (Array.isArray(summary.comment_ids) && summary.comment_ids.length > COMMENT_IDS_MAX) summary.comment_ids = summary.comment_ids.slice(0, COMMENT_IDS_MAX);
  // Why stored in the summary: fan-out and mail both honour it, and the table has no column for it.
  if (e.only) summary.only = [...new Set(e.only)];
  else delete summary.only;
  const activityId = newId();
  await store.insertActivity(tx, {
    id: activityId,
    repoId: e.repoId,
    orgId: e.orgId,
    subjectKind: kind,
    subjectId: e.subject.id,
    subjectNumber: e.subject.number,
    title: e.subject.title,
    kind: e.activity,
    actorUserId: e.actorUserId,
    summary,
    createdAt: t,
  });
  await ctx.work.enqueue(tx, NOTIFY_FANOUT, { activityId, subjectKind: kind, subjectId: e.subject.id });
}

/**
 * The `thread.deleted` subscriber: a deleted thread (an issue) leaves no notification pointing at
 * a 404, nor participants or activity; a fan-out or mail job already queued for it finds nothing
 * and ends (fanout.ts, mail.ts).
 */
export async function forgetThread(_ctx: Ctx, tx: Tx, e: EventOf<"thread.deleted">): Promise<void> {
  await store.deleteThread(tx, e.subject.kind, e.subject.id);
}
