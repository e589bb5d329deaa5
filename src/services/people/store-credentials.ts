// The people domain's credential queries: API tokens and SSH keys. Async, so another database
// changes this file, not the services.
import { and, asc, eq, ne, sql, type SQL } from "drizzle-orm";
import { repos, sshKeys, tokens, type Token } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";

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
  return (
    q
      .select()
      .from(tokens)
      .where(and(eq(tokens.id, id), eq(tokens.orgId, orgId), ne(tokens.kind, "job")))
      .get() ?? null
  );
}

/** Records a token (only the digest of its secret). */
export async function insertToken(tx: Tx, row: Token): Promise<void> {
  tx.insert(tokens).values(row).run();
}

/** Deletes a token; requests presenting it fail from now on. */
export async function deleteToken(tx: Tx, id: string): Promise<void> {
  tx.delete(tokens).where(eq(tokens.id, id)).run();
}

/** Writes last_used_at stamps. */
export async function stampTokens(tx: Tx, stamps: [id: string, t: number][]): Promise<void> {
  for (const [id, t] of stamps) tx.update(tokens).set({ lastUsedAt: t }).where(eq(tokens.id, id)).run();
}

/**
 * A page of the org's personal and service tokens by creation, each with the name of the
 * repository it is bound to; only `userId`'s when given.
 */
export async function listTokens(q: Queryable, orgId: string, userId: string | null, page: CreatedPage): Promise<(Token & { repoName: string | null })[]> {
  const where: (SQL | undefined)[] = [eq(tokens.orgId, orgId), ne(tokens.kind, "job")];
  if (userId !== null) where.push(eq(tokens.userId, userId));
  if (page.after) where.push(sql`(${tokens.createdAt}, ${tokens.id}) > (${page.after[0]}, ${page.after[1]})`);
  const rows = q
    .select({ token: tokens, repoName: repos.name })
    .from(tokens)
    .leftJoin(repos, eq(repos.id, tokens.repoId))
    .where(and(...where))
    .orderBy(asc(tokens.createdAt), asc(tokens.id))
    .limit(page.limit)
    .all();
  return rows.map((r) => ({ ...r.token, repoName: r.repoName }));
}

// — SSH keys

/** The key with this fingerprint, in any org, or null. */
export async function keyByFingerprint(q: Queryable, fingerprint: string): Promise<SshKeyRow | null> {
  return q.select().from(sshKeys).where(eq(sshKeys.fingerprint, fingerprint)).get() ?? null;
}

/** The key `id` of the org, or null. */
export async function keyInOrg(q: Queryable, orgId: string, id: string): Promise<SshKeyRow | null> {
  return (
    q
      .select()
      .from(sshKeys)
      .where(and(eq(sshKeys.id, id), eq(sshKeys.orgId, orgId)))
      .get() ?? null
  );
}

/** Records a key. */
export async function insertKey(tx: Tx, row: SshKeyRow): Promise<void> {
  tx.insert(sshKeys).values(row).run();
}

/** Deletes a key; connections offering it fail from now on. */
export async function deleteKey(tx: Tx, id: string): Promise<void> {
  tx.delete(sshKeys).where(eq(sshKeys.id, id)).run();
}

/** A page of the org's keys by creation; only `userId`'s personal keys when given. */
export async function listKeys(q: Queryable, orgId: string, userId: string | null, page: CreatedPage): Promise<SshKeyRow[]> {
  const where: (SQL | undefined)[] = [eq(sshKeys.orgId, orgId)];
  if (userId !== null) where.push(eq(sshKeys.userId, userId));
  if (page.after) where.push(sql`(${sshKeys.createdAt}, ${sshKeys.id}) > (${page.after[0]}, ${page.after[1]})`);
  return q
    .select()
    .from(sshKeys)
    .where(and(...where))
    .orderBy(asc(sshKeys.createdAt), asc(sshKeys.id))
    .limit(page.limit)
    .all();
}
