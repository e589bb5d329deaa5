// The issues domain's queries: issues, labels, assignees, comments, timeline events, the list with
// its filters and text search (FTS5 on SQLite, a tsvector GIN index on PostgreSQL: migrations 0021
// / pg 0009), and the counts the rate limit reads.
import { and, asc, count, desc, eq, gt, inArray, isNull, lte, max, or, type SQL, sql } from "drizzle-orm";
import type { issueComments, issueEvents, issues, labels, Org, Repo } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { dialectOf } from "../../db/dialect-of.ts";
import { x } from "../../db/dialect.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type IssueRow = typeof issues.$inferSelect;
export type LabelRow = typeof labels.$inferSelect;
export type IssueCommentRow = typeof issueComments.$inferSelect;
export type IssueEventRow = typeof issueEvents.$inferSelect;

// ── issues ───────────────────────────────────────────────────────────────────────────────────

/** Inserts an issue. */
export async function insertIssue(tx: Tx, row: Omit<IssueRow, "ftsRowid">): Promise<void> {
  const { issues } = tables(tx);
  await tx.insert(issues).values(row);
}

/** One issue by its number. */
export async function issueByNumber(q: Queryable, repoId: string, number: number): Promise<IssueRow | null> {
  const { issues } = tables(q);
  return (
    one(
      await q
        .select()
        .from(issues)
        .where(and(eq(issues.repoId, repoId), eq(issues.number, number)))
        .limit(1),
    ) ?? null
  );
}

/** Issues of a repository by number (those that exist). */
export async function issuesByNumbers(q: Queryable, repoId: string, numbers: number[]): Promise<IssueRow[]> {
  if (!numbers.length) return [];
  const { issues } = tables(q);
  return await q
    .select()
    .from(issues)
    .where(and(eq(issues.repoId, repoId), inArray(issues.number, [...new Set(numbers)])));
}

/** Which of `numbers` are issues of which of `repoIds`. */
export async function issueNumbersIn(q: Queryable, repoIds: string[], numbers: number[]): Promise<{ repoId: string; number: number }[]> {
  if (!repoIds.length || !numbers.length) return [];
  const { issues } = tables(q);
  return await q
    .select({ repoId: issues.repoId, number: issues.number })
    .from(issues)
    .where(and(inArray(issues.repoId, [...new Set(repoIds)]), inArray(issues.number, [...new Set(numbers)])));
}

/** Updates fields of one issue. */
export async function updateIssue(tx: Tx, id: string, set: Partial<IssueRow>): Promise<void> {
  const { issues } = tables(tx);
  await tx.update(issues).set(set).where(eq(issues.id, id));
}

/** Deletes one issue (its labels, assignees, comments and events go with it). */
export async function deleteIssue(tx: Tx, id: string): Promise<void> {
  const { issues } = tables(tx);
  await tx.delete(issues).where(eq(issues.id, id));
}

/** Moves `updated_at` forward to `at` (never back) and adds `commentDelta` to the comment count. */
export async function touchIssue(tx: Tx, id: string, at: number, commentDelta = 0): Promise<void> {
  const { issues } = tables(tx);
  await tx
    .update(issues)
    .set({
      updatedAt: sql`CASE WHEN ${issues.updatedAt} < ${at} THEN ${at} ELSE ${issues.updatedAt} END`,
      ...(commentDelta ? { comments: sql`${issues.comments} + ${commentDelta}` } : {}),
    })
    .where(eq(issues.id, id));
}

/** Whether a change of that number exists in the repository (numbers are shared). */
export async function changeNumbers(q: Queryable, repoId: string, numbers: number[]): Promise<Set<number>> {
  if (!numbers.length) return new Set();
  const { changes } = tables(q);
  const rows = await q
    .select({ n: changes.number })
    .from(changes)
    .where(and(eq(changes.repoId, repoId), inArray(changes.number, [...new Set(numbers)])));
  return new Set(rows.map((r) => r.n));
}

