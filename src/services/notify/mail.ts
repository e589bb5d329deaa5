// `notify.mail` (plan §3.6): one mail per person and thread for a burst of activity. Fan-out
// enqueues it with `unique` = (person, thread) and a delay (SVC_NOTIFY_MAIL_DELAY_MS), so the
// activities of the window fold into the one pending row. The attempt checks again that the person
// may read the repository and wants mail, then — in the job's completion transaction — takes the
// inbox row's lock, collects the activities after `mailed_through`, builds the message, records the
// unsubscribe token's hash, queues the message in the durable outbox and advances `mailed_through`.
// Why the lock first: an activity fanned out while this attempt runs folds into this very row; with
// the lock, either its fan-out committed before our read (its activity is in this mail) or it
// waits for our commit and then enqueues a new row.
import type { SubjectKind } from "../../db/schema/notifications.ts";
import { newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import type { Config } from "../../config.ts";
import { now, type Ctx } from "../context.ts";
import { readersAmong } from "../access/lookup.ts";
import type { Attempt } from "../jobs/engine.ts";
import { jobKind } from "../jobs/kind.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { notificationMail, type MailActivity } from "../mail/messages.ts";
import { threadPath } from "./schemas.ts";
import * as store from "./store.ts";

export interface MailPayload {
  userId: string;
  subjectKind: SubjectKind;
  subjectId: string;
}

/** One pending mail per person and thread (a burst folds into it); four at once per node. */
export const NOTIFY_MAIL = jobKind<MailPayload>("notify.mail", {
  concurrency: 4,
  leaseMs: 60_000,
  unique: (p) => `${p.userId}:${p.subjectKind}:${p.subjectId}`,
});

/** The most activities one mail lists (the rest are on the web). */
const MAX_ACTIVITIES = 50;
/** How long an unsubscribe link works. */
export const UNSUBSCRIBE_TTL_MS = 90 * 24 * 3600 * 1000;

/**
 * Who notification mail comes from. An explicit SVC_NOTIFY_MAIL_FROM wins; else
 * `"<instance>" <notifications@<host>>` with the host of the configured public URL (SVC_BASE_URL)
 * and the instance's name from SVC_MAIL_FROM's display name (else the host), as GitHub's
 * notifications@github.com; null (the transport's SVC_MAIL_FROM) when no public URL is configured
 * or its host is an IP address (no mailbox domain to name).
 */
export function notificationSender(config: Pick<Config, "notifyMailFrom" | "baseUrl" | "mail">): string | null {
  if (config.notifyMailFrom) return config.notifyMailFrom;
  if (!config.baseUrl) return null;
  const host = new URL(config.baseUrl).hostname.toLowerCase();
  if (!host || host.startsWith("[") || /^[0-9.]+$/.test(host) || !/^[a-z0-9.-]+$/.test(host)) return null;
  const configured = config.mail.transport === "null" ? "" : config.mail.from;
  const name = /^\s*"?([^"<>]*?)"?\s*<[^<>]*>\s*$/.exec(configured)?.[1]?.trim() || host;
  return `"${name.replace(/["\\]/g, "\\$&")}" <notifications@${host}>`;
}

/** The `notify.mail` handler. */
export async function mailNotification(ctx: Ctx, p: MailPayload, at: Attempt): Promise<void> {
  if (!ctx.mail) return;
  const n = await store.notificationBySubject(ctx.db.read, p.userId, p.subjectKind, p.subjectId);
  if (!n) return;
  const found = (await store.reposWithOrgs(ctx.db.read, [n.repoId])).get(n.repoId);
  if (!found) return;
  const { repo, org } = found;
  const address = (await store.mailable(ctx.db.read, [p.userId])).get(p.userId);
  // Never a mail about a repository the person can no longer read; nothing when mail is off.
  if (!address || !(await readersAmong(ctx, org, repo, [p.userId])).has(p.userId)) return;
  const base = ctx.baseUrl.replace(/\/+$/, "");
  const host = new URL(base).host;
  await at.complete(async (tx) => {
    await store.lockNotification(tx, n.id);
    const row = await store.notificationById(tx, n.id);
    if (!row) return;
    // They saw it on the web since: nothing to mail, and nothing of this burst later either.
    if (!row.unread) return void (await store.setMailedThrough(tx, row.id, row.lastActivityAt));
    const all = await store.activitiesAfter(tx, row.subjectKind, row.subjectId, row.mailedThrough, MAX_ACTIVITIES);
    const mine = all.filter((a) => a.actorUserId !== p.userId && (!Array.isArray(a.summary.only) || a.summary.only.includes(p.userId)));
    const through = all.length ? all[all.length - 1]!.createdAt : row.mailedThrough;
    if (!mine.length) return void (await store.setMailedThrough(tx, row.id, through));
    const actorIds = [...new Set(mine.map((a) => a.actorUserId).filter((x): x is string => x !== null))];
    const handles = await store.handlesOf(tx, actorIds);
    const token = `svcu_${newSecret()}`;
    const t = now();
    await store.insertUnsubscribe(tx, {
      tokenHash: hashSecret(token),
      userId: p.userId,
      repoId: row.repoId,
      subjectKind: row.subjectKind,
      subjectId: row.subjectId,
      createdAt: t,
      expiresAt: t + UNSUBSCRIBE_TTL_MS,
    });
    const last = mine[mine.length - 1]!;
    const activities: MailActivity[] = mine.map((a) => ({
      actor: a.actorUserId ? (handles.get(a.actorUserId) ?? null) : null,
      kind: a.kind,
      summary: a.summary,
    }));
    await enqueueMail(
      ctx,
      tx,
      notificationMail({
        to: address,
        from: notificationSender(ctx.config),
        org: org.name,
        repo: repo.name,
        subject: { kind: row.subjectKind, number: last.subjectNumber, title: last.title },
        reason: row.reason,
        threadUrl: `${base}${threadPath(org.name, repo.name, row.subjectKind, row.subjectId, last.subjectNumber)}`,
        unsubscribeUrl: `${base}/notifications/unsubscribe?token=${token}`,
        host,
        activities,
      }),
    );
    await store.setMailedThrough(tx, row.id, through);
  });
}
