// The discovery domain's queries: profiles, follows, pins, contributions, watching and search.
// Async, so another database changes this file, not the services. SQLite-only SQL (FTS5 MATCH)
// stays here; PostgreSQL answers the word tiers with a tsvector column and GIN indexes that keep
// no pending list (migrations/pg 0000, 0013; bench/README §50).
import { and, eq, sql } from "drizzle-orm";
import type { Org, Repo, User } from "../../db/schema/index.ts";
import { statementCache } from "../../db/statements.ts";
import type { Database, Queryable, Tx } from "../../db/database.ts";
import { addCount, type GraphRepo } from "./graph.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";

// ---- Profiles ----------------------------------------------------------------------------------

/** A live (not disabled) account by handle, case-insensitive. */
export async function liveUserByHandle(q: Queryable, handle: string): Promise<User | null> {
  const { users } = tables(q);
  const u = one(await q.select().from(users).where(sql`lower(${users.handle}) = lower(${handle})`).limit(1));
  return u && u.disabledAt === null ? u : null;
}

/** Changes some profile columns of an account. */
export async function updateUser(tx: Tx, id: string, set: Partial<User>): Promise<void> {
  const { users } = tables(tx);
  if (Object.keys(set).length) await tx.update(users).set(set).where(eq(users.id, id));
}

/** Changes some profile columns of an org. */
export async function updateOrg(tx: Tx, id: string, set: Partial<Org>): Promise<void> {
  const { orgs } = tables(tx);
  if (Object.keys(set).length) await tx.update(orgs).set(set).where(eq(orgs.id, id));
}

/** The personal namespace of an account. */
export async function personalNamespace(q: Queryable, userId: string): Promise<Org | null> {
  const { orgs } = tables(q);
  return (
    one(
      await q
        .select()
        .from(orgs)
        .where(and(eq(orgs.ownerUserId, userId), eq(orgs.kind, "personal")))
        .limit(1),
    ) ?? null
  );
}

/** Public repositories of a namespace. */
export async function publicRepoCount(q: Queryable, orgId: string): Promise<number> {
  // `IS TRUE` keeps SQLite on the org's index (an equality on `public` would read explore's (public, active_at) index).
  return (await x(q).rows<{ n: number }>(sql`SELECT count(*) AS n FROM repos WHERE org_id = ${orgId} AND public IS TRUE`))[0]!.n;
}

/** The repository of `orgId` named `name` (case-insensitive), or null. */
export async function repoInOrg(q: Queryable, orgId: string, name: string): Promise<Repo | null> {
  const { repos } = tables(q);
  return (
    one(
      await q
        .select()
        .from(repos)
        .where(and(eq(repos.orgId, orgId), sql`lower(${repos.name}) = lower(${name})`))
        .limit(1),
    ) ?? null
  );
}

// ---- Follows -----------------------------------------------------------------------------------

/** Followers and followees of an account, suspended accounts not counted, and whether `viewerId` follows it. */
export async function followCounts(
  q: Queryable,
  userId: string,
  viewerId: string | null,
): Promise<{ followers: number; following: number; youFollow: boolean }> {
  const row = (
    await x(q).rows<{ followers: number; following: number; you: number }>(sql`
    SELECT
      (SELECT count(*) FROM follows f JOIN users u ON u.id = f.follower_id WHERE f.followee_id = ${userId} AND u.disabled_at IS NULL) AS followers,
      (SELECT count(*) FROM follows f JOIN users u ON u.id = f.followee_id WHERE f.follower_id = ${userId} AND u.disabled_at IS NULL) AS following,
      (SELECT count(*) FROM follows WHERE follower_id = ${viewerId ?? ""} AND followee_id = ${userId}) AS you`)
  )[0]!;
  return { followers: row.followers, following: row.following, youFollow: row.you > 0 };
}

/** Adds a follow edge (nothing when it exists). */
export async function insertFollow(tx: Tx, followerId: string, followeeId: string, t: number): Promise<void> {
  const { follows } = tables(tx);
  await tx.insert(follows).values({ followerId, followeeId, createdAt: t }).onConflictDoNothing();
}

/** Removes a follow edge (nothing when there is none). */
export async function deleteFollow(tx: Tx, followerId: string, followeeId: string): Promise<void> {
  const { follows } = tables(tx);
  await tx.delete(follows).where(and(eq(follows.followerId, followerId), eq(follows.followeeId, followeeId)));
}