/** The words of change `number` (title, description) and its target, for references to issues. */
export async function changeText(q: Queryable, repoId: string, number: number): Promise<{ title: string; description: string | null; target: string } | null> {
  const { changes } = tables(q);
  return (
    one(
      await q
        .select({ title: changes.title, description: changes.description, target: changes.target })
        .from(changes)
        .where(and(eq(changes.repoId, repoId), eq(changes.number, number)))
        .limit(1),
    ) ?? null
  );
}

// ── list ─────────────────────────────────────────────────────────────────────────────────────

/** What a list asks for, resolved to ids. */
export interface ListFilter {
  repoId: string;
  state: "open" | "closed" | null;
  labelIds: string[];
  /** A user id, `none` for unassigned, or null for any. */
  assignee: string | null;
  authorId: string | null;
  /** Search words (letters, digits, `_`), all of which must occur as a prefix of a word in the title or body. */
  words: string[];
}

export type SortKey = "created" | "updated" | "comments";

function sortColumn(t: ReturnType<typeof tables>["issues"], sort: SortKey) {
  return sort === "updated" ? t.updatedAt : sort === "comments" ? t.comments : t.number;
}

/** The conditions of a filter (without the state when `withState` is false). */
function conditions(q: Queryable, f: ListFilter, withState: boolean): SQL[] {
  const { issues, issueLabels, issueAssignees } = tables(q);
  const out: SQL[] = [eq(issues.repoId, f.repoId)];
  if (withState && f.state) out.push(eq(issues.state, f.state));
  if (f.authorId) out.push(eq(issues.authorUserId, f.authorId));
  for (const id of f.labelIds)
    out.push(sql`EXISTS (SELECT 1 FROM ${issueLabels} WHERE ${issueLabels.issueId} = ${issues.id} AND ${issueLabels.labelId} = ${id})`);
  if (f.assignee === "none") out.push(sql`NOT EXISTS (SELECT 1 FROM ${issueAssignees} WHERE ${issueAssignees.issueId} = ${issues.id})`);
  else if (f.assignee)
    out.push(sql`EXISTS (SELECT 1 FROM ${issueAssignees} WHERE ${issueAssignees.issueId} = ${issues.id} AND ${issueAssignees.userId} = ${f.assignee})`);
  if (f.words.length) {
    if (dialectOf(q) === "pg") {
      const query = f.words.map((w) => `${w}:*`).join(" & ");
      out.push(sql`to_tsvector('simple', ${issues.title} || ' ' || coalesce(${issues.body}, '')) @@ to_tsquery('simple', ${query})`);
    } else {
      const query = f.words.map((w) => `"${w}"*`).join(" ");
      out.push(sql`${issues.ftsRowid} IN (SELECT rowid FROM issues_fts WHERE issues_fts MATCH ${query})`);
    }
  }
  return out;
}

/** The columns a list sorts, counts and pages on (the page's rows are read whole afterwards). */
interface Narrow {
  id: string;
  number: number;
  state: "open" | "closed";
  updatedAt: number;
  comments: number;
  createdAt: number;
}

/** Options of a list page. */
export interface PageOptions {
  sort: SortKey;
  dir: "asc" | "desc";
  /** The time of the first page: later pages place issues by their sort key then. */
  asOf: number;
  /** The position after which the page starts: [key, number]. */
  after: [number, number] | null;
  limit: number;
  /** The counts the first page answered (a later page carries them in its cursor instead of counting again). */
  counts?: { open: number; closed: number };
}

