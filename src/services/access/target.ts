// Resolve once (issue 26 plan §4): a repository request names its org and repository, and they are
// resolved exactly once into a RepoTarget (the org, the repository, the caller's facts). Every
// later check is `need(t, action)`, a `decide` on those same facts with no I/O, memoised per
// action; what several services of one request read from the repository (its snapshot, its refs)
// is memoised on the target with `once`.
//
// A target lives for one request or one job attempt; it is never cached across them (the facts in
// it are as fresh as the fact cache was when it was opened).
import type { Org, Repo, Role } from "../../db/schema/index.ts";
import { AppError } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { callerFacts, decide, loadFacts, type Action, type Decision, type Facts } from "./access.ts";
import { findOrg, findRepo } from "./lookup.ts";
import { principalKey, type Principal } from "./principal.ts";

/** The repository actions a target is opened for (each refuses an unseen repository alike: 401 anonymous, else 404). */
export type RepoAction = "repo:read" | "repo:write" | "repo:admin" | "repo:sync";

/** An org and repository resolved once for one caller, with the facts every decision about them uses. */
export interface RepoTarget {
  readonly org: Org;
  readonly repo: Repo;
  readonly actor: Principal;
  readonly facts: Facts;
  /** The names as the request spelled them (messages echo them; `org.name`/`repo.name` are the stored spelling). */
  readonly named: { readonly org: string; readonly repo: string };
  /** Per-request memo (the snapshot, the refs): the first call loads, later calls share the promise. */
  once<T>(key: string, load: () => Promise<T>): Promise<T>;
}

class Target implements RepoTarget {
  private readonly memo = new Map<string, Promise<unknown>>();
  readonly decisions = new Map<string, Decision>();
  constructor(
    readonly org: Org,
    readonly repo: Repo,
    readonly actor: Principal,
    readonly facts: Facts,
    readonly named: { readonly org: string; readonly repo: string },
  ) {}

  once<T>(key: string, load: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load();
      this.memo.set(key, p);
      // A failed load is not remembered: a later caller in the same request asks again.
      p.catch(() => this.memo.get(key) === p && this.memo.delete(key));
    }
    return p;
  }
}

/** The org, repo and facts of `orgName/repoName` for `p`; facts with `repo: null` when either is missing. */
async function loadTarget(ctx: Ctx, p: Principal, orgName: string, repoName: string): Promise<{ org: Org | null; repo: Repo | null; facts: Facts }> {
  const org = await findOrg(ctx, orgName);
  const repo = org ? await findRepo(ctx, org.id, repoName) : null;
  if (!org || !repo) return { org, repo: null, facts: { caller: callerFacts(p), org: org ?? { id: "", name: orgName }, orgRole: null, repo: null } };
  return { org, repo, facts: await loadFacts(ctx, p, org, repo) };
}

/**
 * The one resolution: the org and repository by name (case-insensitive), the caller's facts, and
 * `action` decided. A missing org or repository is refused exactly like one the caller may not see
 * (401 anonymous, 404 otherwise), whatever the action.
 */
export async function openRepoTarget(ctx: Ctx, actor: Principal, orgName: string, repoName: string, action: RepoAction): Promise<RepoTarget> {
  // Why cached as one bundle: this is every repository request's first step, and the bundle is
  // dropped with the rest of the fact cache on any write.
  const found = await ctx.facts.getPair("repo-target", principalKey(actor), `${orgName.toLowerCase()}/${repoName.toLowerCase()}`, () =>
    loadTarget(ctx, actor, orgName, repoName),
  );
  const decision = decide(found.facts, action);
  if (!decision.allow) throw new AppError(decision.status, decision.message);
  if (!found.org || !found.repo) throw new Error("unreachable: a missing repository is always refused");
  const t = new Target(found.org, found.repo, actor, found.facts, { org: orgName, repo: repoName });
  t.decisions.set(action, decision);
  return t;
}

/**
 * A target for work done without a request (a job attempt): the repository as loaded, with facts
 * the caller built (access.deferredFacts). Nothing is decided yet.
 */
export function repoTargetOf(org: Org, repo: Repo, actor: Principal, facts: Facts): RepoTarget {
  return new Target(org, repo, actor, facts, { org: org.name, repo: repo.name });
}

function decisionOf(t: RepoTarget, action: Action): Decision {
  // Why only string actions are memoised: object actions carry their subject (a role, an author).
  if (t instanceof Target && typeof action === "string") {
    let d = t.decisions.get(action);
    if (!d) t.decisions.set(action, (d = decide(t.facts, action)));
    return d;
  }
  return decide(t.facts, action);
}

/** Every later check on a target: `action` decided on its facts (no I/O); throws the refusal as an AppError, else the effective role. */
export function need(t: RepoTarget, action: Action): Role | null {
  const d = decisionOf(t, action);
  if (!d.allow) throw new AppError(d.status, d.message);
  return d.role;
}

/** Whether `action` would be allowed on the target, without throwing (viewer_* fields). */
export function may(t: RepoTarget, action: Action): boolean {
  return decisionOf(t, action).allow;
}

/**
 * The same target (same memo, same decisions) naming the repository as `named` in its messages:
 * the pages spell it as stored once it is found, the API as the request did.
 */
export function spelledAs(t: RepoTarget, named: { org: string; repo: string }): RepoTarget {
  return Object.create(t, { named: { value: named, enumerable: true } }) as RepoTarget;
}
