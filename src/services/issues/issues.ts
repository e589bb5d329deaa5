// Issues (DECISIONS §5 "Issues"; issue 32): open, read, list and search, edit, label, assign,
// close and reopen, delete. Every write is one transaction with its timeline events, its webhook
// event (`issue.opened`, `issue.closed`) and its thread activity (services/notify fans it out in
// a job, off the request path).
import type { Org, Repo } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { Invalid, NotFound, RateLimited, Unprocessable } from "../../errors.ts";
import { newId } from "../../util/ids.ts";
import { decide, loadFacts } from "../access/access.ts";
import { factsForPeople } from "../access/lookup.ts";
import { personOf } from "../access/principal.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { nextThreadNumber } from "../changes/numbers.ts";
import { now, type Ctx } from "../context.ts";
import type { NotifyReason } from "../events/types.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { renderMarkdown } from "./render.ts";
import {
  type Issue,
  type IssueCreate,
  type IssueEvent,
  type IssueList,
  type IssueListQuery,
  type IssuePatch,
  MAX_ASSIGNEES,
  MAX_BODY,
  MAX_LABELS_PER_ISSUE,
  MAX_TITLE,
} from "./schemas.ts";
import * as store from "./store.ts";
import type { IssueEventRow, IssueRow, LabelRow, ListFilter, SortKey } from "./store.ts";

/** How long the creation rate limit looks back. */
const RATE_WINDOW_MS = 3_600_000;
/** The excerpt of a body in a notification. */
const EXCERPT = 500;

// ── shapes ───────────────────────────────────────────────────────────────────────────────────

/** The API shape of a label row. */
export function labelBody(l: LabelRow) {
  return { name: l.name, color: l.color, description: l.description };
}

/** The API shapes of issue rows (labels, assignees and handles in one query each). */
export async function issueBodies(ctx: Ctx, rows: IssueRow[]): Promise<Issue[]> {
  const ids = rows.map((r) => r.id);
  const [labels, assignees, handles] = await Promise.all([
    store.labelsOfIssues(ctx.db.read, ids),
    store.assigneesOfIssues(ctx.db.read, ids),
    store.handlesOf(
      ctx.db.read,
      rows.flatMap((r) => [r.authorUserId, r.closedByUserId].filter((x): x is string => x !== null)),
    ),
  ]);
  return rows.map((r) => ({
    number: r.number,
    title: r.title,
    body: r.body,
    body_html: r.bodyHtml,
    state: r.state,
    close_reason: r.state === "closed" ? (r.closeReason ?? "completed") : null,
    closed_by: r.state === "closed" ? closedByBody(r, handles) : null,
    labels: (labels.get(r.id) ?? []).map(labelBody),
    assignees: assignees.get(r.id) ?? [],
    author: r.authorUserId && handles.has(r.authorUserId) ? { user_id: r.authorUserId, handle: handles.get(r.authorUserId)! } : null,
    comments: r.comments,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    closed_at: r.closedAt,
  }));
}

function closedByBody(r: IssueRow, handles: Map<string, string>): Issue["closed_by"] {
  const by = r.closedBy;
  if (by?.kind === "change" && typeof by.number === "number")
    return { kind: "change", number: by.number, commit: typeof by.commit === "string" ? by.commit : null };
  if (by?.kind === "commit" && typeof by.sha === "string") return { kind: "commit", sha: by.sha };
  if (r.closedByUserId && handles.has(r.closedByUserId)) return { kind: "person", user_id: r.closedByUserId, handle: handles.get(r.closedByUserId)! };
  return null;
}

/** The API shapes of timeline event rows. */
export async function eventBodies(ctx: Ctx, rows: IssueEventRow[]): Promise<IssueEvent[]> {
  const handles = await store.handlesOf(
    ctx.db.read,
    rows.map((r) => r.actorUserId).filter((x): x is string => x !== null),
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    actor: r.actorUserId && handles.has(r.actorUserId) ? { user_id: r.actorUserId, handle: handles.get(r.actorUserId)! } : null,
    data: r.data,
    created_at: r.createdAt,
  }));
}

/** The repository another repository's `referenced` event came from (xref.ts), or null for this repository's own events. */
function sourceRepoId(r: IssueEventRow): string | null {
  const src = r.data.source as { repo_id?: unknown } | undefined;
  return src && typeof src.repo_id === "string" && src.repo_id !== r.repoId ? src.repo_id : null;
}