/**
 * A page of issues in `sort` order as it stood at `asOf`, after position `after` ([key, number])
 * when given, and the counts per state of every filter but the state. Rows not updated since
 * `asOf` are placed by their current key, rows updated since by the key they had at `asOf`
 * (`keysAt`), rows created since are left out: each issue of the list appears once however the
 * issues change between pages.
 *
 * Two plans. With a set filter (labels, an assignee, search words) the matching issues are read
 * narrow from the most selective one (a label's or assignee's rows, the text index), then counted,
 * sorted and cut in memory: a rare label or word never walks the whole repository. Without one,
 * the page is walked in index order and counted from the state index.
 */
export async function listPage(
  q: Queryable,
  f: ListFilter,
  o: PageOptions,
): Promise<{ rows: { row: IssueRow; key: number }[]; counts: { open: number; closed: number } }> {
  const driver = f.labelIds.length || f.words.length || (f.assignee && f.assignee !== "none") ? await driverOf(q, f) : null;
  if (driver === null || driver.size > NARROW_MAX) {
    const rows = await walk(q, f, o);
    return { rows, counts: o.counts ?? (driver ? await drivenCounts(q, driver) : await stateCounts(q, f)) };
  }
  const narrow = await matching(q, driver);
  const counts = { open: 0, closed: 0 };
  for (const r of narrow) counts[r.state]++;
  const inState = f.state ? narrow.filter((r) => r.state === f.state) : narrow;
  const present = inState.filter((r) => r.createdAt <= o.asOf);
  const moved = present.filter((r) => r.updatedAt > o.asOf);
  const then = moved.length && o.sort !== "created" ? await keysAt(q, moved, o.sort, o.asOf) : null;
  const keyOf = (r: Narrow) => (then?.has(r.id) ? then.get(r.id)! : o.sort === "updated" ? r.updatedAt : o.sort === "comments" ? r.comments : r.number);
  const keyed = present.map((r) => ({ r, key: keyOf(r) }));
  const desc_ = o.dir === "desc";
  const after = o.after;
  const beyond = (k: number, n: number) =>
    !after || (desc_ ? k < after[0] || (k === after[0] && n < after[1]) : k > after[0] || (k === after[0] && n > after[1]));
  const page = keyed
    .filter((x) => beyond(x.key, x.r.number))
    .sort((a, b) => (desc_ ? b.key - a.key || b.r.number - a.r.number : a.key - b.key || a.r.number - b.r.number))
    .slice(0, o.limit);
  const { issues } = tables(q);
  const full = page.length
    ? await q
        .select()
        .from(issues)
        .where(
          inArray(
            issues.id,
            page.map((x) => x.r.id),
          ),
        )
    : [];
  const byId = new Map(full.map((r) => [r.id, r]));
  return { rows: page.flatMap((x) => (byId.has(x.r.id) ? [{ row: byId.get(x.r.id)!, key: x.key }] : [])), counts: o.counts ?? counts };
}

/** Above this many rows in the most selective set, the page is walked in index order instead (dense matches: it stops early). */
const NARROW_MAX = 3000;

/**
 * How the issues of a filter with a set filter are reached: from the most selective set (a label's
 * or assignee's rows, the text index), written as a join in that order (SQLite: CROSS JOIN keeps
 * it; the planner would otherwise walk the repository's issues and probe the set for each), and
 * that set's size (SQLite; PostgreSQL's planner chooses by itself and is never walked: 0).
 */
