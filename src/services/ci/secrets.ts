// CI secrets and variables (issue 29, DECISIONS §5 CI "Secrets", plan-29 §2.1): put, list, get,
// delete at org and repo level. Secrets are sealed at rest (seal.ts) and no answer, audit event,
// log line or error ever carries a value; variables are plain text, readable by writers.
// Authority: org:admin (404 to others) for org secrets and variables, repo admin for a repo's,
// reading variables: org:write / repo:write. A repo's value shadows an org one of the same NAME.
import type { Org, Repo } from "../../db/schema/index.ts";
import { NotFound, Unprocessable } from "../../errors.ts";
import { newId } from "../../util/ids.ts";
import { requireOrgFor, requireRepoFor } from "../access/access.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { auditActor, recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { repoIdsFor } from "./policy.ts";
import { seal, secretScope } from "./seal.ts";
import { sealingKey } from "./secrets-key.ts";
import * as store from "./store-secrets.ts";
import type { CiValueKind, NamedRow } from "./store-secrets.ts";

export type { CiValueKind };

/** NAME as DECISIONS §5 has it. */
export const CI_NAME_RE = /^[A-Z_][A-Z0-9_]{0,99}$/;
/** The largest value (bytes of UTF-8), secrets and variables alike. */
export const MAX_VALUE_BYTES = 48 * 1024;
/** Per repository, per kind. */
export const MAX_PER_REPO = 100;
/** Org-level rows per organization, per kind. */
export const MAX_PER_ORG = 1000;
/** Repositories an org secret or variable may name. */
export const MAX_REPOS = 100;

/** One secret or variable as answers show it: a secret never has `value`; `repos` only at org level (null = every repo). */
export interface CiValueItem {
  name: string;
  value?: string;
  repos?: string[] | null;
  updated_at: number;
}

/** What a PUT answers: whether the row is new (201) or replaced (200). */
export interface PutOutcome {
  created: boolean;
  item: CiValueItem;
}

const noun = (kind: CiValueKind) => (kind === "secret" ? "secret" : "variable");

/** The NAME of the path, or a 422 that quotes it only when short (it is the caller's own path, never a value). */
function checkName(kind: CiValueKind, name: string): string {
  if (CI_NAME_RE.test(name)) {
    if (name.startsWith("GITHUB_") || name.startsWith("SVC_")) throw Unprocessable(`${noun(kind)} names may not start with GITHUB_ or SVC_`);
    return name;
  }
  const shown = name.length <= 100 ? ` ${JSON.stringify(name)}` : "";
  const hint = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? " (names are upper case)" : "";
  throw Unprocessable(`invalid ${noun(kind)} name${shown}${hint}: letters A-Z, digits and _, not starting with a digit, at most 100`);
}

/**
 * The body's value. Why every message here is fixed text: the value may be a secret, and a 422
 * echoing it would put it in the caller's logs, proxies and our request log.
 */
function checkValue(kind: CiValueKind, body: unknown): string {
  const value = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as { value?: unknown }).value : undefined;
  if (typeof value !== "string") throw Unprocessable(`the body must be an object with the ${noun(kind)}'s value as a string: { "value": "…" }`);
  if (value === "") throw Unprocessable("the value is empty");
  if (Buffer.byteLength(value, "utf8") > MAX_VALUE_BYTES) throw Unprocessable("the value is larger than 48 KiB");
  return value;
}

/** The body's `repos`: undefined/null = every repo of the org; otherwise a non-empty list of names. */
function reposOf(body: unknown): unknown[] | null {
  const repos = (body as { repos?: unknown }).repos;
  if (repos === undefined || repos === null) return null;
  if (!Array.isArray(repos)) throw Unprocessable("repos must be a list of repository names, or null for every repository");
  if (!repos.length) throw Unprocessable("repos must name at least one repository (null or absent: every repository)");
  if (repos.length > MAX_REPOS) throw Unprocessable(`repos may name at most ${MAX_REPOS} repositories`);
  return repos;
}