/**
 * The events the caller may see: one that another repository's commit or change made is shown
 * only to a caller who may read that repository now (a private repository's mention never reaches
 * an outsider; a deleted one's is shown to nobody).
 */
export async function visibleEvents(ctx: Ctx, t: RepoTarget, rows: IssueEventRow[]): Promise<IssueEventRow[]> {
  const sources = [...new Set(rows.map(sourceRepoId).filter((x): x is string => x !== null))];
  if (!sources.length) return rows;
  const readable = new Set<string>();
  for (const id of sources) {
    const found = await store.repoAndOrg(ctx.db.read, id);
    if (found && decide(await loadFacts(ctx, t.actor, found.org, found.repo), "repo:read").allow) readable.add(id);
  }
  return rows.filter((r) => {
    const src = sourceRepoId(r);
    return src === null || readable.has(src);
  });
}

// ── validation ───────────────────────────────────────────────────────────────────────────────

function checkTitle(title: unknown): string {
  const t = typeof title === "string" ? title.trim() : "";
  if (!t || t.length > MAX_TITLE || /[\0\n\r]/.test(t)) throw Unprocessable(`title must be 1-${MAX_TITLE} characters on one line`);
  return t;
}

function checkBody(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body !== "string") throw Unprocessable("body must be a string");
  if (body.length > MAX_BODY || body.includes("\0")) throw Unprocessable(`body must be at most ${MAX_BODY} characters without NUL`);
  return body.trim() === "" ? null : body;
}

/** The number from the path: anything not a positive integer is no issue. */
async function mustIssue(q: Parameters<typeof store.issueByNumber>[0], repoId: string, number: number): Promise<IssueRow> {
  const row = Number.isInteger(number) && number > 0 ? await store.issueByNumber(q, repoId, number) : null;
  if (!row) throw NotFound("issue not found");
  return row;
}

/** The caller's issue of that number (404 alike when missing). */
export async function issueRow(ctx: Ctx, t: RepoTarget, number: number): Promise<IssueRow> {
  need(t, "repo:read");
  return mustIssue(ctx.db.read, t.repo.id, number);
}

/** Label rows for names; 422 naming the first unknown one. */
async function labelsNamed(ctx: Ctx, repoId: string, names: readonly string[]): Promise<LabelRow[]> {
  if (names.length > MAX_LABELS_PER_ISSUE) throw Unprocessable(`an issue carries at most ${MAX_LABELS_PER_ISSUE} labels`);
  const keys = [...new Set(names.map((n) => (typeof n === "string" ? n.trim().toLowerCase() : "")))];
  const rows = await store.labelsByKeys(ctx.db.read, repoId, keys);
  const found = new Set(rows.map((r) => r.nameKey));
  const missing = keys.find((k) => !found.has(k));
  if (missing !== undefined) throw Unprocessable(`no label named ${JSON.stringify(missing)} in this repository`);
  return rows;
}

/** People for handles who can write the repository (assignees); 422 naming the first who cannot. */
async function assignable(ctx: Ctx, org: Org, repo: Repo, handles: readonly string[]): Promise<{ id: string; handle: string }[]> {
  if (handles.length > MAX_ASSIGNEES) throw Unprocessable(`an issue has at most ${MAX_ASSIGNEES} assignees`);
  const wanted = [...new Set(handles.map((h) => (typeof h === "string" ? h.trim().replace(/^@/, "").toLowerCase() : "")))];
  const people = await store.usersByHandles(ctx.db.read, wanted.filter(Boolean));
  const byKey = new Map(people.map((p) => [p.handle.toLowerCase(), p]));
  const unknown = wanted.find((h) => !byKey.has(h));
  if (unknown !== undefined) throw Unprocessable(`no person with the handle ${JSON.stringify(unknown)}`);
  const facts = await factsForPeople(
    ctx,
    org,
    repo,
    people.map((p) => p.id),
  );
  for (const p of people) {
    const f = facts.get(p.id);
    // Why the triage decision: an assignee is someone who can act on the issue (write access).
    if (!f || !decide(f, { kind: "issue:triage" }).allow) throw Unprocessable(`${p.handle} cannot write to this repository and cannot be assigned`);
  }
  return people;
}

