// The CI domain's queries for runner policy, groups, registration tokens and machines. Async, so
// another database changes this file, not the services. Runs and jobs: store-runs.ts.
import { and, count, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { runnerGroups, runnerPolicies, RunnerRegistrationRow, RunnerRow } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { jsonOf, query, stmt } from "./store-runs.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

const ph = sql.placeholder;

export type GroupRow = typeof runnerGroups.$inferSelect;
export type PolicyRow = typeof runnerPolicies.$inferSelect;

/** The labels of every live machine of the org, or (null) of every live instance runner. */
export async function liveRunnerLabels(q: Queryable, orgId: string | null): Promise<string[][]> {
  const { runners } = tables(q);
  const pool = orgId === null ? and(isNull(runners.orgId), eq(runners.hosted, true)) : eq(runners.orgId, orgId);
  return (
    await q
      .select({ labels: runners.labels })
      .from(runners)
      .where(and(pool, isNull(runners.removedAt)))
  ).map((r) => r.labels);
}

/** The name of the org `id`, or null. */
export async function orgNameById(q: Queryable, id: string): Promise<string | null> {
  const { orgs } = tables(q);
  return one(await q.select({ name: orgs.name }).from(orgs).where(eq(orgs.id, id)).limit(1))?.name ?? null;
}

// ---- policy ----

/** The org's stored policy row, or null (the default policy applies). */
export async function policyRow(q: Queryable, orgId: string): Promise<PolicyRow | null> {
  const { runnerPolicies } = tables(q);
  return (
    (await query(q, "policyRow", (q) =>
      q
        .select()
        .from(runnerPolicies)
        .where(eq(runnerPolicies.orgId, ph("orgId"))),
    ).get({ orgId })) ?? null
  );
}

/** Names of the policy's selected repositories, sorted by folded name. */
export async function policyRepoNames(q: Queryable, orgId: string): Promise<string[]> {
  const { repos, runnerPolicyRepos } = tables(q);
  const rows = await q
    .select({ name: repos.name })
    .from(runnerPolicyRepos)
    .innerJoin(repos, eq(repos.id, runnerPolicyRepos.repoId))
    .where(eq(runnerPolicyRepos.orgId, orgId))
    .orderBy(sql`lower(${repos.name})`);
  return rows.map((r) => r.name);
}

/** Creates or replaces the org's policy row. */
export async function upsertPolicy(tx: Tx, row: PolicyRow): Promise<void> {
  const { runnerPolicies } = tables(tx);
  await tx
    .insert(runnerPolicies)
    .values(row)
    .onConflictDoUpdate({ target: runnerPolicies.orgId, set: { hosted: row.hosted, selfHosted: row.selfHosted, updatedAt: row.updatedAt } });
}

/** Replaces the policy's selected repositories. */
export async function replacePolicyRepos(tx: Tx, orgId: string, repoIds: string[]): Promise<void> {
  const { runnerPolicyRepos } = tables(tx);
  await tx.delete(runnerPolicyRepos).where(eq(runnerPolicyRepos.orgId, orgId));
  for (const repoId of repoIds) await tx.insert(runnerPolicyRepos).values({ orgId, repoId });
}

/** The org's repositories named in `names` (case-insensitive), keyed by folded name. */
export async function reposByNames(q: Queryable, orgId: string, names: string[]): Promise<Map<string, { id: string; name: string }>> {
  const { repos } = tables(q);
  const folded = [...new Set(names.map((n) => n.toLowerCase()))];
  const out = new Map<string, { id: string; name: string }>();
  if (!folded.length) return out;
  const rows = await q
    .select({ id: repos.id, name: repos.name })
    .from(repos)
    .where(and(eq(repos.orgId, orgId), inArray(sql`lower(${repos.name})`, folded)));
  for (const r of rows) out.set(r.name.toLowerCase(), r);
  return out;
}

// ---- groups ----

/** Every group of the org by folded name, with its live machine count. */
export async function groupsOfOrg(q: Queryable, orgId: string): Promise<(GroupRow & { runnerCount: number })[]> {
  const { runnerGroups } = tables(q);
  return await q
    .select({
      id: runnerGroups.id,
      orgId: runnerGroups.orgId,
      name: runnerGroups.name,
      repoAccess: runnerGroups.repoAccess,
      allowPublic: runnerGroups.allowPublic,
      isDefault: runnerGroups.isDefault,
      createdAt: runnerGroups.createdAt,
      updatedAt: runnerGroups.updatedAt,
      // Why the table name written out: drizzle renders ${runnerGroups.id} unqualified ("id") in a
      // one-table select, which inside this subquery would be the runner's own id.
      runnerCount: sql<number>`(SELECT count(*) FROM runners r WHERE r.group_id = runner_groups.id AND r.removed_at IS NULL)`,
    })
    .from(runnerGroups)
    .where(eq(runnerGroups.orgId, orgId))
    .orderBy(sql`${runnerGroups.isDefault} DESC`, sql`lower(${runnerGroups.name})`);
}

/** Repository names of each of `groupIds` (sorted by folded name). */
export async function groupRepoNames(q: Queryable, groupIds: string[]): Promise<Map<string, string[]>> {
  const { runnerGroupRepos, repos } = tables(q);
  const out = new Map<string, string[]>();
  if (!groupIds.length) return out;
  const rows = await q
    .select({ groupId: runnerGroupRepos.groupId, name: repos.name })
    .from(runnerGroupRepos)
    .innerJoin(repos, eq(repos.id, runnerGroupRepos.repoId))
    .where(inArray(runnerGroupRepos.groupId, groupIds))
    .orderBy(sql`lower(${repos.name})`);
  for (const r of rows) {
    let list = out.get(r.groupId);
    if (!list) out.set(r.groupId, (list = []));
    list.push(r.name);
  }
  return out;
}

/** The live machine count of a group. */
export async function groupRunnerCount(q: Queryable, groupId: string): Promise<number> {
  const { runners } = tables(q);
  return one(
    await q
      .select({ n: count() })
      .from(runners)
      .where(and(eq(runners.groupId, groupId), isNull(runners.removedAt)))
      .limit(1),
  )!.n;
}

/** The group `id` of the org, or null. */
export async function groupById(q: Queryable, orgId: string, id: string): Promise<GroupRow | null> {
  const { runnerGroups } = tables(q);
  const st = query(q, "groupById", (q) =>
    q
      .select()
      .from(runnerGroups)
      .where(and(eq(runnerGroups.orgId, ph("orgId")), eq(runnerGroups.id, ph("id")))),
  );
  return (await st.get({ orgId, id })) ?? null;
}

/** The group named `name` (case-insensitive) of the org, or null. */
export async function groupByName(q: Queryable, orgId: string, name: string): Promise<GroupRow | null> {
  const { runnerGroups } = tables(q);
  return (
    one(
      await q
        .select()
        .from(runnerGroups)
        .where(and(eq(runnerGroups.orgId, orgId), sql`lower(${runnerGroups.name}) = lower(${name})`))
        .limit(1),
    ) ?? null
  );
}

/** The org's default group, or null when it was never needed yet. */
export async function defaultGroup(q: Queryable, orgId: string): Promise<GroupRow | null> {
  const { runnerGroups } = tables(q);
  return (
    one(
      await q
        .select()
        .from(runnerGroups)
        .where(and(eq(runnerGroups.orgId, orgId), eq(runnerGroups.isDefault, true)))
        .limit(1),
    ) ?? null
  );
}

/** Creates a group. */
export async function insertGroup(tx: Tx, row: GroupRow): Promise<void> {
  const { runnerGroups } = tables(tx);
  await tx.insert(runnerGroups).values(row);
}

/** Updates a group's fields. */
export async function updateGroup(tx: Tx, id: string, set: Partial<Pick<GroupRow, "name" | "repoAccess" | "allowPublic" | "updatedAt">>): Promise<void> {
  const { runnerGroups } = tables(tx);
  await tx.update(runnerGroups).set(set).where(eq(runnerGroups.id, id));
}

/** Replaces a group's selected repositories. */
export async function replaceGroupRepos(tx: Tx, groupId: string, repoIds: string[]): Promise<void> {
  const { runnerGroupRepos } = tables(tx);
  await tx.delete(runnerGroupRepos).where(eq(runnerGroupRepos.groupId, groupId));
  for (const repoId of repoIds) await tx.insert(runnerGroupRepos).values({ groupId, repoId });
}

/** Moves every machine (live and tombstoned) of one group to another. */
export async function moveRunners(tx: Tx, fromGroupId: string, toGroupId: string): Promise<void> {
  const { runners } = tables(tx);
  await tx.update(runners).set({ groupId: toGroupId }).where(eq(runners.groupId, fromGroupId));
}

/** Deletes a group; its repositories and outstanding registration tokens go with it (foreign keys cascade). */
export async function deleteGroup(tx: Tx, id: string): Promise<void> {
  const { runnerGroups } = tables(tx);
  await tx.delete(runnerGroups).where(eq(runnerGroups.id, id));
}

// ---- registration tokens ----

/** Stores a registration token (its digest only). */
export async function insertRegistration(tx: Tx, row: RunnerRegistrationRow): Promise<void> {
  const { runnerRegistrationTokens } = tables(tx);
  await tx.insert(runnerRegistrationTokens).values(row);
}

/** The registration token with id `id`, or null. */
export async function registrationById(q: Queryable, id: string): Promise<RunnerRegistrationRow | null> {
  const { runnerRegistrationTokens } = tables(q);
  return (
    (await query(q, "registrationById", (q) =>
      q
        .select()
        .from(runnerRegistrationTokens)
        .where(eq(runnerRegistrationTokens.id, ph("id"))),
    ).get({ id })) ?? null
  );
}

/** Spends a registration token if it is still unspent and unexpired; false when it was not. */
export async function spendRegistration(tx: Tx, id: string, t: number): Promise<boolean> {
  const { runnerRegistrationTokens } = tables(tx);
  const r = await tx
    .update(runnerRegistrationTokens)
    .set({ spentAt: t })
    .where(and(eq(runnerRegistrationTokens.id, id), isNull(runnerRegistrationTokens.spentAt), sql`${runnerRegistrationTokens.expiresAt} > ${t}`))
    .returning({ id: sql`1` });
  return r.length === 1;
}

// ---- machines ----

/** The machine with id `id` (live or tombstoned), or null. */
export async function runnerById(q: Queryable, id: string): Promise<RunnerRow | null> {
  const { runners } = tables(q);
  return (
    (await query(q, "runnerById", (q) =>
      q
        .select()
        .from(runners)
        .where(eq(runners.id, ph("id"))),
    ).get({ id })) ?? null
  );
}

/** What a claim needs of a live machine, re-read inside the claim; null once it is removed (or gone). */
export async function claimingRunner(
  q: Queryable,
  id: string,
): Promise<{ id: string; name: string; orgId: string | null; groupId: string | null; hosted: boolean; labels: string[] } | null> {
  const r = (await stmt(q, "claimingRunner", "SELECT id, name, org_id, group_id, hosted, labels FROM runners WHERE id = ? AND removed_at IS NULL").get(
    id,
  )) as Record<string, any> | null;
  return r ? { id: r.id, name: r.name, orgId: r.org_id, groupId: r.group_id, hosted: !!r.hosted, labels: jsonOf<string[]>(r.labels) } : null;
}

/** The columns of a machine that can change after registration and matter to its credential: null when the row is gone. */
export async function runnerLiveness(q: Queryable, id: string): Promise<{ removedAt: number | null; groupId: string | null } | null> {
  const r = (await stmt(q, "runnerLiveness", "SELECT removed_at, group_id FROM runners WHERE id = ?").get(id)) as {
    removed_at: number | null;
    group_id: string | null;
  } | null;
  return r ? { removedAt: r.removed_at, groupId: r.group_id } : null;
}

/** The machines among `ids` that are live (not removed, row present): one statement for many waiting claims. */
export async function liveRunnerIds(q: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { runners } = tables(q);
  const rows = await q
    .select({ id: runners.id })
    .from(runners)
    .where(and(inArray(runners.id, ids), isNull(runners.removedAt)));
  return new Set(rows.map((r) => r.id));
}

/** Whether machine `id` is ephemeral (false when it is gone). */
export async function runnerIsEphemeral(q: Queryable, id: string): Promise<boolean> {
  return !!((await stmt(q, "runnerIsEphemeral", "SELECT ephemeral FROM runners WHERE id = ?").get(id)) as { ephemeral: number } | null)?.ephemeral;
}

/**
 * How a self-hosted machine of org `orgId` routes (SPEC §4.1 claim rule 2), in one statement: the
 * org's self_hosted policy (`all` when none is stored) and the machine's group `groupId`, or the
 * org's default group when that is gone or unset. Null when the org has no such group at all.
 */
export async function routeRow(
  q: Queryable,
  orgId: string,
  groupId: string | null,
): Promise<{ selfHosted: PolicyRow["selfHosted"]; groupId: string; repoAccess: GroupRow["repoAccess"]; allowPublic: boolean } | null> {
  const st = stmt(
    q,
    "routeRow",
    `SELECT coalesce((SELECT p.self_hosted FROM runner_policies p WHERE p.org_id = ?1), 'all') AS self_hosted, g.id, g.repo_access, g.allow_public
     FROM runner_groups g WHERE g.id = coalesce((SELECT id FROM runner_groups WHERE id = ?2 AND org_id = ?1), (SELECT id FROM runner_groups WHERE org_id = ?1 AND is_default))`,
  );
  const r = (await st.get(orgId, groupId)) as Record<string, any> | null;
  return r ? { selfHosted: r.self_hosted, groupId: r.id, repoAccess: r.repo_access, allowPublic: !!r.allow_public } : null;
}

/** The live machine named `name` (case-insensitive) of the org (null org: instance runners), or null. */
export async function liveRunnerByName(q: Queryable, orgId: string | null, name: string): Promise<RunnerRow | null> {
  const { runners } = tables(q);
  return (
    one(
      await q
        .select()
        .from(runners)
        .where(and(orgId === null ? isNull(runners.orgId) : eq(runners.orgId, orgId), isNull(runners.removedAt), sql`lower(${runners.name}) = lower(${name})`))
        .limit(1),
    ) ?? null
  );
}

/** Creates a machine. */
export async function insertRunner(tx: Tx, row: RunnerRow): Promise<void> {
  const { runners } = tables(tx);
  await tx.insert(runners).values(row);
}

/** Tombstones a machine (kept for job history, never listed); false when it was already removed. */
export async function tombstoneRunner(tx: Tx, id: string, t: number): Promise<boolean> {
  const { runners } = tables(tx);
  return (
    (
      await tx
        .update(runners)
        .set({ removedAt: t })
        .where(and(eq(runners.id, id), isNull(runners.removedAt)))
        .returning({ id: runners.id })
    ).length === 1
  );
}

/** The org's live machines by folded name, each with its group and current running job. */
export async function liveRunnersOfOrg(q: Queryable, orgId: string) {
  const { runners, runnerGroups, workflowJobs, repos } = tables(q);
  return await q
    .select({
      runner: runners,
      groupName: runnerGroups.name,
      jobId: workflowJobs.id,
      runId: workflowJobs.runId,
      jobKey: workflowJobs.key,
      repoName: repos.name,
    })
    .from(runners)
    .leftJoin(runnerGroups, eq(runnerGroups.id, runners.groupId))
    .leftJoin(workflowJobs, and(eq(workflowJobs.runnerId, runners.id), eq(workflowJobs.state, "running")))
    .leftJoin(repos, eq(repos.id, workflowJobs.repoId))
    .where(and(eq(runners.orgId, orgId), isNull(runners.removedAt)))
    .orderBy(asc(sql`lower(${runners.name})`));
}

/** The live machine `id` of the org, or null. */
export async function liveRunnerOfOrg(q: Queryable, orgId: string, id: string): Promise<RunnerRow | null> {
  const { runners } = tables(q);
  return (
    one(
      await q
        .select()
        .from(runners)
        .where(and(eq(runners.id, id), eq(runners.orgId, orgId), isNull(runners.removedAt)))
        .limit(1),
    ) ?? null
  );
}

/**
 * Writes batched last_seen_at stamps (never moving one backwards) in one statement per 1,000
 * machines: one statement per flush, however many machines called (bench/README §26: a statement
 * per machine was most of what idle long polls cost a shared database).
 */
export async function stampRunnersSeen(q: Queryable | Tx, stamps: [string, number][]): Promise<void> {
  const st = stmt(q, "stampRunnersSeen", {
    sqlite:
      "UPDATE runners SET last_seen_at = v.t FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS t FROM json_each(?1)) AS v " +
      "WHERE runners.id = v.id AND runners.last_seen_at < v.t",
    pg:
      "UPDATE runners SET last_seen_at = v.t FROM (SELECT e->>0 AS id, (e->>1)::bigint AS t FROM jsonb_array_elements($1::text::jsonb) AS e) AS v " +
      "WHERE runners.id = v.id AND runners.last_seen_at < v.t",
  });
  for (let i = 0; i < stamps.length; i += 1000) await st.run(JSON.stringify(stamps.slice(i, i + 1000)));
}
