// Comments on issues and the timeline of events (DECISIONS §5 "Issues"; issue 32). A comment is
// written with its `issue.commented` webhook event and its thread activity in one transaction; a
// deleted comment keeps its row (body gone, `deleted_at` set) so list snapshots know when it counted.
import { Forbidden, NotFound, Unprocessable } from "../../errors.ts";
import { newId } from "../../util/ids.ts";
import { personOf } from "../access/principal.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import type { NotifyReason } from "../events/types.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { checkRate, eventBodies, issueRow, visibleEvents } from "./issues.ts";
import { renderMarkdown } from "./render.ts";
import { type IssueComment, type IssueCommentCreate, type IssueCommentList, type IssueEventList, MAX_BODY, type PageOnly } from "./schemas.ts";
import * as store from "./store.ts";
import type { IssueCommentRow } from "./store.ts";

const EXCERPT = 500;

function checkBody(body: unknown): string {
  if (typeof body !== "string" || body.trim() === "") throw Unprocessable("body must not be empty");
  if (body.length > MAX_BODY) throw Unprocessable(`body must be at most ${MAX_BODY} characters`);
  if (body.includes("\0")) throw Unprocessable("body must not contain NUL");
  return body;
}

/** The API shapes of comment rows. */
export async function commentBodies(ctx: Ctx, rows: IssueCommentRow[]): Promise<IssueComment[]> {
  const handles = await store.handlesOf(
    ctx.db.read,
    rows.map((r) => r.authorUserId).filter((x): x is string => x !== null),
  );
  return rows.map((r) => ({
    id: r.id,
    author: r.authorUserId && handles.has(r.authorUserId) ? { user_id: r.authorUserId, handle: handles.get(r.authorUserId)! } : null,
    body: r.body ?? "",
    body_html: r.bodyHtml ?? "",
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    edited_at: r.editedAt,
  }));
}

function isKey(k: unknown): k is [number, string] {
  return Array.isArray(k) && k.length === 2 && typeof k[0] === "number" && typeof k[1] === "string" && k[1].length <= 64;
}

/** POST …/issues/{n}/comments: readers (any signed-in person on a public repository), rate limited per person. */
export async function postIssueComment(ctx: Ctx, t: RepoTarget, number: number, input: IssueCommentCreate): Promise<IssueComment> {
  const issue = await issueRow(ctx, t, number);
  need(t, { kind: "issue:discuss" });
  const me = personOf(t.actor)!;
  const body = checkBody(input.body);
  await checkRate(ctx, me.id);
  const rendered = await renderMarkdown(ctx, t, body);
  const row = await ctx.db.transaction(async (tx) => {
    const cur = await store.issueByNumber(tx, t.repo.id, number);
    if (!cur) throw NotFound("issue not found");
    const at = now();
    const r: IssueCommentRow = {
      id: newId(),
      issueId: cur.id,
      repoId: cur.repoId,
      authorUserId: me.id,
      body,
      bodyHtml: rendered.html,
      createdAt: at,
      updatedAt: at,
      editedAt: null,
      deletedAt: null,
    };
    await store.insertComment(tx, r);
    await store.touchIssue(tx, cur.id, at, 1);
    await ctx.events.record(tx, {
      repoId: cur.repoId,
      orgId: t.org.id,
      kind: "issue.commented",
      payload: {
        issue: { number: cur.number, title: cur.title, state: cur.state },
        comment: { id: r.id, author: { user_id: me.id, handle: me.handle }, body: body.slice(0, EXCERPT) },
      },
      actorUserId: me.id,
    });
    const participants: { userId: string; reason: NotifyReason }[] = [{ userId: me.id, reason: "comment" }];
    for (const m of rendered.mentions) if (m.id !== me.id) participants.push({ userId: m.id, reason: "mention" });
    await ctx.events.emit(tx, {
      kind: "thread.activity",
      repoId: cur.repoId,
      orgId: t.org.id,
      subject: { kind: "issue", id: cur.id, number: cur.number, title: cur.title },
      activity: "commented",
      actorUserId: me.id,
      participants,
      summary: { excerpt: body.slice(0, EXCERPT), comment_ids: [r.id] },
    });
    return r;
  });
  void issue;
  return (await commentBodies(ctx, [row]))[0]!;
}