/** 429 when the caller created as many issues and comments in the last hour as SVC_ISSUE_RATE_LIMIT allows. */
export async function checkRate(ctx: Ctx, userId: string): Promise<void> {
  const at = now();
  const { n, oldest } = await store.createdSince(ctx.db.read, userId, at - RATE_WINDOW_MS);
  if (n < ctx.config.issueRateLimit) return;
  const seconds = Math.max(1, Math.ceil(((oldest ?? at) + RATE_WINDOW_MS - at) / 1000));
  throw new RateLimited(`too many issues and comments in the last hour; try again in ${seconds} second${seconds === 1 ? "" : "s"}`, seconds);
}

/** A timeline event row. */
export function eventRow(
  issue: Pick<IssueRow, "id" | "repoId">,
  kind: string,
  actorUserId: string | null,
  data: Record<string, unknown>,
  at: number,
  dedupe: string | null = null,
): IssueEventRow {
  return { id: newId(), issueId: issue.id, repoId: issue.repoId, kind, actorUserId, data, dedupe, createdAt: at };
}

/** The webhook payload's summary of an issue. */
function hookIssue(r: IssueRow, author: { id: string; handle: string } | null) {
  return { number: r.number, title: r.title, state: r.state, author: author ? { user_id: author.id, handle: author.handle } : null };
}

// ── create and read ──────────────────────────────────────────────────────────────────────────

/** POST …/issues: a reader (any signed-in person on a public repository) opens an issue; labels and assignees need write access. */
export async function createIssue(ctx: Ctx, t: RepoTarget, input: IssueCreate): Promise<Issue> {
  need(t, { kind: "issue:discuss" });
  const me = personOf(t.actor)!;
  const title = checkTitle(input.title);
  const body = checkBody(input.body);
  const labelNames = input.labels ?? [];
  const handles = input.assignees ?? [];
  if (labelNames.length || handles.length) need(t, { kind: "issue:triage" });
  const labels = labelNames.length ? await labelsNamed(ctx, t.repo.id, labelNames) : [];
  const assignees = handles.length ? await assignable(ctx, t.org, t.repo, handles) : [];
  await checkRate(ctx, me.id);
  const rendered = body ? await renderMarkdown(ctx, t, body) : null;
  const row = await ctx.db.transaction(async (tx) => {
    const at = now();
    const r: IssueRow = {
      id: newId(),
      repoId: t.repo.id,
      number: await nextThreadNumber(tx, t.repo.id),
      title,
      body,
      bodyHtml: rendered?.html ?? null,
      state: "open",
      closeReason: null,
      closedAt: null,
      closedByUserId: null,
      closedBy: null,
      authorUserId: me.id,
      comments: 0,
      createdAt: at,
      updatedAt: at,
      ftsRowid: null,
    };
    const { ftsRowid: _, ...insert } = r;
    await store.insertIssue(tx, insert);
    await store.setIssueLabels(
      tx,
      r.id,
      labels.map((l) => l.id),
      [],
    );
    await store.setAssignees(
      tx,
      r.id,
      assignees.map((a) => a.id),
      [],
    );
    await ctx.events.record(tx, {
      repoId: t.repo.id,
      orgId: t.org.id,
      kind: "issue.opened",
      payload: { issue: { ...hookIssue(r, me), labels: labels.map((l) => l.name), assignees: assignees.map((a) => a.handle) } },
      actorUserId: me.id,
    });
    const participants: { userId: string; reason: NotifyReason }[] = [{ userId: me.id, reason: "author" }];
    for (const a of assignees) participants.push({ userId: a.id, reason: "assign" });
    for (const m of rendered?.mentions ?? []) if (m.id !== me.id) participants.push({ userId: m.id, reason: "mention" });
    await ctx.events.emit(tx, {
      kind: "thread.activity",
      repoId: t.repo.id,
      orgId: t.org.id,
      subject: { kind: "issue", id: r.id, number: r.number, title: r.title },
      activity: "opened",
      actorUserId: me.id,
      participants,
      summary: { excerpt: (body ?? "").slice(0, EXCERPT) },
    });
    return r;
  });
  return (await issueBodies(ctx, [row]))[0]!;
}

