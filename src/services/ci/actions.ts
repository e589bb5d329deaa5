// Actions from repositories on this server (issue 30, DECISIONS §5 "Actions"): the agent asks
// which commit of which repository a `uses: {org}/{repo}[/path]@{ref}` names, with the job's
// token. The token reads what it reads anywhere (its job's repository) plus public repositories;
// anything else, and what does not exist, is the same masked 404 whose message says how to have
// the action here (a public mirror of its repository). `ref` is a branch, a tag, a full commit
// sha, or HEAD (the default branch: what actions/checkout means without a ref). A short name both
// a tag and a branch carry is the tag (git's rule, gitrevisions(7): refs/tags/ before refs/heads/).
import { AppError, NotFound, Unprocessable } from "../../errors.ts";
import { parseCommit } from "../../git/object.ts";
import { openRepoTarget } from "../access/target.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { snapshotOf } from "../git/snapshot.ts";
import { ownJob } from "./job-calls.ts";
import { peelCommit } from "./trigger.ts";

/** Bounds on a resolve request. */
export const ACTION_RESOLVE_LIMITS = Object.freeze({ usesChars: 400 });

/** `org/repo[/path]@ref` (the workflow parser's rule, USES_REMOTE_RE in workflow.ts). */
const USES_RE = /^([A-Za-z0-9][A-Za-z0-9_.-]*)\/([A-Za-z0-9_.-]+)((?:\/[A-Za-z0-9_.-]+)*)@([A-Za-z0-9_.\-/+]+)$/;

/** What the agent fetches. */
export interface ResolvedAction {
  repo: string;
  commit: string;
  clone_url: string;
  path: string;
  /** The full ref the name matched (`refs/heads/x`, `refs/tags/x`); null for a commit sha. */
  ref: string | null;
  /** The commit's root tree: the agent checks its cached checkout against it before each use. */
  tree: string;
}

/** The masked refusal (a repository the token cannot read is answered like a missing one). */
function notHere(org: string, repo: string): AppError {
  return NotFound(
    `action ${org}/${repo} not found on this server: mirror it as a public repository, e.g. POST /v1/orgs/${org}/repos {"name":"${repo}","kind":"mirror","origin_url":"https://github.com/${org}/${repo}.git","public":true}`,
  );
}

/** POST /v1/runner/jobs/{job_id}/actions `{ uses }`: the repository, commit and path `uses` names, for the running job's token. */
export async function resolveAction(ctx: Ctx, actor: Principal, jobId: string, input: { uses: unknown }): Promise<ResolvedAction> {
  await ownJob(ctx, actor, jobId);
  const uses = input.uses;
  if (typeof uses !== "string" || uses.length > ACTION_RESOLVE_LIMITS.usesChars)
    throw Unprocessable(`uses must be org/repo[/path]@ref (at most ${ACTION_RESOLVE_LIMITS.usesChars} characters)`);
  const m = USES_RE.exec(uses);
  if (!m || uses.split(/[/@]/).some((p) => p === "." || p === ".."))
    throw Unprocessable(`uses ${JSON.stringify(uses.slice(0, 100))} is not org/repo[/path]@ref`);
  const [, orgName, repoName, rawPath, ref] = m as unknown as [string, string, string, string, string];
  let t: Awaited<ReturnType<typeof openRepoTarget>>;
  try {
    // Why the job's own principal: the token's read rights (its repository) plus public repositories, decided by access.decide.
    t = await openRepoTarget(ctx, actor, orgName, repoName, "repo:read");
  } catch (e) {
    if (e instanceof AppError && (e.code === "not_found" || e.code === "unauthenticated")) throw notHere(orgName, repoName);
    throw e;
  }
  const snapshot = await snapshotOf(ctx, t);
  let commit: string | null = null;
  let full: string | null = null;
  if (/^[0-9a-f]{40}$/.test(ref) || /^[0-9a-f]{64}$/.test(ref)) commit = await peelCommit(snapshot, ref);
  else {
    const names = ref === "HEAD" ? [`refs/heads/${t.repo.defaultBranch}`] : ref.startsWith("refs/") ? [ref] : [`refs/tags/${ref}`, `refs/heads/${ref}`];
    for (const name of names) {
      const hit = snapshot.refs.find((r) => r.name === name);
      if (hit) commit = await peelCommit(snapshot, hit.oid);
      if (commit) {
        full = name;
        break;
      }
    }
  }
  if (!commit) throw NotFound(`action ${t.org.name}/${t.repo.name}: no branch, tag or commit ${JSON.stringify(ref)}`);
  const obj = await snapshot.objects.read(commit);
  if (!obj) throw NotFound(`action ${t.org.name}/${t.repo.name}: no branch, tag or commit ${JSON.stringify(ref)}`);
  return {
    repo: `${t.org.name}/${t.repo.name}`,
    commit,
    clone_url: `${ctx.baseUrl}/${t.org.name}/${t.repo.name}.git`,
    path: rawPath.replace(/^\//, ""),
    ref: full,
    tree: parseCommit(obj.data).tree,
  };
}