/** Up to `limit` followers (side `followers`) or followees (side `following`), newest edge first, live accounts only. */
export async function followPeople(
  q: Queryable,
  userId: string,
  side: "followers" | "following",
  limit: number,
): Promise<{ handle: string; display_name: string | null }[]> {
  // (PostgreSQL has no rowid: the other side's id breaks ties instead of the insertion order)
  const tie = (col: string) => (x(q).name === "pg" ? sql.raw(col) : sql.raw("f.rowid"));
  return side === "followers"
    ? await x(q).rows(sql`SELECT u.handle AS handle, u.display_name AS display_name FROM follows f JOIN users u ON u.id = f.follower_id
        WHERE f.followee_id = ${userId} AND u.disabled_at IS NULL ORDER BY f.created_at DESC, ${tie("f.follower_id")} DESC LIMIT ${limit}`)
    : await x(q).rows(sql`SELECT u.handle AS handle, u.display_name AS display_name FROM follows f JOIN users u ON u.id = f.followee_id
        WHERE f.follower_id = ${userId} AND u.disabled_at IS NULL ORDER BY f.created_at DESC, ${tie("f.followee_id")} DESC LIMIT ${limit}`);
}

// ---- Pins --------------------------------------------------------------------------------------

/** The person's pinned repositories that are public now, in pin order. */
export async function publicPins(q: Queryable, userId: string): Promise<{ org: string; name: string; description: string | null }[]> {
  return await x(q).rows(sql`SELECT o.name AS org, r.name AS name, r.description AS description
    FROM pins p JOIN repos r ON r.id = p.repo_id JOIN orgs o ON o.id = r.org_id
    WHERE p.user_id = ${userId} AND r.public = TRUE ORDER BY p.position`);
}

/** Replaces the person's pins with `repoIds`, in order. */
export async function replacePins(tx: Tx, userId: string, repoIds: string[]): Promise<void> {
  const { pins } = tables(tx);
  await tx.delete(pins).where(eq(pins.userId, userId));
  for (const [position, repoId] of repoIds.entries()) {
    await tx.insert(pins).values({ userId, repoId, position });
  }
}

// ---- Watching ----------------------------------------------------------------------------------

/** Sets the person's watch level on a repository. */
export async function upsertSubscription(
  tx: Tx,
  row: { repoId: string; userId: string; level: "all" | "participating" | "ignore"; createdAt: number },
): Promise<void> {
  const { subscriptions } = tables(tx);
  await tx
    .insert(subscriptions)
    .values(row)
    .onConflictDoUpdate({ target: [subscriptions.repoId, subscriptions.userId], set: { level: row.level } });
}

/** Removes the person's subscription to a repository. */
export async function deleteSubscription(tx: Tx, repoId: string, userId: string): Promise<void> {
  const { subscriptions } = tables(tx);
  await tx.delete(subscriptions).where(and(eq(subscriptions.repoId, repoId), eq(subscriptions.userId, userId)));
}

/** The person's watch level on a repository, or null when they have none. */
export async function subscriptionLevel(q: Queryable, repoId: string, userId: string): Promise<"all" | "participating" | "ignore" | null> {
  const { subscriptions } = tables(q);
  const rows = await q
    .select({ level: subscriptions.level })
    .from(subscriptions)
    .where(and(eq(subscriptions.repoId, repoId), eq(subscriptions.userId, userId)))
    .limit(1);
  return (rows[0]?.level as "all" | "participating" | "ignore" | undefined) ?? null;
}

/** Subscriptions at level `all` (SPEC §2.1 watcher_count). */
export async function watcherCount(q: Queryable, repoId: string): Promise<number> {
  return (await x(q).rows<{ n: number }>(sql`SELECT count(*) AS n FROM subscriptions WHERE repo_id = ${repoId} AND level = 'all'`))[0]!.n;
}

// ---- Contributions -----------------------------------------------------------------------------