async function driverOf(q: Queryable, f: ListFilter): Promise<{ from: SQL; where: SQL; size: number }> {
  const { issues, issueLabels, issueAssignees } = tables(q);
  const pg = dialectOf(q) === "pg";
  const join = pg ? sql`JOIN` : sql`CROSS JOIN`;
  const rest = (skipLabel: string | null, skipAssignee: boolean): SQL => {
    const out: SQL[] = [eq(issues.repoId, f.repoId)];
    if (f.authorId) out.push(eq(issues.authorUserId, f.authorId));
    for (const id of f.labelIds)
      if (id !== skipLabel) out.push(sql`EXISTS (SELECT 1 FROM ${issueLabels} WHERE ${issueLabels.issueId} = ${issues.id} AND ${issueLabels.labelId} = ${id})`);
    if (f.assignee === "none") out.push(sql`NOT EXISTS (SELECT 1 FROM ${issueAssignees} WHERE ${issueAssignees.issueId} = ${issues.id})`);
    else if (f.assignee && !skipAssignee)
      out.push(sql`EXISTS (SELECT 1 FROM ${issueAssignees} WHERE ${issueAssignees.issueId} = ${issues.id} AND ${issueAssignees.userId} = ${f.assignee})`);
    return and(...out)!;
  };
  if (f.words.length) {
    if (pg) {
      const ts = f.words.map((w) => `${w}:*`).join(" & ");
      return {
        from: sql`${issues}`,
        where: sql`to_tsvector('simple', ${issues.title} || ' ' || coalesce(${issues.body}, '')) @@ to_tsquery('simple', ${ts}) AND ${rest(null, false)}`,
        size: 0,
      };
    }
    const match = f.words.map((w) => `"${w}"*`).join(" ");
    const size = Number((await x(q).row<{ n: number }>(sql`SELECT count(*) AS n FROM issues_fts WHERE issues_fts MATCH ${match}`))?.n ?? 0);
    return {
      from: sql`issues_fts ${join} ${issues} ON ${issues.ftsRowid} = issues_fts.rowid`,
      where: sql`issues_fts MATCH ${match} AND ${rest(null, false)}`,
      size,
    };
  }
  if (f.labelIds.length) {
    const sizes = await q
      .select({ id: issueLabels.labelId, n: count() })
      .from(issueLabels)
      .where(inArray(issueLabels.labelId, f.labelIds))
      .groupBy(issueLabels.labelId);
    const sizeOf = (id: string) => Number(sizes.find((s) => s.id === id)?.n ?? 0);
    const smallest = f.labelIds.reduce((best, id) => (sizeOf(id) < sizeOf(best) ? id : best), f.labelIds[0]!);
    return {
      from: sql`${issueLabels} ${join} ${issues} ON ${issues.id} = ${issueLabels.issueId}`,
      where: sql`${issueLabels.labelId} = ${smallest} AND ${rest(smallest, false)}`,
      size: pg ? 0 : sizeOf(smallest),
    };
  }
  const size = pg ? 0 : Number(one(await q.select({ n: count() }).from(issueAssignees).where(eq(issueAssignees.userId, f.assignee!)))?.n ?? 0);
  return {
    from: sql`${issueAssignees} ${join} ${issues} ON ${issues.id} = ${issueAssignees.issueId}`,
    where: sql`${issueAssignees.userId} = ${f.assignee!} AND ${rest(null, true)}`,
    size,
  };
}

/** Every issue matching a filter with a set filter, in every state, narrow. */
async function matching(q: Queryable, d: { from: SQL; where: SQL }): Promise<Narrow[]> {
  const { issues } = tables(q);
  const cols = sql`${issues.id} AS id, ${issues.number} AS number, ${issues.state} AS state, ${issues.updatedAt} AS updated_at, ${issues.comments} AS comments, ${issues.createdAt} AS created_at`;
  const rows = await x(q).rows<{ id: string; number: number; state: Narrow["state"]; updated_at: number; comments: number; created_at: number }>(
    sql`SELECT ${cols} FROM ${d.from} WHERE ${d.where}`,
  );
  return rows.map((r) => ({
    id: r.id,
    number: Number(r.number),
    state: r.state,
    updatedAt: Number(r.updated_at),
    comments: Number(r.comments),
    createdAt: Number(r.created_at),
  }));
}

/** The counts per state of a filter with a set filter, from its driver (no rows read out). */
async function drivenCounts(q: Queryable, d: { from: SQL; where: SQL }): Promise<{ open: number; closed: number }> {
  const { issues } = tables(q);
  const rows = await x(q).rows<{ state: "open" | "closed"; n: number }>(
    sql`SELECT ${issues.state} AS state, count(*) AS n FROM ${d.from} WHERE ${d.where} GROUP BY ${issues.state}`,
  );
  const out = { open: 0, closed: 0 };
  for (const r of rows) out[r.state] = Number(r.n);
  return out;
}