/** GET …/issues/{n}. */
export async function getIssue(ctx: Ctx, t: RepoTarget, number: number): Promise<Issue> {
  return (await issueBodies(ctx, [await issueRow(ctx, t, number)]))[0]!;
}

/** The search words of `q`: runs of letters and digits (as both text indexes split words), at most 8, each at most 64 characters. */
export function searchWords(q: string): string[] {
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.map((w) => w.slice(0, 64)))].slice(0, 8);
}

/** A list cursor: [first page's time, key, number, open count, closed count]. */
function isCursor(k: unknown): k is [number, number, number, number, number] {
  return Array.isArray(k) && k.length === 5 && k.every((x) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0);
}

/** The resolved filter of a list query (unknown labels or people match nothing). */
async function filterOf(ctx: Ctx, repoId: string, q: IssueListQuery): Promise<{ filter: ListFilter; empty: boolean }> {
  const state = q.state === undefined || q.state === "" ? "open" : q.state;
  if (state !== "open" && state !== "closed" && state !== "all") throw Unprocessable("state must be open, closed or all");
  if (q.q !== undefined && q.q.length > 200) throw Invalid("q must be at most 200 characters");
  const filter: ListFilter = { repoId, state: state === "all" ? null : state, labelIds: [], assignee: null, authorId: null, words: searchWords(q.q ?? "") };
  let empty = false;
  if (q.label) {
    const names = [...new Set(q.label.split(",").map((s) => s.trim().toLowerCase()))].filter(Boolean);
    if (names.length > 10) throw Invalid("label takes at most 10 names");
    const rows = await store.labelsByKeys(ctx.db.read, repoId, names);
    if (rows.length < names.length) empty = true;
    filter.labelIds = rows.map((r) => r.id);
  }
  for (const [field, value] of [
    ["assignee", q.assignee],
    ["author", q.author],
  ] as const) {
    if (!value) continue;
    if (field === "assignee" && value.toLowerCase() === "none") {
      filter.assignee = "none";
      continue;
    }
    const [p] = value.length <= 39 ? await store.usersByHandles(ctx.db.read, [value.replace(/^@/, "")]) : [];
    if (!p) empty = true;
    else if (field === "assignee") filter.assignee = p.id;
    else filter.authorId = p.id;
  }
  if (q.q && !filter.words.length) empty = true;
  return { filter, empty };
}

/**
 * GET …/issues: filtered (state, labels — all of them, assignee, author, text), sorted (created,
 * updated, comments; desc or asc), paged by cursor. The cursor holds the time of the first page:
 * later pages place every issue by its sort key at that time, so each issue of the list appears
 * exactly once however issues are updated between pages (issues opened since do not join).
 */
export async function listIssues(ctx: Ctx, t: RepoTarget, q: IssueListQuery): Promise<IssueList> {
  need(t, "repo:read");
  const sort = (q.sort || "created") as SortKey;
  if (sort !== "created" && sort !== "updated" && sort !== "comments") throw Unprocessable("sort must be created, updated or comments");
  const dir = q.direction || "desc";
  if (dir !== "asc" && dir !== "desc") throw Unprocessable("direction must be asc or desc");
  const page = parsePage(q, isCursor);
  const { filter, empty } = await filterOf(ctx, t.repo.id, q);
  if (empty) return { issues: [], next_cursor: null, counts: { open: 0, closed: 0 } };
  const asOf = page.after ? page.after[0] : now();
  const { rows, counts } = await store.listPage(ctx.db.read, filter, {
    sort,
    dir,
    asOf,
    after: page.after ? [page.after[1], page.after[2]] : null,
    limit: page.limit + 1,
    // Later pages answer the first page's counts (the list as of its time), carried in the cursor.
    ...(page.after ? { counts: { open: page.after[3], closed: page.after[4] } } : {}),
  });
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  const last = items[items.length - 1];
  return {
    issues: await issueBodies(
      ctx,
      items.map((i) => i.row),
    ),
    next_cursor: more && last ? encodeCursor([asOf, last.key, last.row.number, counts.open, counts.closed]) : null,
    counts,
  };
}