/** Live accounts owning each proved address (lower-cased) among `addresses`: the sign-in address once confirmed, or a proved extra one. */
export async function provedOwners(q: Queryable, addresses: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!addresses.length) return out;
  const list = sql.join(
    addresses.map((a) => sql`${a}`),
    sql`, `,
  );
  const rows = await x(q).rows<{ address: string; userId: string }>(sql`
    SELECT lower(e.address) AS address, e.user_id AS "userId" FROM emails e JOIN users u ON u.id = e.user_id
      WHERE lower(e.address) IN (${list}) AND e.verified_at IS NOT NULL AND u.disabled_at IS NULL
    UNION ALL
    SELECT lower(u.email) AS address, u.id AS "userId" FROM users u
      WHERE lower(u.email) IN (${list}) AND u.email_verified_at IS NOT NULL AND u.disabled_at IS NULL`);
  for (const r of rows) if (!out.has(r.address)) out.set(r.address, r.userId);
  return out;
}

/**
 * Credits commits of one repository, each to one person, in the caller's transaction: a commit row
 * per (person, repository, commit), so a commit already credited changes nothing; then, per person
 * with new commits, the repository's slot (handed out on first credit), each day's count blob and
 * the person's version. Answers how many commits were new.
 */
export async function creditCommits(tx: Tx, repoId: string, credits: { userId: string; sha: string; day: number }[]): Promise<number> {
  const added = new Map<string, Map<number, number>>();
  let fresh = 0;
  for (const c of credits) {
    const inserted = await x(tx).rows(sql`INSERT INTO contributions (user_id, repo_id, sha, day) VALUES (${c.userId}, ${repoId}, ${c.sha}, ${c.day})
      ON CONFLICT DO NOTHING RETURNING 1 AS x`);
    if (!inserted.length) continue;
    fresh++;
    let days = added.get(c.userId);
    if (!days) added.set(c.userId, (days = new Map()));
    days.set(c.day, (days.get(c.day) ?? 0) + 1);
  }
  for (const [userId, days] of added) {
    const slot = await slotFor(tx, userId, repoId);
    for (const [day, n] of days) {
      const row = await x(tx).row<{ counts: Uint8Array }>(sql`SELECT counts FROM contribution_counts WHERE user_id = ${userId} AND day = ${day}`);
      const counts = addCount(row ? row.counts : null, slot, n);
      await x(tx).run(sql`INSERT INTO contribution_counts (user_id, day, counts) VALUES (${userId}, ${day}, ${counts})
        ON CONFLICT (user_id, day) DO UPDATE SET counts = excluded.counts`);
    }
    await x(tx).run(sql`UPDATE contribution_people SET version = version + 1 WHERE user_id = ${userId}`);
  }
  return fresh;
}

/** The person's slot for a repository, handed out from their counter on first credit. */
async function slotFor(tx: Tx, userId: string, repoId: string): Promise<number> {
  const have = await x(tx).row<{ slot: number }>(sql`SELECT slot FROM contribution_slots WHERE user_id = ${userId} AND repo_id = ${repoId}`);
  if (have) return have.slot;
  const { slot } = (await x(tx).row<{ slot: number }>(sql`INSERT INTO contribution_people (user_id, next_slot, version) VALUES (${userId}, 1, 0)
    ON CONFLICT (user_id) DO UPDATE SET next_slot = contribution_people.next_slot + 1 RETURNING next_slot - 1 AS slot`))!;
  await x(tx).run(sql`INSERT INTO contribution_slots (user_id, repo_id, slot) VALUES (${userId}, ${repoId}, ${slot})`);
  return slot;
}

/** What the graph reads: the person's repositories as they are now, their contribution version, and the day blobs of a range. */
export interface GraphRows {
  repos: GraphRepo[];
  /** Moves with every credit; 0 for someone never credited. */
  version: number;
  /** Ascending by day. */
  days: [day: number, counts: Uint8Array][];
}

/** Plain SQLite statements prepared once per connection (the graph's read: drizzle would prepare it on every call). */
const { raw, stmt } = statementCache("discovery");

/**
 * Everything the graph reads, in one statement (one consistent view): the person's repositories
 * with their slot, visibility and place now (a few hundred rows at most, a key range joined to
 * repos and orgs by primary key), their version, and the range's day blobs (a key range scan,
 * one row per active day).
 */