/** The walk plan: the page in index order, every filter probed per row (no set filter, or a large one: matches are dense). */
async function walk(q: Queryable, f: ListFilter, o: PageOptions): Promise<{ row: IssueRow; key: number }[]> {
  const { issues } = tables(q);
  const col = sortColumn(issues, o.sort);
  const order = o.dir === "desc" ? [desc(col), desc(issues.number)] : [asc(col), asc(issues.number)];
  const cmp = o.dir === "desc" ? "<" : ">";
  const beyond = (key: number, n: number) =>
    o.sort === "created"
      ? sql`${issues.number} ${sql.raw(cmp)} ${n}`
      : sql`(${col} ${sql.raw(cmp)} ${key} OR (${col} = ${key} AND ${issues.number} ${sql.raw(cmp)} ${n}))`;
  const base = conditions(q, f, true);
  // Why `+updated_at` on SQLite: a plain range on it makes the planner pick the updated_at index
  // and sort every open issue; the unary plus keeps the sort order's index.
  const notMoved = dialectOf(q) === "pg" ? lte(issues.updatedAt, o.asOf) : sql`+${issues.updatedAt} <= ${o.asOf}`;
  const stable = await q
    .select()
    .from(issues)
    .where(and(...base, notMoved, o.after ? beyond(o.after[0], o.after[1]) : undefined))
    .orderBy(...order)
    .limit(o.limit);
  const keyOf = (r: IssueRow) => (o.sort === "updated" ? r.updatedAt : o.sort === "comments" ? r.comments : r.number);
  const out = stable.map((row) => ({ row, key: keyOf(row) }));
  // Rows updated since the first page: placed by the key they had then (few: those touched meanwhile).
  const moved = await q
    .select()
    .from(issues)
    .where(and(...base, gt(issues.updatedAt, o.asOf), lte(issues.createdAt, o.asOf)))
    .limit(1000);
  if (moved.length) {
    const then = o.sort === "created" ? null : await keysAt(q, moved, o.sort, o.asOf);
    for (const row of moved) {
      const key = then ? (then.get(row.id) ?? 0) : row.number;
      const after = o.after;
      const isBeyond =
        !after ||
        (o.dir === "desc" ? key < after[0] || (key === after[0] && row.number < after[1]) : key > after[0] || (key === after[0] && row.number > after[1]));
      if (isBeyond) out.push({ row, key });
    }
    out.sort((a, b) => (o.dir === "desc" ? b.key - a.key || b.row.number - a.row.number : a.key - b.key || a.row.number - b.row.number));
  }
  return out.slice(0, o.limit);
}

