// Repositories: create, read, list, patch, delete (SPEC §2.1; DECISIONS §3).
import { and, asc, eq, gt, sql } from "drizzle-orm";
import { AppError, Conflict, Invalid, Unprocessable } from "../../errors.ts";
import { checkRefFormat } from "../../git/ref-name.ts";
import { refs, repos, subscriptions, type Org, type Repo } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { buildFacts, decide, requireOrgFor, requireRepoFor, type Facts, type PersonInOrg } from "../access/access.ts";
import { loadPersonInOrg } from "../access/facts-store.ts";
import { writeBlockedReason } from "../billing/write-blocked.ts";
import { now, type Ctx } from "../context.ts";
import { enqueueJob } from "../jobs/queue.ts";
import { requireOrg } from "../access/lookup.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { checkRepoName } from "../orgs/names.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { parseOrigin } from "../mirrors/origin.ts";
import { registerMirror } from "../mirrors/queue.ts";

const MAX_DESCRIPTION = 2000;

/** Folds blank homepages to null and refuses anything but an absolute http(s) URL (SPEC §2.1). */
export function normalizeHomepage(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") throw Invalid("homepage must be a string or null");
  const v = value.trim();
  if (!v) return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw Invalid("homepage must be an absolute http:// or https:// URL");
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname || !/^https?:\/\//i.test(v)) {
    throw Invalid("homepage must be an absolute http:// or https:// URL");
  }
  if (v.length > 2000) throw Invalid("homepage is longer than 2000 characters");
  return v;
}

function normalizeDescription(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") throw Invalid("description must be a string or null");
  if (value.length > MAX_DESCRIPTION) throw Invalid(`description is longer than ${MAX_DESCRIPTION} characters`);
  return value.trim() ? value : null;
}

/** Validates a branch name as git would accept `refs/heads/<name>`. */
export function checkBranchName(value: unknown): string {
  if (typeof value !== "string" || !checkRefFormat(`refs/heads/${value}`) || value.startsWith("refs/")) {
    throw Invalid("default_branch must be a valid branch name");
  }
  return value;
}

/** The authority facts about `actor` on `repo`, as repoBody and decide need them. */
async function repoFacts(ctx: Ctx, actor: Principal, org: Org, repo: Repo, person?: PersonInOrg): Promise<Facts> {
  const p = person ?? (await loadPersonInOrg(ctx, personOf(actor)?.id ?? null, org.id));
  return buildFacts(actor, org, p, { ...repo, writeBlocked: await writeBlockedReason(ctx, org, repo) });
}

/** The Repo resource (SPEC §2.1) as seen by `actor`. */
export async function repoBody(ctx: Ctx, actor: Principal, org: Org, repo: Repo, person?: PersonInOrg) {
  return bodyOf(ctx, org, repo, await repoFacts(ctx, actor, org, repo, person));
}

/** The Repo resource for the caller described by `facts` (built by repoFacts). */
async function bodyOf(ctx: Ctx, org: Org, repo: Repo, facts: Facts) {
  const { forkCount, watchers } = await ctx.facts.get("repo-counts", repo.id, async () => ({
    forkCount: ctx.db.read.select({ n: sql<number>`count(*)` }).from(repos).where(and(eq(repos.forkParentId, repo.id), eq(repos.public, true))).get()!.n,
    watchers: ctx.db.read.select({ n: sql<number>`count(*)` }).from(subscriptions).where(and(eq(subscriptions.repoId, repo.id), eq(subscriptions.level, "all"))).get()!.n,
  }));
  const path = `${org.name}/${repo.name}.git`;
  return {
    id: repo.id,
    org_id: org.id,
    org: org.name,
    name: repo.name,
    kind: repo.kind,
    public: repo.public,
    default_branch: repo.defaultBranch,
    origin_url: repo.originUrl,
    origin_provider: repo.originProvider,
    origin_installation: repo.originInstallation,
    last_sync_at: repo.lastSyncAt,
    last_synced_commit: repo.lastSyncedCommit,
    sync_error: repo.syncError,
    created_at: repo.createdAt,
    clone_url: `${ctx.baseUrl}/${path}`,
    ssh_clone_url: ctx.sshPublic ? `ssh://git@${ctx.sshPublic}/${path}` : null,
    description: repo.description,
    homepage: repo.homepage,
    fork_count: forkCount,
    watcher_count: watchers,
    // SPEC §2.1: absent for a repository that is not a fork.
    ...(repo.forkState === null ? {} : { fork_state: repo.forkState }),
    fork_parent: null as string | null,
    viewer_admin: decide(facts, "repo:admin").allow,
    viewer_write: decide(facts, "repo:write").allow,
    write_blocked: facts.repo!.writeBlocked,
  };
}

export type RepoBody = Awaited<ReturnType<typeof bodyOf>>;

/** Create input (DECISIONS §3). */
export interface CreateRepoInput {
  name: unknown;
  public?: unknown;
  description?: unknown;
  homepage?: unknown;
  default_branch?: unknown;
  kind?: unknown;
  origin_url?: unknown;
  origin_provider?: unknown;
  origin_installation?: unknown;
}

