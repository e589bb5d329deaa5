// A person's inbox (plan §3.6, DECISIONS §5 Notifications): list, mark read/unread, read all,
// mute a thread, the unread count, the mail setting. Every read filters by current read access:
// the page's repositories are decided for the caller (`decide(…, "repo:read")`), so a person who
// lost access never sees a notification about that repository again, in the list or the count.
import { Invalid, NotFound } from "../../errors.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import { now, type Ctx } from "../context.ts";
import { callerFacts, decide, enforce, loadFacts, type Facts } from "../access/access.ts";
import { findOrg, findRepo } from "../access/lookup.ts";
import type { Principal } from "../access/principal.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { threadPath, type NotificationBody } from "./schemas.ts";
import * as store from "./store.ts";

type PersonCaller = Extract<Facts["caller"], { kind: "person" }>;

/** The person a caller speaks for: a session or a personal token (401 anonymous or a service token). */
export function personCaller(actor: Principal): PersonCaller {
  const c = callerFacts(actor);
  if (c.kind !== "person") enforce(decide({ caller: c, orgRole: null }, { kind: "account:person" }));
  return c as PersonCaller;
}

/**
 * Which of `repoIds` the caller may read now. Token scopes do not narrow an inbox (notifications
 * are about the person, any personal token reads them), but a token minted for one org or one
 * repository sees only that org's or repository's.
 */
async function readable(ctx: Ctx, actor: Principal, c: PersonCaller, repoIds: readonly string[]) {
  const found = await store.reposWithOrgs(ctx.db.read, repoIds);
  const out = new Map<string, { repo: Repo; org: Org }>();
  for (const [id, r] of found) {
    const facts = await loadFacts(ctx, actor, r.org, r.repo);
    facts.caller = { ...c, scopes: "all" };
    if (decide(facts, "repo:read").allow) out.set(id, r);
  }
  return out;
}

function bodyOf(ctx: Ctx, row: store.NotificationRow, r: { repo: Repo; org: Org }): NotificationBody {
  return {
    id: row.id,
    repo: { org: r.org.name, name: r.repo.name },
    subject: {
      kind: row.subjectKind,
      number: row.subjectNumber,
      id: row.subjectId,
      title: row.title,
      url: `${ctx.baseUrl.replace(/\/+$/, "")}${threadPath(r.org.name, r.repo.name, row.subjectKind, row.subjectId, row.subjectNumber)}`,
    },
    reason: row.reason,
    unread: row.unread,
    updated_at: row.updatedAt,
  };
}

const REASONS: ReadonlySet<string> = new Set(["author", "comment", "review", "review_requested", "assign", "mention", "watching", "ci_activity"]);

export interface ListInput {
  unread?: string;
  reason?: string;
  repo?: string;
  limit?: string;
  cursor?: string;
}

/** Resolves `org/name` to a repository id the caller may read (404 otherwise, as everywhere). */
async function repoFilter(ctx: Ctx, actor: Principal, c: PersonCaller, ref: string): Promise<string> {
  const m = /^([^/]{1,100})\/([^/]{1,100})$/.exec(ref);
  if (!m) throw Invalid("repo must be org/name");
  const org = await findOrg(ctx, m[1]!);
  const repo = org ? await findRepo(ctx, org.id, m[2]!) : null;
  if (!repo || !(await readable(ctx, actor, c, [repo.id])).has(repo.id)) throw NotFound("repository not found");
  return repo.id;
}

function isCursor(k: unknown): k is [number, string] {
  return Array.isArray(k) && k.length === 2 && Number.isInteger(k[0]) && typeof k[1] === "string" && k[1].length <= 64;
}

/** GET /v1/notifications: newest activity first, filtered by read access; `unread_count` over the whole inbox. */
export async function listNotifications(
  ctx: Ctx,
  actor: Principal,
  input: ListInput,
): Promise<{ notifications: NotificationBody[]; next_cursor: string | null; unread_count: number }> {
  const c = personCaller(actor);
  const page = parsePage(input, isCursor);
  let unread: boolean | undefined;
  if (input.unread !== undefined && input.unread !== "") {
    if (input.unread !== "true" && input.unread !== "false") throw Invalid("unread must be true or false");
    unread = input.unread === "true";
  }
  if (input.reason && !REASONS.has(input.reason)) throw Invalid(`reason must be one of ${[...REASONS].join(", ")}`);
  const repoId = input.repo ? await repoFilter(ctx, actor, c, input.repo) : undefined;
  const out: NotificationBody[] = [];
  let before = page.after ? { updatedAt: page.after[0], id: page.after[1] } : undefined;
  let more = false;
  // Rows of repositories the caller no longer reads are skipped; a few reads fill the page.
  for (let round = 0; round < 5 && out.length < page.limit; round++) {
    const rows = await store.inboxPage(ctx.db.read, { userId: c.userId, unread, reason: input.reason, repoId, before, limit: page.limit + 1 });
    const ok = await readable(ctx, actor, c, [...new Set(rows.map((r) => r.repoId))]);
    more = false;
    for (let i = 0; i < rows.length; i++) {
      if (out.length === page.limit || i === page.limit) {
        more = true;
        break;
      }
      const row = rows[i]!;
      before = { updatedAt: row.updatedAt, id: row.id };
      const r = ok.get(row.repoId);
      if (r) out.push(bodyOf(ctx, row, r));
    }
    if (!more) break;
  }
  return {
    notifications: out,
    next_cursor: more && before ? encodeCursor([before.updatedAt, before.id]) : null,
    unread_count: await unreadCount(ctx, actor),
  };
}