export async function contributionGraphRows(q: Queryable, userId: string, fromDay: number, toDay: number): Promise<GraphRows> {
  type Row = [number, number, number | boolean | Uint8Array | null, string | null, string | null];
  let rows: Row[];
  if (x(q).name === "sqlite") {
    rows = raw(
      q,
      "contributionGraphRows",
      `
    SELECT 0, s.slot, r.public, o.name, r.name FROM contribution_slots s JOIN repos r ON r.id = s.repo_id JOIN orgs o ON o.id = r.org_id WHERE s.user_id = ?1
    UNION ALL SELECT 1, version, NULL, NULL, NULL FROM contribution_people WHERE user_id = ?1
    UNION ALL SELECT 2, day, counts, NULL, NULL FROM contribution_counts WHERE user_id = ?1 AND day >= ?2 AND day <= ?3`,
    ).values(userId, fromDay, toDay) as Row[];
  } else {
    // PostgreSQL: a UNION needs one type per column (boolean vs bytea), so three reads.
    const [slots, people, days] = await Promise.all([
      stmt(
        q,
        "graphSlots",
        "SELECT s.slot, r.public, o.name AS org, r.name FROM contribution_slots s JOIN repos r ON r.id = s.repo_id JOIN orgs o ON o.id = r.org_id WHERE s.user_id = ?1",
      ).all<{
        slot: number;
        public: boolean;
        org: string;
        name: string;
      }>(userId),
      stmt(q, "graphVersion", "SELECT version FROM contribution_people WHERE user_id = ?1").all<{ version: number }>(userId),
      stmt(q, "graphDays", "SELECT day, counts FROM contribution_counts WHERE user_id = ?1 AND day >= ?2 AND day <= ?3 ORDER BY day").all<{
        day: number;
        counts: Uint8Array;
      }>(userId, fromDay, toDay),
    ]);
    rows = [
      ...slots.map((r): Row => [0, r.slot, r.public, r.org, r.name]),
      ...people.map((r): Row => [1, r.version, null, null, null]),
      ...days.map((r): Row => [2, r.day, r.counts, null, null]),
    ];
  }
  const out: GraphRows = { repos: [], version: 0, days: [] };
  let sorted = true;
  for (const r of rows) {
    if (r[0] === 0) out.repos.push({ slot: r[1], isPublic: !!r[2], org: r[3]!, name: r[4]! });
    else if (r[0] === 1) out.version = r[1];
    else {
      if (out.days.length && out.days[out.days.length - 1]![0] > r[1]) sorted = false;
      out.days.push([r[1], r[2] as Uint8Array]);
    }
  }
  if (!sorted) out.days.sort((a, b) => a[0] - b[0]);
  return out;
}

// ---- Search ------------------------------------------------------------------------------------

/** Which repositories a search may answer: public ones, plus those of `orgIds` (only `repoId` of them when set). */
export interface SearchScope {
  orgIds: string[];
  repoId: string | null;
}

const HIT_COLUMNS = sql`r.id AS id, r.org_id AS org_id, o.name AS org, r.name AS name, r.description AS description, r.public AS public, r.kind AS kind, r.created_at AS created_at, lower(r.name) AS sort`;

/**
 * The visibility condition of `scope` on `repos r`. Why `IS TRUE` and not `= TRUE`: an equality on
 * `public` lets SQLite (no statistics) choose explore's (public, active_at) index over the name
 * index and read every public repository for a prefix search (bench/README §50).
 */
function visible(scope: SearchScope) {
  if (!scope.orgIds.length) return sql`r.public IS TRUE`;
  const inOrgs = sql`r.org_id IN (${sql.join(
    scope.orgIds.map((id) => sql`${id}`),
    sql`, `,
  )})`;
  return scope.repoId === null ? sql`(r.public IS TRUE OR ${inOrgs})` : sql`(r.public IS TRUE OR (${inOrgs} AND r.id = ${scope.repoId}))`;
}

/** A row of a search answer, before it is shaped as a RepoHit. */
export interface HitRow {
  id: string;
  org_id: string;
  org: string;
  name: string;
  description: string | null;
  public: number;
  kind: "native" | "mirror";
  created_at: number;
  sort: string;
}