/** Open issues of the repository (the web's nav count). */
export async function openIssueCount(ctx: Ctx, t: RepoTarget): Promise<number> {
  need(t, "repo:read");
  // Why the fact cache: every repository page's layout shows the count; any write drops it.
  // Local: the shared epoch does not follow the issues table, so several nodes load it each time.
  return ctx.facts.getLocal("open-issues", t.repo.id, () => store.openCount(ctx.db.read, t.repo.id));
}

// ── edit ─────────────────────────────────────────────────────────────────────────────────────

/** Closes `issue` inside `tx`: the row, the `closed` event, `issue.closed` and the thread activity. False when it was closed already. */
export async function closeIssueIn(
  ctx: Ctx,
  tx: Tx,
  place: { orgId: string },
  issue: IssueRow,
  o: { actorUserId: string | null; reason: "completed" | "not_planned"; by: Record<string, unknown>; at: number },
): Promise<boolean> {
  const cur = await store.issueByNumber(tx, issue.repoId, issue.number);
  if (!cur || cur.state === "closed") return false;
  await store.updateIssue(tx, cur.id, {
    state: "closed",
    closeReason: o.reason,
    closedAt: o.at,
    closedByUserId: o.actorUserId,
    closedBy: o.by,
  });
  const data: Record<string, unknown> = { reason: o.reason };
  if (o.by.kind === "change") Object.assign(data, { change: o.by.number, commit: o.by.commit ?? null });
  if (o.by.kind === "commit") data.commit = o.by.sha;
  await store.insertEvents(tx, [eventRow(cur, "closed", o.actorUserId, data, o.at)]);
  await store.touchIssue(tx, cur.id, o.at);
  await ctx.events.record(tx, {
    repoId: cur.repoId,
    orgId: place.orgId,
    kind: "issue.closed",
    payload: { issue: { number: cur.number, title: cur.title, state: "closed" }, reason: o.reason, closed_by: o.by },
    actorUserId: o.actorUserId,
  });
  await ctx.events.emit(tx, {
    kind: "thread.activity",
    repoId: cur.repoId,
    orgId: place.orgId,
    subject: { kind: "issue", id: cur.id, number: cur.number, title: cur.title },
    activity: "closed",
    actorUserId: o.actorUserId,
    participants: [],
    summary: { reason: o.reason, ...(o.by.kind === "change" ? { change: o.by.number } : o.by.kind === "commit" ? { commit: o.by.sha } : {}) },
  });
  return true;
}

/**
 * PATCH …/issues/{n}: title and body (writers, or the author), state and close_reason (writers,
 * or the author: decided, as GitHub lets the author close and reopen their own issue), labels
 * and assignees as whole sets (writers). Each difference is a timeline event.
 */
