// The people domain's credential queries: API tokens and SSH keys. Async, so another database
// changes this file, not the services.
import { and, asc, eq, ne, sql, type SQL } from "drizzle-orm";
import type { sshKeys, Token } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { one } from "../../db/rows.ts";
import { tables } from "../../db/tables.ts";

export type SshKeyRow = typeof sshKeys.$inferSelect;

/** A position in a list ordered by creation: `[created_at, id]` of the last item seen. */
export type CreatedKey = [number, string];

/** Whether a decoded cursor is a `CreatedKey` (for `parsePage`). */
export function isCreatedKey(key: unknown): key is CreatedKey {
  return Array.isArray(key) && key.length === 2 && Number.isSafeInteger(key[0]) && typeof key[1] === "string";
}

/** A page request over a list ordered by creation. */
export interface CreatedPage {
  after: CreatedKey | null;
  limit: number;
}

// — Tokens

/** The personal or service token `id` of the org (job tokens are not managed here), or null. */
export async function managedToken(q: Queryable, orgId: string, id: string): Promise<Token | null> {
  const { tokens } = tables(q);
  return (
    one(
      await q
        .select()
        .from(tokens)
        .where(and(eq(tokens.id, id), eq(tokens.orgId, orgId), ne(tokens.kind, "job")))
        .limit(1),
    ) ?? null
  );
}

/** Records a token (only the digest of its secret). */
export async function insertToken(tx: Tx, row: Token): Promise<void> {
  const { tokens } = tables(tx);
  await tx.insert(tokens).values(row);
}

/** Deletes a token; requests presenting it fail from now on. */
export async function deleteToken(tx: Tx, id: string): Promise<void> {
  const { tokens } = tables(tx);
  await tx.delete(tokens).where(eq(tokens.id, id));
}

/** Writes last_used_at stamps. */
export async function stampTokens(tx: Tx, stamps: [id: string, t: number][]): Promise<void> {
  const { tokens } = tables(tx);
  for (const [id, t] of stamps) await tx.update(tokens).set({ lastUsedAt: t }).where(eq(tokens.id, id));
}

/**
 * A page of the org's personal and service tokens by creation, each with the name of the
 * repository it is bound to; only `userId`'s when given.
 */
export async function listTokens(q: Queryable, orgId: string, userId: string | null, page: CreatedPage): Promise<(Token & { repoName: string | null })[]> {
  const { tokens, repos } = tables(q);
  const where: (SQL | undefined)[] = [eq(tokens.orgId, orgId), ne(tokens.kind, "job")];
  if (userId !== null) where.push(eq(tokens.userId, userId));
  if (page.after) where.push(sql`(${tokens.createdAt}, ${tokens.id}) > (${page.after[0]}, ${page.after[1]})`);
  const rows = await q
    .select({ token: tokens, repoName: repos.name })
    .from(tokens)
    .leftJoin(repos, eq(repos.id, tokens.repoId))
    .where(and(...where))
    .orderBy(asc(tokens.createdAt), asc(tokens.id))
    .limit(page.limit);
  return rows.map((r) => ({ ...r.token, repoName: r.repoName }));
}

// — SSH keys

/** The key with this fingerprint, in any org, or null. */
export async function keyByFingerprint(q: Queryable, fingerprint: string): Promise<SshKeyRow | null> {
  const { sshKeys } = tables(q);
  return one(await q.select().from(sshKeys).where(eq(sshKeys.fingerprint, fingerprint)).limit(1)) ?? null;
}

/** The key `id` of the org, or null. */
export async function keyInOrg(q: Queryable, orgId: string, id: string): Promise<SshKeyRow | null> {
  const { sshKeys } = tables(q);
  return (
    one(
      await q
        .select()
        .from(sshKeys)
        .where(and(eq(sshKeys.id, id), eq(sshKeys.orgId, orgId)))
        .limit(1),
    ) ?? null
  );
}

/** Records a key. */
export async function insertKey(tx: Tx, row: SshKeyRow): Promise<void> {
  const { sshKeys } = tables(tx);
  await tx.insert(sshKeys).values(row);
}

/** Deletes a key; connections offering it fail from now on. */
export async function deleteKey(tx: Tx, id: string): Promise<void> {
  const { sshKeys } = tables(tx);
  await tx.delete(sshKeys).where(eq(sshKeys.id, id));
}

/** A page of the org's keys by creation; only `userId`'s personal keys when given. */
export async function listKeys(q: Queryable, orgId: string, userId: string | null, page: CreatedPage): Promise<SshKeyRow[]> {
  const { sshKeys } = tables(q);
  const where: (SQL | undefined)[] = [eq(sshKeys.orgId, orgId)];
  if (userId !== null) where.push(eq(sshKeys.userId, userId));
  if (page.after) where.push(sql`(${sshKeys.createdAt}, ${sshKeys.id}) > (${page.after[0]}, ${page.after[1]})`);
  return await q
    .select()
    .from(sshKeys)
    .where(and(...where))
    .orderBy(asc(sshKeys.createdAt), asc(sshKeys.id))
    .limit(page.limit);
}
