// The repos domain's queries: repositories, branch protections and commit contexts. Async, so
// another database changes this file, not the services.
import { and, count, asc, eq, gt, sql } from "drizzle-orm";
import type { protections, Org, Repo } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";
import { x } from "../../db/dialect.ts";

export type Protection = typeof protections.$inferSelect;

/** Public repositories forked directly from the repository, and its watchers at level `all`. */
export async function repoCounts(q: Queryable, repoId: string): Promise<{ forkCount: number; watchers: number }> {
  const { repos, subscriptions } = tables(q);
  return {
    forkCount: one(
      await q
        .select({ n: count() })
        .from(repos)
        // `IS TRUE`, not `= TRUE`: an equality on `public` would let SQLite pick explore's (public, active_at) index and read every public repository.
        .where(and(eq(repos.forkParentId, repoId), sql`${repos.public} IS TRUE`))
        .limit(1),
    )!.n,
    watchers: one(
      await q
        .select({ n: count() })
        .from(subscriptions)
        .where(and(eq(subscriptions.repoId, repoId), eq(subscriptions.level, "all")))
        .limit(1),
    )!.n,
  };
}

/** Whether the org has a repository named `name` (case-insensitive). */
export async function repoNameTaken(q: Queryable, orgId: string, name: string): Promise<boolean> {
  const { repos } = tables(q);
  return !!one(
    await q
      .select({ id: repos.id })
      .from(repos)
      .where(and(eq(repos.orgId, orgId), sql`lower(${repos.name}) = lower(${name})`))
      .limit(1),
  );
}

/** Creates a repository row; its name stops being another repository's old name (no redirect any more). */
export async function insertRepo(tx: Tx, row: Repo): Promise<void> {
  const { repos } = tables(tx);
  await dropRedirect(tx, row.orgId, row.name);
  await tx.insert(repos).values(row);
}

/** Up to `limit` of the org's repositories by folded name, after the folded name `after`. */
export async function reposAfter(q: Queryable, orgId: string, after: string | null, limit: number): Promise<Repo[]> {
  const { repos } = tables(q);
  return await q
    .select()
    .from(repos)
    .where(after === null ? eq(repos.orgId, orgId) : and(eq(repos.orgId, orgId), gt(sql`lower(${repos.name})`, after)))
    .orderBy(asc(sql`lower(${repos.name})`))
    .limit(limit);
}

/** The repository with id `id`, or null. */
export async function repoById(q: Queryable, id: string): Promise<Repo | null> {
  const { repos } = tables(q);
  return one(await q.select().from(repos).where(eq(repos.id, id)).limit(1)) ?? null;
}

/** Changes some columns of a repository. */
export async function updateRepo(tx: Tx, id: string, set: Partial<Repo>): Promise<void> {
  const { repos } = tables(tx);
  if (Object.keys(set).length) await tx.update(repos).set(set).where(eq(repos.id, id));
}

/**
 * Deletes a repository row and its refs (the rest of its rows go by foreign-key cascade). Its
 * forks stay, detached: their fork_parent becomes null (SPEC §2.1 "upstream deleted").
 */
export async function deleteRepo(tx: Tx, id: string): Promise<void> {
  const { refs, repos } = tables(tx);
  await tx.delete(refs).where(eq(refs.repoId, id));
  await tx.update(repos).set({ forkParentId: null }).where(eq(repos.forkParentId, id));
  await tx.delete(repos).where(eq(repos.id, id));
}

/** A repository and its namespace by the repository's id, or null. */
export async function repoWithOrg(q: Queryable, id: string): Promise<{ repo: Repo; org: Org } | null> {
  const { repos, orgs } = tables(q);
  return one(await q.select({ repo: repos, org: orgs }).from(repos).innerJoin(orgs, eq(orgs.id, repos.orgId)).where(eq(repos.id, id)).limit(1)) ?? null;
}