/** Unread notifications about repositories the caller may read now (the header bell). */
export async function unreadCount(ctx: Ctx, actor: Principal): Promise<number> {
  const c = personCaller(actor);
  const groups = await store.unreadByRepo(ctx.db.read, c.userId);
  if (!groups.length) return 0;
  const ok = await readable(
    ctx,
    actor,
    c,
    groups.map((g) => g.repoId),
  );
  return groups.reduce((sum, g) => sum + (ok.has(g.repoId) ? g.count : 0), 0);
}

/** The caller's notification `id` they may still read, or 404. */
async function own(ctx: Ctx, actor: Principal, id: string) {
  const c = personCaller(actor);
  if (id.length > 64) throw NotFound("notification not found");
  const row = await store.notificationById(ctx.db.read, id);
  if (!row || row.userId !== c.userId) throw NotFound("notification not found");
  const r = (await readable(ctx, actor, c, [row.repoId])).get(row.repoId);
  if (!r) throw NotFound("notification not found");
  return { c, row, r };
}

/** PATCH /v1/notifications/{id} `{ unread }`. */
export async function patchNotification(ctx: Ctx, actor: Principal, id: string, input: { unread: boolean }): Promise<NotificationBody> {
  const { row, r } = await own(ctx, actor, id);
  await ctx.db.transaction((tx) => store.setUnread(tx, row.id, input.unread));
  return bodyOf(ctx, { ...row, unread: input.unread }, r);
}

/** POST /v1/notifications/read-all `{ repo?, before? }`: answers how many were marked. */
export async function readAll(ctx: Ctx, actor: Principal, input: { repo?: string; before?: number }): Promise<number> {
  const c = personCaller(actor);
  const repoId = input.repo ? await repoFilter(ctx, actor, c, input.repo) : undefined;
  const before = input.before;
  if (before !== undefined && (!Number.isSafeInteger(before) || before < 0)) throw Invalid("before must be epoch milliseconds");
  // A token bound to one repository marks only that repository's.
  const bound = c.tokenRepoId ?? undefined;
  if (bound && repoId && bound !== repoId) throw NotFound("repository not found");
  return await ctx.db.transaction((tx) => store.markAllRead(tx, c.userId, { repoId: repoId ?? bound, before }));
}

/** PUT / DELETE /v1/notifications/{id}/mute: the thread no longer notifies the person (or again). */
export async function muteNotification(ctx: Ctx, actor: Principal, id: string, muted: boolean): Promise<void> {
  const { c, row } = await own(ctx, actor, id);
  await ctx.db.transaction(async (tx) => {
    await setMuted(tx, { userId: c.userId, repoId: row.repoId, subjectKind: row.subjectKind, subjectId: row.subjectId }, muted);
    if (muted) await store.setUnread(tx, row.id, false);
  });
}

/** Mutes or unmutes a thread for a person (a participant row with no reason when they had none). */
export async function setMuted(
  tx: Parameters<typeof store.insertParticipant>[0],
  t: { userId: string; repoId: string; subjectKind: store.ParticipantRow["subjectKind"]; subjectId: string },
  muted: boolean,
): Promise<void> {
  const at = now();
  const row = await store.participant(tx, t.subjectKind, t.subjectId, t.userId);
  if (!row) {
    if (muted)
      await store.insertParticipant(tx, {
        subjectKind: t.subjectKind,
        subjectId: t.subjectId,
        repoId: t.repoId,
        userId: t.userId,
        reason: null,
        muted: true,
        createdAt: at,
        updatedAt: at,
      });
    return;
  }
  if (row.muted !== muted) await store.updateParticipant(tx, t.subjectKind, t.subjectId, t.userId, { muted, updatedAt: at });
}

/** GET /v1/notifications/settings. */
export async function getSettings(ctx: Ctx, actor: Principal): Promise<{ email: boolean }> {
  const c = personCaller(actor);
  return { email: await store.mailSetting(ctx.db.read, c.userId) };
}

/** PUT /v1/notifications/settings `{ email }` (a token bound to one repository does not speak for the account). */
export async function putSettings(ctx: Ctx, actor: Principal, input: { email: boolean }): Promise<{ email: boolean }> {
  const c = personCaller(actor);
  enforce(decide({ caller: c, orgRole: null }, { kind: "account:person" }));
  await ctx.db.transaction((tx) => store.setMailSetting(tx, c.userId, input.email, now()));
  return { email: input.email };
}
