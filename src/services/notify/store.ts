// The notification domain's queries: thread participants, thread activity, inboxes, mail settings
// and unsubscribe tokens. Async and built from `tables(q)`, so both databases run the same code.
import { and, asc, desc, eq, gt, inArray, isNotNull, lt, or, sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import type { notifications, threadActivity, threadParticipants } from "../../db/schema/index.ts";
import type { SubjectKind } from "../../db/schema/notifications.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type ParticipantRow = typeof threadParticipants.$inferSelect;
export type ActivityRow = typeof threadActivity.$inferSelect;
export type NotificationRow = typeof notifications.$inferSelect;

/** Rows per multi-row statement (SQLite's parameter limit holds 500 × 13 columns). */
export const CHUNK = 500;

export function chunked<T>(list: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

// — Participants

/** Every participant row of a thread (muted ones too). */
export async function participantsOf(q: Queryable, kind: SubjectKind, subjectId: string): Promise<ParticipantRow[]> {
  const { threadParticipants } = tables(q);
  return await q
    .select()
    .from(threadParticipants)
    .where(and(eq(threadParticipants.subjectKind, kind), eq(threadParticipants.subjectId, subjectId)));
}

/** One participant row, or null. */
export async function participant(q: Queryable, kind: SubjectKind, subjectId: string, userId: string): Promise<ParticipantRow | null> {
  const { threadParticipants } = tables(q);
  return (
    one(
      await q
        .select()
        .from(threadParticipants)
        .where(and(eq(threadParticipants.subjectKind, kind), eq(threadParticipants.subjectId, subjectId), eq(threadParticipants.userId, userId)))
        .limit(1),
    ) ?? null
  );
}

/** Inserts a participant row. */
export async function insertParticipant(tx: Tx, row: ParticipantRow): Promise<void> {
  const { threadParticipants } = tables(tx);
  await tx.insert(threadParticipants).values(row).onConflictDoNothing();
}

/** Sets a participant's reason and/or mute flag. */
export async function updateParticipant(
  tx: Tx,
  kind: SubjectKind,
  subjectId: string,
  userId: string,
  set: { reason?: string | null; muted?: boolean; updatedAt: number },
): Promise<void> {
  const { threadParticipants } = tables(tx);
  await tx
    .update(threadParticipants)
    .set(set)
    .where(and(eq(threadParticipants.subjectKind, kind), eq(threadParticipants.subjectId, subjectId), eq(threadParticipants.userId, userId)));
}

// — Activity

export async function insertActivity(tx: Tx, row: ActivityRow): Promise<void> {
  const { threadActivity } = tables(tx);
  await tx.insert(threadActivity).values(row);
}

export async function activityById(q: Queryable, id: string): Promise<ActivityRow | null> {
  const { threadActivity } = tables(q);
  return one(await q.select().from(threadActivity).where(eq(threadActivity.id, id)).limit(1)) ?? null;
}

/** A thread's activities after `after` (epoch ms), oldest first, at most `limit`. */
export async function activitiesAfter(q: Queryable, kind: SubjectKind, subjectId: string, after: number, limit: number): Promise<ActivityRow[]> {
  const { threadActivity } = tables(q);
  return await q
    .select()
    .from(threadActivity)
    .where(and(eq(threadActivity.subjectKind, kind), eq(threadActivity.subjectId, subjectId), gt(threadActivity.createdAt, after)))
    .orderBy(asc(threadActivity.createdAt), asc(threadActivity.id))
    .limit(limit);
}

/** Deletes activity older than `before`; answers how many. */
/** Drops a deleted thread's inbox rows, participants and activity; answers how many notifications went. */
export async function deleteThread(tx: Tx, kind: SubjectKind, subjectId: string): Promise<number> {
  const { notifications, threadParticipants, threadActivity } = tables(tx);
  const gone = await tx
    .delete(notifications)
    .where(and(eq(notifications.subjectKind, kind), eq(notifications.subjectId, subjectId)))
    .returning({ id: notifications.id });
  await tx.delete(threadParticipants).where(and(eq(threadParticipants.subjectKind, kind), eq(threadParticipants.subjectId, subjectId)));
  await tx.delete(threadActivity).where(and(eq(threadActivity.subjectKind, kind), eq(threadActivity.subjectId, subjectId)));
  return gone.length;
}

export async function pruneActivity(tx: Tx, before: number): Promise<number> {
  const { threadActivity } = tables(tx);
  const rows = await tx.delete(threadActivity).where(lt(threadActivity.createdAt, before)).returning({ id: threadActivity.id });
  return rows.length;
}

// — Watchers

/** The people watching `repoId` at `all` and those ignoring it. */
export async function watchersOf(q: Queryable, repoId: string): Promise<{ all: string[]; ignore: string[] }> {
  const { subscriptions } = tables(q);
  const rows = await q
    .select({ userId: subscriptions.userId, level: subscriptions.level })
    .from(subscriptions)
    .where(and(eq(subscriptions.repoId, repoId), inArray(subscriptions.level, ["all", "ignore"])));
  return { all: rows.filter((r) => r.level === "all").map((r) => r.userId), ignore: rows.filter((r) => r.level === "ignore").map((r) => r.userId) };
}

// — People: mail settings and addresses

/** Of `userIds`, those with mail on (no row = on) and a confirmed sign-in address: id → address. */
export async function mailable(q: Queryable, userIds: readonly string[]): Promise<Map<string, string>> {
  const { users, notificationPrefs } = tables(q);
  const out = new Map<string, string>();
  for (const part of chunked(userIds)) {
    const rows = await q
      .select({ id: users.id, email: users.email, on: notificationPrefs.email })
      .from(users)
      .leftJoin(notificationPrefs, eq(notificationPrefs.userId, users.id))
      .where(and(inArray(users.id, part), isNotNull(users.emailVerifiedAt), sql`${users.disabledAt} IS NULL`));
    for (const r of rows) if (r.on !== false) out.set(r.id, r.email);
  }
  return out;
}

/** A person's mail setting (default on). */
export async function mailSetting(q: Queryable, userId: string): Promise<boolean> {
  const { notificationPrefs } = tables(q);
  const row = one(await q.select({ email: notificationPrefs.email }).from(notificationPrefs).where(eq(notificationPrefs.userId, userId)).limit(1));
  return row?.email ?? true;
}

export async function setMailSetting(tx: Tx, userId: string, email: boolean, at: number): Promise<void> {
  const { notificationPrefs } = tables(tx);
  await tx
    .insert(notificationPrefs)
    .values({ userId, email, updatedAt: at })
    .onConflictDoUpdate({ target: notificationPrefs.userId, set: { email, updatedAt: at } });
}

// — Inboxes

export interface NotificationUpsert {
  id: string;
  userId: string;
  repoId: string;
  subjectKind: SubjectKind;
  subjectId: string;
  subjectNumber: number | null;
  title: string;
  reason: string;
  lastActivityId: string;
  lastActivityAt: number;
  /** For a new row: mail nothing from before this activity. */
  mailedThrough: number;
  at: number;
}

/**
 * Upserts inbox rows by (user, subject): unread again, reason and title as now; the last activity
 * moves only forward (a replayed or late fan-out never moves it back).
 */
export async function upsertNotifications(tx: Tx, rows: readonly NotificationUpsert[]): Promise<void> {
  const { notifications: n } = tables(tx);
  for (const part of chunked(rows)) {
    await tx
      .insert(n)
      .values(
        part.map((r) => ({
          id: r.id,
          userId: r.userId,
          repoId: r.repoId,
          subjectKind: r.subjectKind,
          subjectId: r.subjectId,
          subjectNumber: r.subjectNumber,
          title: r.title,
          reason: r.reason,
          unread: true,
          lastActivityId: r.lastActivityId,
          lastActivityAt: r.lastActivityAt,
          mailedThrough: r.mailedThrough,
          updatedAt: r.at,
          createdAt: r.at,
        })),
      )
      .onConflictDoUpdate({
        target: [n.userId, n.subjectKind, n.subjectId],
        set: {
          unread: sql`CASE WHEN excluded.last_activity_at >= ${n.lastActivityAt} THEN excluded.unread ELSE ${n.unread} END`,
          reason: sql`excluded.reason`,
          title: sql`excluded.title`,
          lastActivityId: sql`CASE WHEN excluded.last_activity_at >= ${n.lastActivityAt} THEN excluded.last_activity_id ELSE ${n.lastActivityId} END`,
          lastActivityAt: sql`CASE WHEN excluded.last_activity_at >= ${n.lastActivityAt} THEN excluded.last_activity_at ELSE ${n.lastActivityAt} END`,
          updatedAt: sql`CASE WHEN excluded.last_activity_at >= ${n.lastActivityAt} THEN excluded.updated_at ELSE ${n.updatedAt} END`,
        },
      });
  }
}

export async function notificationBySubject(q: Queryable, userId: string, kind: SubjectKind, subjectId: string): Promise<NotificationRow | null> {
  const { notifications: n } = tables(q);
  return (
    one(
      await q
        .select()
        .from(n)
        .where(and(eq(n.userId, userId), eq(n.subjectKind, kind), eq(n.subjectId, subjectId)))
        .limit(1),
    ) ?? null
  );
}

export async function notificationById(q: Queryable, id: string): Promise<NotificationRow | null> {
  const { notifications: n } = tables(q);
  return one(await q.select().from(n).where(eq(n.id, id)).limit(1)) ?? null;
}

/** Takes the row's write lock (PostgreSQL) so a concurrent fan-out of the thread waits for us. */
export async function lockNotification(tx: Tx, id: string): Promise<void> {
  const { notifications: n } = tables(tx);
  await tx
    .update(n)
    .set({ mailedThrough: sql`${n.mailedThrough}` })
    .where(eq(n.id, id));
}

export async function setMailedThrough(tx: Tx, id: string, at: number): Promise<void> {
  const { notifications: n } = tables(tx);
  await tx
    .update(n)
    .set({ mailedThrough: sql`CASE WHEN ${n.mailedThrough} > ${at} THEN ${n.mailedThrough} ELSE ${at} END` })
    .where(eq(n.id, id));
}

export async function setUnread(tx: Tx, id: string, unread: boolean): Promise<void> {
  const { notifications: n } = tables(tx);
  // Read on the web: what it showed is never mailed afterwards.
  const seen = { mailedThrough: sql`CASE WHEN ${n.mailedThrough} > ${n.lastActivityAt} THEN ${n.mailedThrough} ELSE ${n.lastActivityAt} END` };
  await tx
    .update(n)
    .set(unread ? { unread } : { unread, ...seen })
    .where(eq(n.id, id));
}

/** Marks a person's notifications read (of one repo; updated at or before `before`); answers how many. */
export async function markAllRead(tx: Tx, userId: string, o: { repoId?: string; before?: number }): Promise<number> {
  const { notifications: n } = tables(tx);
  const rows = await tx
    .update(n)
    .set({ unread: false, mailedThrough: sql`CASE WHEN ${n.mailedThrough} > ${n.lastActivityAt} THEN ${n.mailedThrough} ELSE ${n.lastActivityAt} END` })
    .where(
      and(
        eq(n.userId, userId),
        eq(n.unread, true),
        o.repoId ? eq(n.repoId, o.repoId) : undefined,
        o.before !== undefined ? sql`${n.updatedAt} <= ${o.before}` : undefined,
      ),
    )
    .returning({ id: n.id });
  return rows.length;
}

export interface InboxQuery {
  userId: string;
  unread?: boolean;
  reason?: string;
  repoId?: string;
  /** Keyset: rows strictly before (updatedAt, id). */
  before?: { updatedAt: number; id: string };
  limit: number;
}

/** A page of a person's inbox, newest activity first. */
export async function inboxPage(q: Queryable, o: InboxQuery): Promise<NotificationRow[]> {
  const { notifications: n } = tables(q);
  return await q
    .select()
    .from(n)
    .where(
      and(
        eq(n.userId, o.userId),
        o.unread !== undefined ? eq(n.unread, o.unread) : undefined,
        o.reason ? eq(n.reason, o.reason) : undefined,
        o.repoId ? eq(n.repoId, o.repoId) : undefined,
        o.before ? or(lt(n.updatedAt, o.before.updatedAt), and(eq(n.updatedAt, o.before.updatedAt), lt(n.id, o.before.id))) : undefined,
      ),
    )
    .orderBy(desc(n.updatedAt), desc(n.id))
    .limit(o.limit);
}

/** Unread notifications of a person per repository (the header count; filtered by read access after). */
export async function unreadByRepo(q: Queryable, userId: string): Promise<{ repoId: string; count: number }[]> {
  const { notifications: n } = tables(q);
  const rows = await q
    .select({ repoId: n.repoId, count: sql<number>`count(*)` })
    .from(n)
    .where(and(eq(n.userId, userId), eq(n.unread, true)))
    .groupBy(n.repoId);
  return rows.map((r) => ({ repoId: r.repoId, count: Number(r.count) }));
}

// — Repositories and orgs, batched (inbox pages)

export async function reposWithOrgs(
  q: Queryable,
  repoIds: readonly string[],
): Promise<
  Map<string, { repo: typeof import("../../db/schema/index.ts").repos.$inferSelect; org: typeof import("../../db/schema/index.ts").orgs.$inferSelect }>
> {
  const { repos, orgs } = tables(q);
  const out = new Map();
  for (const part of chunked(repoIds)) {
    if (!part.length) continue;
    const rows = await q.select({ repo: repos, org: orgs }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(inArray(repos.id, part));
    for (const r of rows) out.set(r.repo.id, r);
  }
  return out;
}

// — Unsubscribe tokens

export async function insertUnsubscribe(
  tx: Tx,
  row: { tokenHash: string; userId: string; repoId: string; subjectKind: SubjectKind; subjectId: string; createdAt: number; expiresAt: number },
): Promise<void> {
  const { mailUnsubscribes } = tables(tx);
  await tx.insert(mailUnsubscribes).values(row);
}

export async function unsubscribeByHash(q: Queryable, tokenHash: string) {
  const { mailUnsubscribes } = tables(q);
  return one(await q.select().from(mailUnsubscribes).where(eq(mailUnsubscribes.tokenHash, tokenHash)).limit(1)) ?? null;
}

export async function pruneUnsubscribes(tx: Tx, before: number): Promise<number> {
  const { mailUnsubscribes } = tables(tx);
  const rows = await tx.delete(mailUnsubscribes).where(lt(mailUnsubscribes.expiresAt, before)).returning({ h: mailUnsubscribes.tokenHash });
  return rows.length;
}

/** Handles of people by id (the actors a mail names). */
export async function handlesOf(q: Queryable, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { users } = tables(q);
  const rows = await q
    .select({ id: users.id, handle: users.handle })
    .from(users)
    .where(inArray(users.id, [...ids]));
  return new Map(rows.map((u) => [u.id, u.handle]));
}
