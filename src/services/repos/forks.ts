// Forks (SPEC §2.1 fork fields; DECISIONS §3): POST …/forks creates the repository row at once
// (fork_state `pending`) with a durable `repo.fork` job in the same transaction; the job makes
// the parent's branches, tags and packs the fork's (no object data is copied: the fork's pack
// list names the parent's immutable packs, see services/git/share.ts) and marks it `ready`, or
// `failed` when it cannot. A failed fork is deleted like any repository and forked again.
import { Conflict, Invalid, NotFound } from "../../errors.ts";
import type { Repo } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { decide, enforce, orgFacts } from "../access/access.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { missingPackFile, repoIsLive, sharePacks } from "../git/share.ts";
import { jobKind } from "../jobs/kind.ts";
import { checkRepoName } from "../names.ts";
import { repoBody, type RepoBody } from "./repos.ts";
import type { ForkCreate } from "./schemas.ts";
import * as store from "./store.ts";

/** The payload of a `repo.fork` job. */
export interface ForkPayload {
  forkId: string;
  parentId: string;
}

/** Making a fork servable (a fork is ready in well under a second, so it has its own workers). */
export const REPO_FORK = jobKind<ForkPayload>("repo.fork", { key: (p) => `repo:${p.forkId}`, concurrency: 2 });

/** POST /v1/orgs/{org}/repos/{repo}/forks → 202 with the fork (fork_state `pending`). */
export async function createFork(ctx: Ctx, t: RepoTarget, input: ForkCreate): Promise<RepoBody> {
  // Why first: a source the caller may not read answers exactly like a missing one (masked 404).
  need(t, "repo:read");
  const { org: parentOrg, repo: parent, actor } = t;
  need(t, "repo:fork");
  if (parent.forkState === "pending" || parent.forkState === "failed") {
    throw Conflict(
      `${parentOrg.name}/${parent.name} is a fork that is ${parent.forkState === "pending" ? "still being made" : "failed"}; fork it once it is ready`,
    );
  }
  const targetName = input.org ?? (await defaultNamespace(ctx, actor));
  // The fork keeps the parent's visibility: a private repository's fork is private (and so needs the plan's room for one).
  const isPrivate = !parent.public;
  const { org, facts } = await orgFacts(ctx, actor, targetName, { quota: isPrivate });
  enforce(decide(facts, "org:create-repo"));
  if (isPrivate) enforce(decide(facts, { kind: "quota", what: "private-repo" }));
  const name = checkRepoName(input.name ?? parent.name);
  const row: Repo = {
    id: newId(),
    orgId: org.id,
    name,
    kind: "native",
    public: parent.public,
    defaultBranch: parent.defaultBranch,
    description: parent.description,
    homepage: parent.homepage,
    originUrl: null,
    originProvider: null,
    originInstallation: null,
    lastSyncAt: null,
    lastSyncedCommit: null,
    // A fork shares its parent's LFS objects (issue 31): one network, rooted where the parent's is.
    lfsNetworkId: parent.lfsNetworkId ?? parent.id,
    syncError: null,
    forkParentId: parent.id,
    forkState: "pending",
    activeAt: now(),
    createdAt: now(),
  };
  await ctx.db.transaction(async (tx) => {
    if (await store.repoNameTaken(tx, org.id, name)) throw Conflict(`repository ${org.name}/${name} already exists`);
    if (!(await repoIsLive(tx, parent.id))) throw NotFound("repository not found");
    await store.insertRepo(tx, row);
    await ctx.work.enqueue(tx, REPO_FORK, { forkId: row.id, parentId: parent.id });
  });
  return repoBody(ctx, actor, org, row);
}

/** The caller's personal namespace: where a fork goes when the request names no org. */
async function defaultNamespace(ctx: Ctx, actor: Principal): Promise<string> {
  const person = personOf(actor);
  const name = person ? await store.personalNamespace(ctx.db.read, person.id) : null;
  if (!name) throw Invalid("org is required: this caller has no personal namespace to fork into");
  return name;
}

/**
 * The `repo.fork` job: shares the parent's packs and copies its branches and tags into the fork
 * in one transaction, then the fork is `ready`. Idempotent: a fork that is no longer pending (done,
 * failed, or deleted) is left alone. Any failure marks the fork `failed`, never pending for ever.
 */
export async function runFork(ctx: Ctx, payload: ForkPayload): Promise<void> {
  const fork = await store.repoById(ctx.db.read, payload.forkId);
  if (!fork || fork.forkState !== "pending") return;
  let reason: string | null;
  try {
    reason = await makeFork(ctx, payload.forkId, payload.parentId);
  } catch (error) {
    reason = error instanceof Error ? error.message : String(error);
  }
  if (reason === null) return;
  ctx.log.warn("fork failed", { repo_id: payload.forkId, parent_id: payload.parentId, reason });
  await ctx.db.transaction(async (tx) => {
    const current = await store.repoById(tx, payload.forkId);
    if (current?.forkState === "pending") await store.updateRepo(tx, payload.forkId, { forkState: "failed" });
  });
}

/** Does the work of a fork; answers null when the fork is ready, or why it failed. */
async function makeFork(ctx: Ctx, forkId: string, parentId: string): Promise<string | null> {
  if (!(await repoIsLive(ctx.db.read, parentId))) return "the parent repository was deleted before the fork was made";
  const missing = await missingPackFile(ctx, parentId);
  if (missing) return missing;
  return ctx.db.transaction(async (tx) => {
    const fork = await store.repoById(tx, forkId);
    if (!fork || fork.forkState !== "pending") return null;
    if (!(await repoIsLive(tx, parentId))) return "the parent repository was deleted before the fork was made";
    await sharePacks(tx, parentId, forkId);
    await store.copyBranchesAndTags(tx, parentId, forkId);
    await store.updateRepo(tx, forkId, { forkState: "ready" });
    return null;
  });
}