/** The name of the person's personal namespace, or null. */
export async function personalNamespace(q: Queryable, userId: string): Promise<string | null> {
  const { orgs } = tables(q);
  return (
    one(
      await q
        .select({ name: orgs.name })
        .from(orgs)
        .where(and(eq(orgs.ownerUserId, userId), eq(orgs.kind, "personal")))
        .limit(1),
    )?.name ?? null
  );
}

/** Copies the branches and tags of `fromId` to `toId` (one statement), leaving any ref `toId` already has. */
export async function copyBranchesAndTags(tx: Tx, fromId: string, toId: string): Promise<void> {
  await x(tx).run(sql`INSERT INTO refs (repo_id, name, target)
    SELECT ${toId}, name, target FROM refs
    WHERE repo_id = ${fromId} AND (substr(name, 1, 11) = 'refs/heads/' OR substr(name, 1, 10) = 'refs/tags/')
    ON CONFLICT DO NOTHING`);
}

/** Creates a protection, or replaces the rules of the one with the same pattern. */
export async function upsertProtection(tx: Tx, row: Protection): Promise<void> {
  const { protections } = tables(tx);
  await tx
    .insert(protections)
    .values(row)
    .onConflictDoUpdate({
      target: [protections.repoId, protections.pattern],
      set: {
        allowForcePush: row.allowForcePush,
        allowDeletion: row.allowDeletion,
        requireChange: row.requireChange,
        requiredChecks: row.requiredChecks,
        requiredApprovals: row.requiredApprovals,
        dismissStaleApprovals: row.dismissStaleApprovals,
      },
    });
}

/** Deletes the protection with exactly this pattern; false when there was none. */
export async function deleteProtection(tx: Tx, repoId: string, pattern: string): Promise<boolean> {
  const { protections } = tables(tx);
  return (
    (
      await tx
        .delete(protections)
        .where(and(eq(protections.repoId, repoId), eq(protections.pattern, pattern)))
        .returning()
    ).length > 0
  );
}

/** Records a commit's context (JSON text); the first record wins, it is never changed. */
export async function insertCommitContext(tx: Tx, row: { repoId: string; sha: string; context: string; createdAt: number }): Promise<void> {
  const { commitContexts } = tables(tx);
  await tx.insert(commitContexts).values(row).onConflictDoNothing();
}

/** The JSON text of a commit's context, or null when it has none. */
export async function commitContext(q: Queryable, repoId: string, sha: string): Promise<string | null> {
  const { commitContexts } = tables(q);
  return (
    one(
      await q
        .select({ context: commitContexts.context })
        .from(commitContexts)
        .where(and(eq(commitContexts.repoId, repoId), eq(commitContexts.sha, sha)))
        .limit(1),
    )?.context ?? null
  );
}

/** Forgets the old name `name` of the org (case-insensitive): a repository now holds it. */
export async function dropRedirect(tx: Tx, orgId: string, name: string): Promise<void> {
  const { repoRedirects } = tables(tx);
  await tx.delete(repoRedirects).where(and(eq(repoRedirects.orgId, orgId), sql`lower(${repoRedirects.name}) = lower(${name})`));
}

/** Records that `oldName` now leads to the repository `repoId` (replacing any earlier row for that name). */
export async function recordRedirect(tx: Tx, row: { orgId: string; name: string; repoId: string; createdAt: number }): Promise<void> {
  const { repoRedirects } = tables(tx);
  await dropRedirect(tx, row.orgId, row.name);
  await tx.insert(repoRedirects).values(row);
}

/** The id of the repository the org's old name `name` leads to (case-insensitive), or null. */
export async function redirectOf(q: Queryable, orgId: string, name: string): Promise<string | null> {
  const { repoRedirects } = tables(q);
  return (
    one(
      await q
        .select({ repoId: repoRedirects.repoId })
        .from(repoRedirects)
        .where(and(eq(repoRedirects.orgId, orgId), sql`lower(${repoRedirects.name}) = lower(${name})`))
        .limit(1),
    )?.repoId ?? null
  );
}