/** The sort keys `rows` had at `asOf`: the last comment or event then (updated), or the comments counted then. */
async function keysAt(q: Queryable, rows: Pick<IssueRow, "id" | "createdAt">[], sort: "updated" | "comments", asOf: number): Promise<Map<string, number>> {
  const { issueEvents, issueComments } = tables(q);
  const ids = rows.map((r) => r.id);
  const out = new Map<string, number>();
  if (sort === "comments") {
    for (const r of rows) out.set(r.id, 0);
    const counted = await q
      .select({ id: issueComments.issueId, n: count() })
      .from(issueComments)
      .where(
        and(inArray(issueComments.issueId, ids), lte(issueComments.createdAt, asOf), or(isNull(issueComments.deletedAt), gt(issueComments.deletedAt, asOf))),
      )
      .groupBy(issueComments.issueId);
    for (const c of counted) out.set(c.id, Number(c.n));
    return out;
  }
  for (const r of rows) out.set(r.id, r.createdAt);
  const bump = (id: string, at: number | null) => {
    if (at !== null && at > (out.get(id) ?? 0)) out.set(id, Number(at));
  };
  const ev = await q
    .select({ id: issueEvents.issueId, at: max(issueEvents.createdAt) })
    .from(issueEvents)
    .where(and(inArray(issueEvents.issueId, ids), lte(issueEvents.createdAt, asOf)))
    .groupBy(issueEvents.issueId);
  for (const e of ev) bump(e.id, e.at);
  const cm = await q
    .select({ id: issueComments.issueId, at: max(issueComments.createdAt) })
    .from(issueComments)
    .where(and(inArray(issueComments.issueId, ids), lte(issueComments.createdAt, asOf)))
    .groupBy(issueComments.issueId);
  for (const c of cm) bump(c.id, c.at);
  const del = await q
    .select({ id: issueComments.issueId, at: max(issueComments.deletedAt) })
    .from(issueComments)
    .where(and(inArray(issueComments.issueId, ids), lte(issueComments.deletedAt, asOf)))
    .groupBy(issueComments.issueId);
  for (const d of del) bump(d.id, d.at);
  return out;
}

/** Issues matching every filter but the state, per state. */
async function stateCounts(q: Queryable, f: ListFilter): Promise<{ open: number; closed: number }> {
  const { issues } = tables(q);
  const rows = await q
    .select({ state: issues.state, n: count() })
    .from(issues)
    .where(and(...conditions(q, f, false)))
    .groupBy(issues.state);
  const out = { open: 0, closed: 0 };
  for (const r of rows) out[r.state] = Number(r.n);
  return out;
}

/** Open issues of a repository (the web's nav count). */
export async function openCount(q: Queryable, repoId: string): Promise<number> {
  const { issues } = tables(q);
  const row = one(
    await q
      .select({ n: count() })
      .from(issues)
      .where(and(eq(issues.repoId, repoId), eq(issues.state, "open"))),
  );
  return Number(row?.n ?? 0);
}

// ── labels ───────────────────────────────────────────────────────────────────────────────────

/** A repository's labels by name. */
export async function labelsOf(q: Queryable, repoId: string): Promise<LabelRow[]> {
  const { labels } = tables(q);
  return await q.select().from(labels).where(eq(labels.repoId, repoId)).orderBy(asc(labels.nameKey)).limit(2000);
}

/** Labels of a repository by lower-cased name. */
export async function labelsByKeys(q: Queryable, repoId: string, keys: string[]): Promise<LabelRow[]> {
  if (!keys.length) return [];
  const { labels } = tables(q);
  return await q
    .select()
    .from(labels)
    .where(and(eq(labels.repoId, repoId), inArray(labels.nameKey, [...new Set(keys)])));
}

/** How many labels a repository has. */
export async function labelCount(q: Queryable, repoId: string): Promise<number> {
  const { labels } = tables(q);
  return Number(one(await q.select({ n: count() }).from(labels).where(eq(labels.repoId, repoId)))?.n ?? 0);
}

/** Inserts a label. */
export async function insertLabel(tx: Tx, row: LabelRow): Promise<void> {
  const { labels } = tables(tx);
  await tx.insert(labels).values(row);
}

/** Updates a label. */
export async function updateLabel(tx: Tx, id: string, set: Partial<LabelRow>): Promise<void> {
  const { labels } = tables(tx);
  await tx.update(labels).set(set).where(eq(labels.id, id));
}

/** Deletes a label (issues lose it). */
export async function deleteLabel(tx: Tx, id: string): Promise<void> {
  const { labels } = tables(tx);
  await tx.delete(labels).where(eq(labels.id, id));
}