/**
 * The folded name the name tiers compare and sort by, in byte order on both databases (SQLite's
 * default; PostgreSQL's `COLLATE "C"`, read through repos_name_c_idx, pg 0013). Why: in a
 * database made with a libc locale such as en_US.UTF-8 U+FFFF sorts before the letters, so the
 * prefix range [term, term + U+FFFF) held only the exact name, and punctuation is skipped at
 * first, so the tiers' order (and their cursors) differed from SQLite's.
 */
function folded(q: Queryable) {
  return x(q).name === "pg" ? sql`lower(r.name) COLLATE "C"` : sql`lower(r.name)`;
}

/** Names starting with `term` (folded; a range: every such name sorts in [term, term + U+FFFF) in byte order). */
function startsWith(q: Queryable, term: string) {
  const f = folded(q);
  return sql`${f} >= ${term} AND ${f} < ${term + "\uffff"}`;
}

/** Names equal to `q` (folded), by folded name then id, after the position `after`. */
export async function searchExact(q: Queryable, term: string, scope: SearchScope, after: [string, string] | null, limit: number): Promise<HitRow[]> {
  const f = folded(q);
  const pos = after ? sql`AND (${f} > ${after[0]} OR (${f} = ${after[0]} AND r.id > ${after[1]}))` : sql``;
  return await x(q).rows(sql`SELECT ${HIT_COLUMNS} FROM repos r JOIN orgs o ON o.id = r.org_id
    WHERE ${f} = ${term} AND ${visible(scope)} ${pos} ORDER BY ${f}, r.id LIMIT ${limit}`);
}

/** Names starting with `q` (folded) but not equal to it. */
export async function searchPrefix(q: Queryable, term: string, scope: SearchScope, after: [string, string] | null, limit: number): Promise<HitRow[]> {
  const f = folded(q);
  const pos = after ? sql`AND (${f} > ${after[0]} OR (${f} = ${after[0]} AND r.id > ${after[1]}))` : sql``;
  return await x(q).rows(sql`SELECT ${HIT_COLUMNS} FROM repos r JOIN orgs o ON o.id = r.org_id
    WHERE ${f} > ${term} AND ${f} < ${term + "\uffff"} AND ${visible(scope)} ${pos}
    ORDER BY ${f}, r.id LIMIT ${limit}`);
}

/** PostgreSQL's form of an FTS5 word query: its quoted prefix words ("w"* AND …) as a tsquery of prefixes (w:* & …). Words are letters and digits only. */
function tsQuery(match: string) {
  const words = [...match.matchAll(/"([\p{L}\p{N}]+)"\*/gu)].map((m) => `${m[1]}:*`);
  return sql`to_tsquery('simple', ${words.join(" & ")})`;
}

/**
 * Runs `fn`, the word tiers' reads, in one read view where PostgreSQL plans each statement for its
 * own words. Why: Bun.sql prepares statements, and after five runs PostgreSQL may keep a generic
 * plan, built without knowing the words, for every later search on that connection; after a mix
 * of words it joined a common word's 2,300 matches to the document ids in a nested loop (20-30 ms
 * where the plan made for the word takes 0.3 ms; bench/README §50). SQLite plans each run anyway.
 */
export async function inWordView<T>(db: Database, fn: (q: Queryable) => Promise<T>): Promise<T> {
  return await db.readView(async (q) => {
    if (x(q).name === "pg") await x(q).run(sql`SET LOCAL plan_cache_mode = force_custom_plan`);
    return await fn(q);
  });
}

/** A word-tier row: a hit and its search document id (the tier's order and cursor). */
export type WordHitRow = HitRow & { docid: number };

/**
 * Repositories whose words match every word of `match` (an FTS5 query), whose name does not start
 * with `term`, in document order (the order repositories were made) after document `afterDoc`:
 * by `name`, those whose name words alone match; by `description`, the others whose name and
 * description words match (the lower tier). Why document order: it is the order FTS5 yields
 * matches in, so the scan stops after `limit` visible hits instead of sorting every match of a
 * common word (bench/README.md).
 */