/** GET …/issues/{n}/comments: oldest first. */
export async function listIssueComments(ctx: Ctx, t: RepoTarget, number: number, q: PageOnly): Promise<IssueCommentList> {
  const issue = await issueRow(ctx, t, number);
  const page = parsePage(q, isKey);
  const rows = await store.commentsOf(ctx.db.read, issue.id, page.after, page.limit + 1);
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  const last = items[items.length - 1];
  return { comments: await commentBodies(ctx, items), next_cursor: more && last ? encodeCursor([last.createdAt, last.id]) : null };
}

async function mustComment(ctx: Ctx, issueId: string, id: string): Promise<IssueCommentRow> {
  const row = id.length <= 64 ? await store.commentById(ctx.db.read, issueId, id) : null;
  if (!row) throw NotFound("comment not found");
  return row;
}

/** PATCH …/issues/{n}/comments/{id}: its author edits the body (the issue's `updated_at` stays). */
export async function patchIssueComment(ctx: Ctx, t: RepoTarget, number: number, id: string, input: IssueCommentCreate): Promise<IssueComment> {
  const issue = await issueRow(ctx, t, number);
  const row = await mustComment(ctx, issue.id, id);
  need(t, { kind: "issue:discuss" });
  if (row.authorUserId !== personOf(t.actor)!.id) throw Forbidden("only its author can edit a comment");
  const body = checkBody(input.body);
  const rendered = await renderMarkdown(ctx, t, body);
  const at = now();
  await ctx.db.transaction(async (tx) => store.updateComment(tx, row.id, { body, bodyHtml: rendered.html, editedAt: at, updatedAt: at }));
  return (await commentBodies(ctx, [{ ...row, body, bodyHtml: rendered.html, editedAt: at, updatedAt: at }]))[0]!;
}

/** DELETE …/issues/{n}/comments/{id}: its author or a repository admin. */
export async function deleteIssueComment(ctx: Ctx, t: RepoTarget, number: number, id: string): Promise<void> {
  const issue = await issueRow(ctx, t, number);
  const row = await mustComment(ctx, issue.id, id);
  need(t, { kind: "issue:comment-delete", author: row.authorUserId !== null && row.authorUserId === personOf(t.actor)?.id });
  await ctx.db.transaction(async (tx) => {
    const cur = await store.commentById(tx, issue.id, id);
    if (!cur) return;
    const at = now();
    await store.updateComment(tx, cur.id, { body: null, bodyHtml: null, deletedAt: at, updatedAt: at });
    await store.touchIssue(tx, issue.id, at, -1);
  });
}

/** GET …/issues/{n}/events: the timeline's events, oldest first (comments are listed by …/comments). */
export async function listIssueEvents(ctx: Ctx, t: RepoTarget, number: number, q: PageOnly): Promise<IssueEventList> {
  const issue = await issueRow(ctx, t, number);
  const page = parsePage(q, isKey);
  const rows = await store.eventsOf(ctx.db.read, issue.id, page.after, page.limit + 1);
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  const last = items[items.length - 1];
  // Why the cursor is the last row read, not shown: a hidden event still advances the page.
  return { events: await eventBodies(ctx, await visibleEvents(ctx, t, items)), next_cursor: more && last ? encodeCursor([last.createdAt, last.id]) : null };
}

/** One entry of an issue's timeline as the web shows it: a comment or an event, in time order. */
export type TimelineItem = { type: "comment"; at: number; comment: IssueComment } | { type: "event"; at: number; event: IssueEventList["events"][number] };

/** The first `limit` (at most 500) comments and events of an issue merged in time order (the web's issue page). */
export async function issueTimeline(ctx: Ctx, t: RepoTarget, number: number, limit = 500): Promise<TimelineItem[]> {
  const issue = await issueRow(ctx, t, number);
  const n = Math.min(Math.max(1, limit), 500);
  const [comments, events] = await Promise.all([store.commentsOf(ctx.db.read, issue.id, null, n), store.eventsOf(ctx.db.read, issue.id, null, n)]);
  const items: TimelineItem[] = [
    ...(await commentBodies(ctx, comments)).map((c) => ({ type: "comment" as const, at: c.created_at, comment: c })),
    ...(await eventBodies(ctx, await visibleEvents(ctx, t, events))).map((e) => ({ type: "event" as const, at: e.created_at, event: e })),
  ];
  return items.sort((a, b) => a.at - b.at).slice(0, n);
}