/** The labels of issues, by issue id. */
export async function labelsOfIssues(q: Queryable, issueIds: string[]): Promise<Map<string, LabelRow[]>> {
  const out = new Map<string, LabelRow[]>();
  if (!issueIds.length) return out;
  const { labels, issueLabels } = tables(q);
  const rows = await q
    .select({ issueId: issueLabels.issueId, label: labels })
    .from(issueLabels)
    .innerJoin(labels, eq(labels.id, issueLabels.labelId))
    .where(inArray(issueLabels.issueId, issueIds))
    .orderBy(asc(labels.nameKey));
  for (const r of rows) out.set(r.issueId, [...(out.get(r.issueId) ?? []), r.label]);
  return out;
}

/** Adds and removes labels of one issue. */
export async function setIssueLabels(tx: Tx, issueId: string, add: string[], remove: string[]): Promise<void> {
  const { issueLabels } = tables(tx);
  if (remove.length) await tx.delete(issueLabels).where(and(eq(issueLabels.issueId, issueId), inArray(issueLabels.labelId, remove)));
  if (add.length)
    await tx
      .insert(issueLabels)
      .values(add.map((labelId) => ({ issueId, labelId })))
      .onConflictDoNothing();
}

// ── assignees and people ─────────────────────────────────────────────────────────────────────

/** The assignees of issues, by issue id. */
export async function assigneesOfIssues(q: Queryable, issueIds: string[]): Promise<Map<string, { user_id: string; handle: string }[]>> {
  const out = new Map<string, { user_id: string; handle: string }[]>();
  if (!issueIds.length) return out;
  const { issueAssignees, users } = tables(q);
  const rows = await q
    .select({ issueId: issueAssignees.issueId, id: users.id, handle: users.handle })
    .from(issueAssignees)
    .innerJoin(users, eq(users.id, issueAssignees.userId))
    .where(inArray(issueAssignees.issueId, issueIds))
    .orderBy(asc(users.handle));
  for (const r of rows) out.set(r.issueId, [...(out.get(r.issueId) ?? []), { user_id: r.id, handle: r.handle }]);
  return out;
}

/** Adds and removes assignees of one issue. */
export async function setAssignees(tx: Tx, issueId: string, add: string[], remove: string[]): Promise<void> {
  const { issueAssignees } = tables(tx);
  if (remove.length) await tx.delete(issueAssignees).where(and(eq(issueAssignees.issueId, issueId), inArray(issueAssignees.userId, remove)));
  if (add.length)
    await tx
      .insert(issueAssignees)
      .values(add.map((userId) => ({ issueId, userId })))
      .onConflictDoNothing();
}

/** People by handle, case-insensitively. */
export async function usersByHandles(q: Queryable, handles: string[]): Promise<{ id: string; handle: string }[]> {
  if (!handles.length) return [];
  const { users } = tables(q);
  const lower = [...new Set(handles.map((h) => h.toLowerCase()))];
  return await q
    .select({ id: users.id, handle: users.handle })
    .from(users)
    .where(inArray(sql`lower(${users.handle})`, lower));
}

/** Handles by user id. */
export async function handlesOf(q: Queryable, ids: string[]): Promise<Map<string, string>> {
  const { users } = tables(q);
  if (!ids.length) return new Map();
  const rows = await q
    .select({ id: users.id, handle: users.handle })
    .from(users)
    .where(inArray(users.id, [...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, r.handle]));
}

/** A repository and its org by the repository's id (the source of a cross-repository reference), or null. */
export async function repoAndOrg(q: Queryable, repoId: string): Promise<{ repo: Repo; org: Org } | null> {
  const { repos, orgs } = tables(q);
  const row = one(await q.select({ repo: repos, org: orgs }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, repoId)).limit(1));
  return row ? { repo: row.repo as Repo, org: row.org as Org } : null;
}

// ── comments ─────────────────────────────────────────────────────────────────────────────────

/** Inserts a comment. */
export async function insertComment(tx: Tx, row: IssueCommentRow): Promise<void> {
  const { issueComments } = tables(tx);
  await tx.insert(issueComments).values(row);
}

