// The queries of CI secrets and variables (plan-29 §1.1). The two have one shape: a row per
// (org, repo or none, NAME) and, for org rows limited to some repositories, a list of repo ids.
// Why list queries never select `sealed`: a secret's value leaves the database only through
// `sealedSecrets`, which the job description alone calls (plan-29 Part A "Seal").
import { and, asc, count, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { Queryable, Tx } from "../../db/database.ts";
import { tables } from "../../db/tables.ts";

export type CiValueKind = "secret" | "variable";

/** A row as lists show it: never a secret's value (variables carry theirs). */
export interface NamedRow {
  id: string;
  orgId: string;
  repoId: string | null;
  name: string;
  visibility: "all" | "selected";
  createdAt: number;
  updatedAt: number;
  /** Variables only. */
  value?: string;
}

// The table pair of a kind (same column names but the value and the link column).
function parts(q: Queryable | Tx, kind: CiValueKind) {
  const t = tables(q);
  return kind === "secret"
    ? {
        main: t.ciSecrets as typeof t.ciVariables | typeof t.ciSecrets,
        link: t.ciSecretRepos,
        linkId: t.ciSecretRepos.secretId,
        linkRepo: t.ciSecretRepos.repoId,
      }
    : {
        main: t.ciVariables as typeof t.ciVariables | typeof t.ciSecrets,
        link: t.ciVariableRepos,
        linkId: t.ciVariableRepos.variableId,
        linkRepo: t.ciVariableRepos.repoId,
      };
}

function shownColumns(q: Queryable | Tx, kind: CiValueKind) {
  const t = tables(q);
  const m = kind === "secret" ? t.ciSecrets : t.ciVariables;
  const base = { id: m.id, orgId: m.orgId, repoId: m.repoId, name: m.name, visibility: m.visibility, createdAt: m.createdAt, updatedAt: m.updatedAt };
  return kind === "secret" ? base : { ...base, value: t.ciVariables.value };
}

function scopeIs(m: ReturnType<typeof parts>["main"], orgId: string, repoId: string | null) {
  return and(eq(m.orgId, orgId), repoId === null ? isNull(m.repoId) : eq(m.repoId, repoId));
}

/** The rows of one scope (an org's own, or a repo's), by name. */
export async function rowsOfScope(q: Queryable, kind: CiValueKind, orgId: string, repoId: string | null): Promise<NamedRow[]> {
  const { main } = parts(q, kind);
  return (await q
    .select(shownColumns(q, kind))
    .from(main)
    .where(scopeIs(main, orgId, repoId))
    .orderBy(asc(main.name))) as NamedRow[];
}

/** One row of a scope by NAME, or null. */
export async function rowByName(q: Queryable, kind: CiValueKind, orgId: string, repoId: string | null, name: string): Promise<NamedRow | null> {
  const { main } = parts(q, kind);
  const rows = (await q
    .select(shownColumns(q, kind))
    .from(main)
    .where(and(scopeIs(main, orgId, repoId), eq(main.name, name)))) as NamedRow[];
  return rows[0] ?? null;
}

/** How many rows a scope holds (limits). */
export async function countOfScope(q: Queryable, kind: CiValueKind, orgId: string, repoId: string | null): Promise<number> {
  const { main } = parts(q, kind);
  const [r] = await q
    .select({ n: count() })
    .from(main)
    .where(scopeIs(main, orgId, repoId));
  return Number(r?.n ?? 0);
}

/** Inserts a row; `stored` is the sealed text (secrets) or the value (variables). */
export async function insertRow(
  tx: Tx,
  kind: CiValueKind,
  row: { id: string; orgId: string; repoId: string | null; name: string; stored: string; visibility: "all" | "selected"; t: number; by: string | null },
): Promise<void> {
  const t = tables(tx);
  const base = {
    id: row.id,
    orgId: row.orgId,
    repoId: row.repoId,
    name: row.name,
    visibility: row.visibility,
    createdAt: row.t,
    updatedAt: row.t,
    updatedBy: row.by,
  };
  if (kind === "secret") await tx.insert(t.ciSecrets).values({ ...base, sealed: row.stored });
  else await tx.insert(t.ciVariables).values({ ...base, value: row.stored });
}

/** Replaces a row's value and visibility. */
export async function updateRow(
  tx: Tx,
  kind: CiValueKind,
  id: string,
  set: { stored: string; visibility: "all" | "selected"; t: number; by: string | null },
): Promise<void> {
  const t = tables(tx);
  const base = { visibility: set.visibility, updatedAt: set.t, updatedBy: set.by };
  if (kind === "secret")
    await tx
      .update(t.ciSecrets)
      .set({ ...base, sealed: set.stored })
      .where(eq(t.ciSecrets.id, id));
  else
    await tx
      .update(t.ciVariables)
      .set({ ...base, value: set.stored })
      .where(eq(t.ciVariables.id, id));
}

/** Deletes a row (its repo list goes with it). */
export async function deleteRow(tx: Tx, kind: CiValueKind, id: string): Promise<void> {
  const { main } = parts(tx, kind);
  await tx.delete(main).where(eq(main.id, id));
}

/** Replaces the repositories an org row reaches. */
export async function replaceRowRepos(tx: Tx, kind: CiValueKind, id: string, repoIds: string[]): Promise<void> {
  const t = tables(tx);
  if (kind === "secret") {
    await tx.delete(t.ciSecretRepos).where(eq(t.ciSecretRepos.secretId, id));
    for (const repoId of repoIds) await tx.insert(t.ciSecretRepos).values({ secretId: id, repoId });
  } else {
    await tx.delete(t.ciVariableRepos).where(eq(t.ciVariableRepos.variableId, id));
    for (const repoId of repoIds) await tx.insert(t.ciVariableRepos).values({ variableId: id, repoId });
  }
}

/** The repository names of each of `ids` (sorted by folded name). */
export async function rowRepoNames(q: Queryable, kind: CiValueKind, ids: string[]): Promise<Map<string, string[]>> {
  const { link, linkId, linkRepo } = parts(q, kind);
  const { repos } = tables(q);
  const out = new Map<string, string[]>();
  if (!ids.length) return out;
  const rows = await q
    .select({ id: linkId, name: repos.name })
    .from(link)
    .innerJoin(repos, eq(repos.id, linkRepo))
    .where(inArray(linkId, ids))
    .orderBy(sql`lower(${repos.name})`);
  for (const r of rows) {
    let list = out.get(r.id);
    if (!list) out.set(r.id, (list = []));
    list.push(r.name);
  }
  return out;
}

/** The org rows that reach `repoId`: visibility `all`, or `selected` listing it. */
export async function orgRowsReaching(q: Queryable, kind: CiValueKind, orgId: string, repoId: string): Promise<NamedRow[]> {
  const { main, link, linkId, linkRepo } = parts(q, kind);
  const listed = q.select({ id: linkId }).from(link).where(eq(linkRepo, repoId));
  return (await q
    .select(shownColumns(q, kind))
    .from(main)
    .where(and(eq(main.orgId, orgId), isNull(main.repoId), or(eq(main.visibility, "all"), inArray(main.id, listed))))
    .orderBy(asc(main.name))) as NamedRow[];
}

/** The sealed text of secret rows by id (the job description only). */
export async function sealedSecrets(
  q: Queryable,
  ids: string[],
): Promise<{ id: string; orgId: string; repoId: string | null; name: string; sealed: string }[]> {
  const { ciSecrets } = tables(q);
  if (!ids.length) return [];
  return await q
    .select({ id: ciSecrets.id, orgId: ciSecrets.orgId, repoId: ciSecrets.repoId, name: ciSecrets.name, sealed: ciSecrets.sealed })
    .from(ciSecrets)
    .where(inArray(ciSecrets.id, ids));
}