/** POST /v1/orgs/{org}/repos. */
export async function createRepo(ctx: Ctx, actor: Principal, orgName: string, input: CreateRepoInput): Promise<RepoBody> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:create-repo");
  const name = checkRepoName(input.name);
  if (input.public !== undefined && typeof input.public !== "boolean") throw Invalid("public must be a boolean");
  const kind = input.kind ?? "native";
  if (kind !== "native" && kind !== "mirror") throw Unprocessable("kind must be native or mirror");
  const origin = kind === "mirror" ? await parseOrigin(ctx, input) : null;
  const row: Repo = {
    id: newId(),
    orgId: org.id,
    name,
    kind,
    public: input.public === true,
    defaultBranch: input.default_branch === undefined ? "main" : checkBranchName(input.default_branch),
    description: normalizeDescription(input.description),
    homepage: normalizeHomepage(input.homepage),
    originUrl: origin?.url ?? null,
    originProvider: origin?.provider ?? null,
    originInstallation: origin?.installation ?? null,
    lastSyncAt: null,
    lastSyncedCommit: null,
    syncError: null,
    forkParentId: null,
    forkState: null,
    createdAt: now(),
  };
  await ctx.db.transaction(async (tx) => {
    const clash = tx.select({ id: repos.id }).from(repos).where(and(eq(repos.orgId, org.id), sql`lower(${repos.name}) = lower(${name})`)).get();
    if (clash) throw Conflict(`repository ${org.name}/${name} already exists`);
    tx.insert(repos).values(row).run();
    // A mirror's origin and its first sync commit with the repository.
    if (origin) await registerMirror(tx, row, origin);
  });
  return repoBody(ctx, actor, org, row);
}

/** GET /v1/orgs/{org}/repos/{repo}. */
export async function getRepo(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<RepoBody> {
  // Why: one set of facts answers the read check and the body's viewer_* fields.
  const { org, repo, facts } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:read");
  return bodyOf(ctx, org, repo, facts);
}

/** GET /v1/orgs/{org}/repos: the repositories the caller may see, by name, paginated. */
export async function listRepos(ctx: Ctx, actor: Principal, orgName: string, q: { limit?: unknown; cursor?: unknown }) {
  const org = await requireOrg(ctx, orgName);
  const { limit, after: cursor } = parsePage(q);
  const person = await loadPersonInOrg(ctx, personOf(actor)?.id ?? null, org.id);
  const out: RepoBody[] = [];
  let last: string | null = cursor;
  // Walk in name order, filtering by visibility, until the page is full.
  for (;;) {
    const batch = ctx.db.read
      .select()
      .from(repos)
      .where(last ? and(eq(repos.orgId, org.id), gt(sql`lower(${repos.name})`, last)) : eq(repos.orgId, org.id))
      .orderBy(asc(sql`lower(${repos.name})`))
      .limit(200)
      .all();
    for (const r of batch) {
      last = r.name.toLowerCase();
      if (decide(buildFacts(actor, org, person, r), "repo:read").allow) {
        out.push(await repoBody(ctx, actor, org, r, person));
        if (out.length === limit) break;
      }
    }
    if (out.length === limit || batch.length < 200) break;
  }
  const more = out.length === limit && (await hasVisibleAfter(ctx, actor, org, person, last!));
  return { repos: out, next_cursor: more ? encodeCursor(last!) : null };
}

/** Whether any repository after `after` (by folded name) is visible; stops at the first one. */
async function hasVisibleAfter(ctx: Ctx, actor: Principal, org: Org, person: PersonInOrg, after: string): Promise<boolean> {
  for (let from = after; ; ) {
    const batch = ctx.db.read.select().from(repos).where(and(eq(repos.orgId, org.id), gt(sql`lower(${repos.name})`, from))).orderBy(asc(sql`lower(${repos.name})`)).limit(100).all();
    if (batch.some((r) => decide(buildFacts(actor, org, person, r), "repo:read").allow)) return true;
    if (batch.length < 100) return false;
    from = batch[batch.length - 1]!.name.toLowerCase();
  }
}

/** PATCH /v1/orgs/{org}/repos/{repo}: name, public, default_branch (moves HEAD), description, homepage. */
export async function patchRepo(ctx: Ctx, actor: Principal, orgName: string, repoName: string, input: Record<string, unknown>): Promise<RepoBody> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  const set: Partial<Repo> = {};
  if ("name" in input) set.name = checkRepoName(input.name);
  if ("public" in input) {
    if (typeof input.public !== "boolean") throw Invalid("public must be a boolean");
    set.public = input.public;
  }
  // HEAD is a symref to default_branch, so changing it moves HEAD.
  if ("default_branch" in input) set.defaultBranch = checkBranchName(input.default_branch);
  if ("description" in input) set.description = normalizeDescription(input.description);
  if ("homepage" in input) set.homepage = normalizeHomepage(input.homepage);
  const updated = await ctx.db.transaction(async (tx) => {
    if (set.name && set.name.toLowerCase() !== repo.name.toLowerCase()) {
      const clash = tx.select({ id: repos.id }).from(repos).where(and(eq(repos.orgId, org.id), sql`lower(${repos.name}) = lower(${set.name})`)).get();
      if (clash) throw Conflict(`repository ${org.name}/${set.name} already exists`);
    }
    if (Object.keys(set).length) tx.update(repos).set(set).where(eq(repos.id, repo.id)).run();
    return tx.select().from(repos).where(eq(repos.id, repo.id)).get()!;
  });
  return repoBody(ctx, actor, org, updated);
}

/** DELETE /v1/orgs/{org}/repos/{repo}: refs and pack rows go now; storage is purged by a job. */
export async function deleteRepo(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<void> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  await ctx.db.transaction(async (tx) => {
    tx.delete(refs).where(eq(refs.repoId, repo.id)).run();
    tx.delete(repos).where(eq(repos.id, repo.id)).run();
    await enqueueJob(tx, "repo.purge", { repoId: repo.id, orgId: org.id });
  });
}