export async function patchIssue(ctx: Ctx, t: RepoTarget, number: number, input: IssuePatch): Promise<Issue> {
  const issue = await issueRow(ctx, t, number);
  const me = personOf(t.actor);
  const author = me !== null && issue.authorUserId === me.id;
  const editing = input.title !== undefined || input.body !== undefined || input.state !== undefined || input.close_reason !== undefined;
  if (editing) need(t, { kind: "issue:edit", author });
  if (input.labels !== undefined || input.assignees !== undefined) need(t, { kind: "issue:triage" });
  if (!editing && input.labels === undefined && input.assignees === undefined) throw Unprocessable("nothing to change");
  if (input.close_reason !== undefined && input.state !== "closed" && issue.state !== "closed") throw Unprocessable("close_reason goes with state: closed");
  const title = input.title !== undefined ? checkTitle(input.title) : null;
  const body = input.body !== undefined ? checkBody(input.body) : undefined;
  const rendered = body ? await renderMarkdown(ctx, t, body) : null;
  const labels = input.labels !== undefined ? await labelsNamed(ctx, t.repo.id, input.labels) : null;
  const assignees = input.assignees !== undefined ? await assignable(ctx, t.org, t.repo, input.assignees) : null;
  const actor = me!.id;
  await ctx.db.transaction(async (tx) => {
    const cur = await mustIssue(tx, t.repo.id, number);
    const at = now();
    const events: IssueEventRow[] = [];
    const set: Partial<IssueRow> = {};
    if (title !== null && title !== cur.title) {
      set.title = title;
      events.push(eventRow(cur, "renamed", actor, { from: cur.title, to: title }, at));
    }
    if (body !== undefined && body !== cur.body) {
      set.body = body;
      set.bodyHtml = rendered?.html ?? null;
      events.push(eventRow(cur, "edited", actor, {}, at));
    }
    if (Object.keys(set).length) await store.updateIssue(tx, cur.id, set);
    if (labels) {
      const had = (await store.labelsOfIssues(tx, [cur.id])).get(cur.id) ?? [];
      const want = new Set(labels.map((l) => l.id));
      const add = labels.filter((l) => !had.some((h) => h.id === l.id));
      const remove = had.filter((h) => !want.has(h.id));
      await store.setIssueLabels(
        tx,
        cur.id,
        add.map((l) => l.id),
        remove.map((l) => l.id),
      );
      for (const l of add) events.push(eventRow(cur, "labeled", actor, { label: l.name, color: l.color }, at));
      for (const l of remove) events.push(eventRow(cur, "unlabeled", actor, { label: l.name, color: l.color }, at));
    }
    const newlyAssigned: string[] = [];
    if (assignees) {
      const had = (await store.assigneesOfIssues(tx, [cur.id])).get(cur.id) ?? [];
      const want = new Set(assignees.map((a) => a.id));
      const add = assignees.filter((a) => !had.some((h) => h.user_id === a.id));
      const remove = had.filter((h) => !want.has(h.user_id));
      await store.setAssignees(
        tx,
        cur.id,
        add.map((a) => a.id),
        remove.map((a) => a.user_id),
      );
      for (const a of add) {
        newlyAssigned.push(a.id);
        events.push(eventRow(cur, "assigned", actor, { assignee: { user_id: a.id, handle: a.handle } }, at));
      }
      for (const a of remove) events.push(eventRow(cur, "unassigned", actor, { assignee: a }, at));
    }
    await store.insertEvents(tx, events);
    if (events.length) await store.touchIssue(tx, cur.id, at);
    if (newlyAssigned.length)
      await ctx.events.emit(tx, {
        kind: "thread.activity",
        repoId: cur.repoId,
        orgId: t.org.id,
        subject: { kind: "issue", id: cur.id, number: cur.number, title: set.title ?? cur.title },
        activity: "assigned",
        actorUserId: actor,
        participants: newlyAssigned.map((userId) => ({ userId, reason: "assign" as const })),
        summary: {},
        only: newlyAssigned,
      });
    const wantState = input.state ?? (input.close_reason !== undefined ? "closed" : undefined);
    if (wantState === "closed" && cur.state === "open") {
      await closeIssueIn(ctx, tx, { orgId: t.org.id }, cur, {
        actorUserId: actor,
        reason: input.close_reason ?? "completed",
        by: { kind: "person", user_id: actor },
        at,
      });
    } else if (wantState === "closed" && input.close_reason !== undefined && input.close_reason !== cur.closeReason) {
      await store.updateIssue(tx, cur.id, { closeReason: input.close_reason });
    } else if (wantState === "open" && cur.state === "closed") {
      await store.updateIssue(tx, cur.id, { state: "open", closeReason: null, closedAt: null, closedByUserId: null, closedBy: null });
      await store.insertEvents(tx, [eventRow(cur, "reopened", actor, {}, at)]);
      await store.touchIssue(tx, cur.id, at);
      await ctx.events.emit(tx, {
        kind: "thread.activity",
        repoId: cur.repoId,
        orgId: t.org.id,
        subject: { kind: "issue", id: cur.id, number: cur.number, title: set.title ?? cur.title },
        activity: "reopened",
        actorUserId: actor,
        participants: [],
        summary: {},
      });
    }
  });
  return getIssue(ctx, t, number);
}

/** DELETE …/issues/{n}: repository admins. Its number is not given again. */
export async function deleteIssue(ctx: Ctx, t: RepoTarget, number: number): Promise<void> {
  need(t, "repo:read");
  need(t, "repo:admin");
  await ctx.db.transaction(async (tx) => {
    const cur = await mustIssue(tx, t.repo.id, number);
    await store.deleteIssue(tx, cur.id);
    // The inbox rows about it would lead to a 404: services/notify drops them in this transaction.
    await ctx.events.emit(tx, { kind: "thread.deleted", repoId: t.repo.id, orgId: t.org.id, subject: { kind: "issue", id: cur.id } });
  });
}
