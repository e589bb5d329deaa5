// Repositories: create, read, list, patch, delete (SPEC §2.1; DECISIONS §3).
import { Conflict, Invalid, Unprocessable } from "../../errors.ts";
import { checkRefFormat } from "../../git/ref-name.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { buildFacts, decide, enforce, loadFacts, loadPersonInOrg, orgFacts, type Facts, type PersonInOrg } from "../access/access.ts";
import { writeBlockedReason } from "../billing/write-blocked.ts";
import { now, type Ctx } from "../context.ts";
import { sharedStorageOf } from "../git/share.ts";
import { findOrg, requireOrg } from "../access/lookup.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { checkRepoName } from "../names.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { need, openRepoTarget, type RepoTarget } from "../access/target.ts";
import { parseOrigin } from "../mirrors/origin.ts";
import { registerMirror } from "../mirrors/queue.ts";
import { REPO_PURGE } from "../git/purge.ts";
import type { Repo as RepoBody, RepoCreate, RepoList, RepoPatch } from "./schemas.ts";
import * as store from "./store.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

export type { RepoBody };

/** Folds blank homepages to null and refuses anything but an absolute http(s) URL (SPEC §2.1). */
export function normalizeHomepage(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
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

/** Blank descriptions are stored as null (the schema bounds the length). */
function normalizeDescription(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value.trim() ? value : null;
}

/** Validates a branch name as git would accept `refs/heads/<name>`. */
export function checkBranchName(value: string): string {
  if (!checkRefFormat(`refs/heads/${value}`) || value.startsWith("refs/")) {
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
export async function repoBody(ctx: Ctx, actor: Principal, org: Org, repo: Repo, person?: PersonInOrg): Promise<RepoBody> {
  return bodyOf(ctx, actor, org, repo, await repoFacts(ctx, actor, org, repo, person));
}

/** `owner/name` of the repository's parent when `actor` may read it, else null (SPEC §2.1). */
async function visibleParent(ctx: Ctx, actor: Principal, repo: Repo): Promise<string | null> {
  if (!repo.forkParentId) return null;
  const found = await ctx.facts.get("repo-with-org", repo.forkParentId, () => store.repoWithOrg(ctx.db.read, repo.forkParentId!));
  if (!found) return null;
  const person = await loadPersonInOrg(ctx, personOf(actor)?.id ?? null, found.org.id);
  // Why: a private parent's name is itself private; showing it would disclose the repository.
  return decide(buildFacts(actor, found.org, person, found.repo), "repo:read").allow ? `${found.org.name}/${found.repo.name}` : null;
}

/** The Repo resource for the caller described by `facts` (built by repoFacts). */
async function bodyOf(ctx: Ctx, actor: Principal, org: Org, repo: Repo, facts: Facts): Promise<RepoBody> {
  const { forkCount, watchers } = await ctx.facts.get("repo-counts", repo.id, () => store.repoCounts(ctx.db.read, repo.id));
  const path = `${org.name}/${repo.name}.git`;
  const body = {
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
    fork_parent: await visibleParent(ctx, actor, repo),
    viewer_admin: decide(facts, "repo:admin").allow,
    viewer_write: decide(facts, "repo:write").allow,
    write_blocked: facts.repo!.writeBlocked,
  };
  // SPEC §2.1: fork_state is absent for a repository that is not a fork.
  return repo.forkState === null ? body : { ...body, fork_state: repo.forkState };
}

/** POST /v1/orgs/{org}/repos. */
export async function createRepo(ctx: Ctx, actor: Principal, orgName: string, input: RepoCreate): Promise<RepoBody> {
  const isPrivate = input.public !== true;
  const { org, facts } = await orgFacts(ctx, actor, orgName, { quota: isPrivate });
  enforce(decide(facts, "org:create-repo"));
  // Billing: a private repository needs the plan's room for one (402 `quota:`).
  if (isPrivate) enforce(decide(facts, { kind: "quota", what: "private-repo" }));
  const name = checkRepoName(input.name);
  // Why 422 and not a schema enum (which answers 400): SPEC §7 gives an enumeration its own status.
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
    lfsNetworkId: null,
    syncError: null,
    forkParentId: null,
    forkState: null,
    activeAt: now(),
    createdAt: now(),
  };
  await ctx.db.transaction(async (tx) => {
    if (await store.repoNameTaken(tx, org.id, name)) throw Conflict(`repository ${org.name}/${name} already exists`);
    await store.insertRepo(tx, row);
    await recordAudit(tx, {
      orgId: org.id,
      action: "repo.created",
      actor: auditActor(actor),
      target: name,
      data: { repo_id: row.id, public: row.public, kind },
    });
    // A mirror's origin and its first sync commit with the repository.
    if (origin) await registerMirror(ctx, tx, row, origin);
  });
  return repoBody(ctx, actor, org, row);
}

/** GET /v1/orgs/{org}/repos/{repo}. */
export async function getRepo(ctx: Ctx, t: RepoTarget): Promise<RepoBody> {
  need(t, "repo:read");
  // Why: one set of facts answers the read check and the body's viewer_* fields.
  return bodyOf(ctx, t.actor, t.org, t.repo, t.facts);
}

/**
 * The one resolution of a repository request (plan §4 "resolve once"): `orgName/repoName` for
 * `actor`, repo:read decided (401 anonymous / 404 otherwise when missing or unseen, as every
 * repository action answers then). The services it is passed to decide what else they need on it.
 */
export function openRepo(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<RepoTarget> {
  return openRepoTarget(ctx, actor, orgName, repoName, "repo:read");
}

/**
 * Where a repository once named `oldName` in `orgName` is now (`{ org, name }` as stored), when
 * `actor` may read it; null when the name leads nowhere or to a repository the actor may not see,
 * so the caller answers exactly as for a missing repository (a private repository's old name
 * discloses nothing). Web pages only: the API and git answer for the current name alone.
 */
export async function movedRepo(ctx: Ctx, actor: Principal, orgName: string, oldName: string): Promise<{ org: string; name: string } | null> {
  const org = await findOrg(ctx, orgName);
  if (!org) return null;
  const repoId = await store.redirectOf(ctx.db.read, org.id, oldName);
  const found = repoId ? await store.repoWithOrg(ctx.db.read, repoId) : null;
  if (!found) return null;
  const person = await loadPersonInOrg(ctx, personOf(actor)?.id ?? null, found.org.id);
  if (!decide(buildFacts(actor, found.org, person, found.repo), "repo:read").allow) return null;
  return { org: found.org.name, name: found.repo.name };
}

/** GET /v1/orgs/{org}/repos: the repositories the caller may see, by name, paginated. */
export async function listRepos(ctx: Ctx, actor: Principal, orgName: string, q: { limit?: unknown; cursor?: unknown }): Promise<RepoList> {
  const org = await requireOrg(ctx, orgName);
  const { limit, after: cursor } = parsePage(q);
  const person = await loadPersonInOrg(ctx, personOf(actor)?.id ?? null, org.id);
  const out: RepoBody[] = [];
  let last: string | null = cursor;
  // Walk in name order, filtering by visibility, until the page is full.
  for (;;) {
    const batch = await store.reposAfter(ctx.db.read, org.id, last || null, 200);
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
    const batch = await store.reposAfter(ctx.db.read, org.id, from, 100);
    if (batch.some((r) => decide(buildFacts(actor, org, person, r), "repo:read").allow)) return true;
    if (batch.length < 100) return false;
    from = batch[batch.length - 1]!.name.toLowerCase();
  }
}

/** PATCH /v1/orgs/{org}/repos/{repo}: name, public, default_branch (moves HEAD), description, homepage. */
export async function patchRepo(ctx: Ctx, t: RepoTarget, input: RepoPatch): Promise<RepoBody> {
  need(t, "repo:admin");
  const { org, repo, actor } = t;
  // Billing: making a public repository private is adding a private one (402 `quota:`).
  if (input.public === false && repo.public)
    enforce(decide(await loadFacts(ctx, actor, org, undefined, { quota: true }), { kind: "quota", what: "private-repo" }));
  const set: Partial<Repo> = {};
  if (input.name !== undefined) set.name = checkRepoName(input.name);
  if (input.public !== undefined) set.public = input.public;
  // HEAD is a symref to default_branch, so changing it moves HEAD.
  if (input.default_branch !== undefined) set.defaultBranch = checkBranchName(input.default_branch);
  if ("description" in input) set.description = normalizeDescription(input.description);
  if ("homepage" in input) set.homepage = normalizeHomepage(input.homepage);
  const updated = await ctx.db.transaction(async (tx) => {
    if (set.name && set.name.toLowerCase() !== repo.name.toLowerCase() && (await store.repoNameTaken(tx, org.id, set.name))) {
      throw Conflict(`repository ${org.name}/${set.name} already exists`);
    }
    await store.updateRepo(tx, repo.id, set);
    if (set.public !== undefined && set.public !== repo.public) {
      await recordAudit(tx, {
        orgId: org.id,
        action: "repo.visibility_changed",
        actor: auditActor(actor),
        target: set.name ?? repo.name,
        data: { repo_id: repo.id, public: set.public },
      });
      await ctx.events.emit(tx, { kind: "repo.visibility_changed", orgId: org.id, repoId: repo.id });
    }
    // Rename redirects (issue 33): the new name is no other repository's old name any more, and
    // the old one leads here (pages only) until a repository takes it. A change of case keeps the name.
    if (set.name !== undefined && set.name.toLowerCase() !== repo.name.toLowerCase()) {
      await store.dropRedirect(tx, org.id, set.name);
      await store.recordRedirect(tx, { orgId: org.id, name: repo.name, repoId: repo.id, createdAt: now() });
    }
    if (set.name !== undefined && set.name !== repo.name) {
      await recordAudit(tx, { orgId: org.id, action: "repo.renamed", actor: auditActor(actor), target: set.name, data: { repo_id: repo.id, from: repo.name } });
    }
    return (await store.repoById(tx, repo.id))!;
  });
  return repoBody(ctx, actor, org, updated);
}

/** The repository with id `repoId`, or null once it is gone: for background work, which decides nothing for a caller. */
export async function repoForJob(ctx: Ctx, repoId: string): Promise<Repo | null> {
  return store.repoById(ctx.db.read, repoId);
}

/** DELETE /v1/orgs/{org}/repos/{repo}: refs and pack rows go now; storage is purged by a job. */
export async function deleteRepo(ctx: Ctx, t: RepoTarget): Promise<void> {
  need(t, "repo:admin");
  const { org, repo, actor } = t;
  await ctx.db.transaction(async (tx) => {
    // Why name them now: once the rows are gone nothing says which deleted repositories' files
    // (a fork's deleted parent) this one kept alive; the purge job rechecks them.
    const shared = await sharedStorageOf(tx, repo.id);
    await store.deleteRepo(tx, repo.id);
    await recordAudit(tx, { orgId: org.id, action: "repo.deleted", actor: auditActor(actor), target: repo.name, data: { repo_id: repo.id } });
    await ctx.work.enqueue(tx, REPO_PURGE, { repoId: repo.id, orgId: org.id, shared });
  });
}