function itemOf(kind: CiValueKind, row: NamedRow, repos: Map<string, string[]> | null): CiValueItem {
  return {
    name: row.name,
    ...(kind === "variable" ? { value: row.value ?? "" } : {}),
    ...(repos ? { repos: row.visibility === "selected" ? (repos.get(row.id) ?? []) : null } : {}),
    updated_at: row.updatedAt,
  };
}

async function itemsOf(ctx: Ctx, kind: CiValueKind, rows: NamedRow[], org: boolean): Promise<CiValueItem[]> {
  const repos = org
    ? await store.rowRepoNames(
        ctx.db.read,
        kind,
        rows.filter((r) => r.visibility === "selected").map((r) => r.id),
      )
    : null;
  return rows.map((r) => itemOf(kind, r, repos));
}

/** The stored form of a value: sealed for secrets (bound to its row's org, repo and NAME), plain for variables. */
function storedOf(ctx: Ctx, kind: CiValueKind, orgId: string, repoId: string | null, name: string, value: string): string {
  return kind === "secret" ? seal(sealingKey(ctx), secretScope(orgId, repoId, name), value) : value;
}

async function put(
  ctx: Ctx,
  actor: Principal,
  kind: CiValueKind,
  org: Org,
  repo: Repo | null,
  name: string,
  value: string,
  repoNames: unknown[] | null,
): Promise<PutOutcome> {
  const stored = storedOf(ctx, kind, org.id, repo?.id ?? null, name, value);
  const by = personOf(actor)?.id ?? null;
  const out = await ctx.db.transaction(async (tx) => {
    const repoIds = repoNames ? await repoIdsFor(tx, org.id, org.name, repoNames) : [];
    const visibility = repoNames ? "selected" : "all";
    const found = await store.rowByName(tx, kind, org.id, repo?.id ?? null, name);
    const t = now();
    let id: string;
    if (found) {
      id = found.id;
      await store.updateRow(tx, kind, id, { stored, visibility, t, by });
    } else {
      const limit = repo ? MAX_PER_REPO : MAX_PER_ORG;
      if ((await store.countOfScope(tx, kind, org.id, repo?.id ?? null)) >= limit)
        throw Unprocessable(`${repo ? repo.name : org.name} already has ${limit} ${noun(kind)}s, the most allowed`);
      id = newId();
      await store.insertRow(tx, kind, { id, orgId: org.id, repoId: repo?.id ?? null, name, stored, visibility, t, by });
    }
    if (!repo) await store.replaceRowRepos(tx, kind, id, repoIds);
    const row = (await store.rowByName(tx, kind, org.id, repo?.id ?? null, name))!;
    const names = repo ? null : await store.rowRepoNames(tx, kind, [id]);
    const item = itemOf(kind, row, names);
    // Why no value, length or digest in the event: the audit log is readable by every org reader.
    await recordAudit(tx, {
      orgId: org.id,
      action: `${noun(kind)}.${found ? "updated" : "created"}`,
      actor: auditActor(actor),
      target: repo ? `${repo.name}/${name}` : name,
      data: { scope: repo ? "repo" : "org", ...(repo ? { repo: repo.name } : {}), name, ...(repo ? {} : { repos: item.repos ?? null }) },
    });
    return { created: !found, item };
  });
  return out;
}

async function remove(ctx: Ctx, actor: Principal, kind: CiValueKind, org: Org, repo: Repo | null, name: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const found = await store.rowByName(tx, kind, org.id, repo?.id ?? null, name);
    if (!found) throw NotFound(`${noun(kind)} not found`);
    await store.deleteRow(tx, kind, found.id);
    await recordAudit(tx, {
      orgId: org.id,
      action: `${noun(kind)}.deleted`,
      actor: auditActor(actor),
      target: repo ? `${repo.name}/${name}` : name,
      data: { scope: repo ? "repo" : "org", ...(repo ? { repo: repo.name } : {}), name },
    });
  });
}

