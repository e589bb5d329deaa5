// Reads of the event log for activity feeds: the newest events of one org (by the
// events_org_idx index), with the names a page shows. Deleted repositories drop out by the join.
import { and, desc, eq, sql } from "drizzle-orm";
import { statementCache } from "../../db/statements.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { tables } from "../../db/tables.ts";

/** One event as a feed shows it. */
export interface ActivityRow {
  id: string;
  kind: string;
  payload: unknown;
  org: string;
  repo: string;
  actor: string | null;
  createdAt: number;
}

// Prepared once per connection: building the query was most of what a home page's feed cost.
const { query } = statementCache("activity");

/** The newest `limit` events of the org (of one repository of it when `repoId` is given), newest first. */
export async function recentOrgEvents(q: Queryable, orgId: string, repoId: string | null, limit: number): Promise<ActivityRow[]> {
  const build = (oneRepo: boolean) => (q: Queryable) => {
    const { events, orgs, repos, users } = tables(q);
    const org = eq(events.orgId, sql.placeholder("orgId"));
    return q
      .select({ id: events.id, kind: events.kind, payload: events.payload, org: orgs.name, repo: repos.name, actor: users.handle, createdAt: events.createdAt })
      .from(events)
      .innerJoin(repos, eq(repos.id, events.repoId))
      .innerJoin(orgs, eq(orgs.id, events.orgId))
      .leftJoin(users, eq(users.id, events.actorUserId))
      .where(oneRepo ? and(org, eq(events.repoId, sql.placeholder("repoId"))) : org)
      .orderBy(desc(events.createdAt), desc(events.id))
      .limit(sql.placeholder("limit"));
  };
  if (repoId === null) return await query(q, "recentOrgEvents", build(false)).all({ orgId, limit });
  return await query(q, "recentRepoEvents", build(true)).all({ orgId, repoId, limit });
}

/** Adds a push's summary (activity-summary.ts) to its stored event's payload, keeping what was there. */
export async function setEventRefs(tx: Tx, eventId: string, summary: { refs: unknown[]; refs_total: number }): Promise<void> {
  const { events } = tables(tx);
  const row = (await tx.select({ payload: events.payload }).from(events).where(eq(events.id, eventId)).limit(1))[0];
  if (!row) return;
  const payload = row.payload && typeof row.payload === "object" ? (row.payload as Record<string, unknown>) : {};
  await tx
    .update(events)
    .set({ payload: { ...payload, ...summary } })
    .where(eq(events.id, eventId));
}