/** One live comment of an issue. */
export async function commentById(q: Queryable, issueId: string, id: string): Promise<IssueCommentRow | null> {
  const { issueComments } = tables(q);
  return (
    one(
      await q
        .select()
        .from(issueComments)
        .where(and(eq(issueComments.issueId, issueId), eq(issueComments.id, id), isNull(issueComments.deletedAt)))
        .limit(1),
    ) ?? null
  );
}

/** Updates a comment. */
export async function updateComment(tx: Tx, id: string, set: Partial<IssueCommentRow>): Promise<void> {
  const { issueComments } = tables(tx);
  await tx.update(issueComments).set(set).where(eq(issueComments.id, id));
}

/** A page of an issue's live comments, oldest first, after (created_at, id). */
export async function commentsOf(q: Queryable, issueId: string, after: [number, string] | null, limit: number): Promise<IssueCommentRow[]> {
  const { issueComments: c } = tables(q);
  return await q
    .select()
    .from(c)
    .where(
      and(eq(c.issueId, issueId), isNull(c.deletedAt), after ? or(gt(c.createdAt, after[0]), and(eq(c.createdAt, after[0]), gt(c.id, after[1]))) : undefined),
    )
    .orderBy(asc(c.createdAt), asc(c.id))
    .limit(limit);
}

/** The people who commented on an issue (live comments). */
export async function commenters(q: Queryable, issueId: string): Promise<string[]> {
  const { issueComments: c } = tables(q);
  const rows = await q
    .selectDistinct({ id: c.authorUserId })
    .from(c)
    .where(and(eq(c.issueId, issueId), isNull(c.deletedAt)))
    .limit(1000);
  return rows.map((r) => r.id).filter((x): x is string => x !== null);
}

/** Issues and comments a person created since `since` (the creation rate limit), and the oldest of them. */
export async function createdSince(q: Queryable, userId: string, since: number): Promise<{ n: number; oldest: number | null }> {
  const { issues, issueComments } = tables(q);
  const a = one(
    await q
      .select({ n: count(), oldest: sql<number | null>`min(${issues.createdAt})` })
      .from(issues)
      .where(and(eq(issues.authorUserId, userId), gt(issues.createdAt, since))),
  );
  const b = one(
    await q
      .select({ n: count(), oldest: sql<number | null>`min(${issueComments.createdAt})` })
      .from(issueComments)
      .where(and(eq(issueComments.authorUserId, userId), gt(issueComments.createdAt, since))),
  );
  const olds = [a?.oldest, b?.oldest].filter((x): x is number => x !== null && x !== undefined).map(Number);
  return { n: Number(a?.n ?? 0) + Number(b?.n ?? 0), oldest: olds.length ? Math.min(...olds) : null };
}

// ── events ───────────────────────────────────────────────────────────────────────────────────

/** Inserts timeline events; one whose `dedupe` the issue already has is skipped. Answers the rows inserted. */
export async function insertEvents(tx: Tx, rows: IssueEventRow[]): Promise<IssueEventRow[]> {
  if (!rows.length) return [];
  const { issueEvents } = tables(tx);
  const ids = await tx.insert(issueEvents).values(rows).onConflictDoNothing().returning({ id: issueEvents.id });
  const got = new Set(ids.map((r) => r.id));
  return rows.filter((r) => got.has(r.id));
}

/** A page of an issue's events, oldest first, after (created_at, id). */
export async function eventsOf(q: Queryable, issueId: string, after: [number, string] | null, limit: number): Promise<IssueEventRow[]> {
  const { issueEvents: e } = tables(q);
  return await q
    .select()
    .from(e)
    .where(and(eq(e.issueId, issueId), after ? or(gt(e.createdAt, after[0]), and(eq(e.createdAt, after[0]), gt(e.id, after[1]))) : undefined))
    .orderBy(asc(e.createdAt), asc(e.id))
    .limit(limit);
}