export async function searchWords(
  q: Queryable,
  match: string,
  by: "name" | "description",
  term: string,
  scope: SearchScope,
  afterDoc: number | null,
  limit: number,
): Promise<WordHitRow[]> {
  if (x(q).name === "pg") {
    // The generated tsvector over name and description and the name's own words, each with a GIN
    // index (migrations/pg 0000, 0013).
    const tq = tsQuery(match);
    const inName = sql`to_tsvector('simple', r.name) @@ ${tq}`;
    const cond = by === "name" ? sql`r.search_tsv @@ ${tq} AND ${inName}` : sql`r.search_tsv @@ ${tq} AND NOT (${inName})`;
    const after = afterDoc !== null ? sql`AND d.docid > ${afterDoc}` : sql``;
    return await x(q).rows(sql`SELECT ${HIT_COLUMNS}, d.docid AS docid FROM repo_search_docs d
      JOIN repos r ON r.id = d.repo_id JOIN orgs o ON o.id = r.org_id
      WHERE ${cond} ${after} AND NOT (${startsWith(q, term)}) AND ${visible(scope)}
      ORDER BY d.docid LIMIT ${limit}`);
  }
  const pos = afterDoc !== null ? sql`AND s.rowid > ${afterDoc}` : sql``;
  const expr = by === "name" ? `name : (${match})` : `(${match}) NOT (name : (${match}))`;
  return await x(q).rows(sql`SELECT ${HIT_COLUMNS}, s.rowid AS docid FROM repo_search s JOIN repo_search_docs d ON d.docid = s.rowid
    JOIN repos r ON r.id = d.repo_id JOIN orgs o ON o.id = r.org_id
    WHERE repo_search MATCH ${expr} ${pos} AND NOT (${startsWith(q, term)}) AND ${visible(scope)}
    ORDER BY s.rowid LIMIT ${limit}`);
}

/** The orgs where the person holds a role. */
export async function memberOrgIds(q: Queryable, userId: string): Promise<string[]> {
  return (await x(q).rows<{ id: string }>(sql`SELECT org_id AS id FROM memberships WHERE user_id = ${userId}`)).map((r) => r.id);
}

/**
 * Up to `limit` repositories matching the query in any tier, counted (at most `cap`): the search
 * page's result count. Each tier's rows are read through its own index; the word arm leaves out
 * the names the name arm reads, so the two never share a row and a `UNION ALL` stops at `cap`
 * (a `UNION` reads and de-duplicates every match of a common word before the first row counts).
 */
export async function countSearchHits(q: Queryable, term: string, match: string | null, scope: SearchScope, cap: number): Promise<number> {
  const named = startsWith(q, term);
  const byName = sql`SELECT r.id FROM repos r WHERE ${named} AND ${visible(scope)}`;
  let words = sql``;
  if (match !== null) {
    if (x(q).name === "pg") {
      words = sql` UNION ALL SELECT r.id FROM repos r WHERE r.search_tsv @@ ${tsQuery(match)} AND NOT (${named}) AND ${visible(scope)}`;
    } else {
      words = sql` UNION ALL SELECT r.id FROM repo_search s JOIN repo_search_docs d ON d.docid = s.rowid JOIN repos r ON r.id = d.repo_id
        WHERE repo_search MATCH ${match} AND NOT (${named}) AND ${visible(scope)}`;
    }
  }
  const row = await x(q).row<{ n: number }>(sql`SELECT count(*) AS n FROM (SELECT id FROM (${byName}${words}) u LIMIT ${cap}) c`);
  return Number(row?.n ?? 0);
}

// ---- Explore -----------------------------------------------------------------------------------

/** An explore row: a search hit and when the repository was last active. */
export type ExploreRow = Omit<HitRow, "sort"> & { active_at: number };

/**
 * Public repositories, most recently active first (then by id, descending), after the position
 * `after` ([active_at, id]); a range of the (public, active_at) index read backwards.
 */
export async function publicByActivity(q: Queryable, after: [number, string] | null, limit: number): Promise<ExploreRow[]> {
  const pos = after ? sql`AND (r.active_at < ${after[0]} OR (r.active_at = ${after[0]} AND r.id < ${after[1]}))` : sql``;
  return await x(q).rows(sql`SELECT r.id AS id, r.org_id AS org_id, o.name AS org, r.name AS name, r.description AS description, r.public AS public,
      r.kind AS kind, r.created_at AS created_at, r.active_at AS active_at
    FROM repos r JOIN orgs o ON o.id = r.org_id
    WHERE r.public = TRUE AND r.active_at IS NOT NULL ${pos} ORDER BY r.active_at DESC, r.id DESC LIMIT ${limit}`);
}