/** PUT /v1/orgs/{org}/secrets|variables/{NAME} `{ value, repos? }` (org:admin; 404 to others). */
export async function putOrgValue(ctx: Ctx, actor: Principal, kind: CiValueKind, orgName: string, name: string, body: unknown): Promise<PutOutcome> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  const checked = checkName(kind, name);
  const value = checkValue(kind, body);
  return put(ctx, actor, kind, org, null, checked, value, reposOf(body));
}

/** PUT /v1/orgs/{org}/repos/{repo}/secrets|variables/{NAME} `{ value }` (repo admin). */
export async function putRepoValue(
  ctx: Ctx,
  actor: Principal,
  kind: CiValueKind,
  orgName: string,
  repoName: string,
  name: string,
  body: unknown,
): Promise<PutOutcome> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  const checked = checkName(kind, name);
  const value = checkValue(kind, body);
  if ((body as { repos?: unknown }).repos !== undefined) throw Unprocessable("repos applies to organization secrets and variables only");
  return put(ctx, actor, kind, org, repo, checked, value, null);
}

/** GET /v1/orgs/{org}/secrets (org:admin) or …/variables (org:write): the org's own, by name. */
export async function listOrgValues(ctx: Ctx, actor: Principal, kind: CiValueKind, orgName: string): Promise<CiValueItem[]> {
  const { org } = await requireOrgFor(ctx, actor, orgName, kind === "secret" ? "org:admin-masked" : "org:write");
  return itemsOf(ctx, kind, await store.rowsOfScope(ctx.db.read, kind, org.id, null), true);
}

/** GET /v1/orgs/{org}/repos/{repo}/secrets (repo admin) or …/variables (repo:write): the repo's own only. */
export async function listRepoValues(ctx: Ctx, actor: Principal, kind: CiValueKind, orgName: string, repoName: string): Promise<CiValueItem[]> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, kind === "secret" ? "repo:admin" : "repo:write");
  return itemsOf(ctx, kind, await store.rowsOfScope(ctx.db.read, kind, org.id, repo.id), false);
}

/** GET /v1/orgs/{org}/variables/{NAME} (org:write). */
export async function getOrgVariable(ctx: Ctx, actor: Principal, orgName: string, name: string): Promise<CiValueItem> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:write");
  const row = await store.rowByName(ctx.db.read, "variable", org.id, null, name);
  if (!row) throw NotFound("variable not found");
  return (await itemsOf(ctx, "variable", [row], true))[0]!;
}

/** GET /v1/orgs/{org}/repos/{repo}/variables/{NAME} (repo:write). */
export async function getRepoVariable(ctx: Ctx, actor: Principal, orgName: string, repoName: string, name: string): Promise<CiValueItem> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:write");
  const row = await store.rowByName(ctx.db.read, "variable", org.id, repo.id, name);
  if (!row) throw NotFound("variable not found");
  return itemOf("variable", row, null);
}

/** DELETE /v1/orgs/{org}/secrets|variables/{NAME} (org:admin; 404 to others, 404 unknown). */
export async function deleteOrgValue(ctx: Ctx, actor: Principal, kind: CiValueKind, orgName: string, name: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  await remove(ctx, actor, kind, org, null, name);
}

/** DELETE /v1/orgs/{org}/repos/{repo}/secrets|variables/{NAME} (repo admin). */
export async function deleteRepoValue(ctx: Ctx, actor: Principal, kind: CiValueKind, orgName: string, repoName: string, name: string): Promise<void> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  await remove(ctx, actor, kind, org, repo, name);
}

/** The names of the org secrets that reach a repo (its settings page shows them; repo admin). No route. */
export async function orgSecretsReaching(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<{ name: string; updated_at: number }[]> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  const rows = await store.orgRowsReaching(ctx.db.read, "secret", org.id, repo.id);
  return rows.map((r) => ({ name: r.name, updated_at: r.updatedAt }));
}
