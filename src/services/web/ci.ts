// What the CI pages show: runs, a run with its jobs, a job's log, and the pieces of a log the
// live view streams, all read through the same service calls (and access checks) as the API's
// run and log routes.
import { NotFound } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import type { Principal } from "../access/principal.ts";
import { may, type RepoTarget } from "../access/target.ts";
import { getRepo, openRepo, type RepoBody } from "../repos/repos.ts";
import type { WatchLevel } from "../discovery/watching.ts";
import { viewerFacts } from "./chrome.ts";
import { openIssuesOf } from "./issues.ts";
import { refsOf } from "../git/snapshot.ts";
import { dispatchableWorkflows, type DispatchableWorkflow } from "../ci/dispatch.ts";
import { getRun, jobLogSince, listRuns, requireJob, shownSteps } from "../ci/runs.ts";
import { listRunArtifacts, type ArtifactShown } from "../ci/artifacts.ts";
import type { Run } from "../ci/schemas.ts";
import { listOrgValues, listRepoValues, orgSecretsReaching, type CiValueItem } from "../ci/secrets.ts";
import { requireOrgFor } from "../access/access.ts";
import { listRepos } from "../repos/repos.ts";
import { orgAdminFrame, repoAdminFrame, type OrgAdminFrame, type RepoAdminFrame } from "./admin.ts";

/** Run and job states that do not change any more (`skipped`: a job whose `if` was false or whose need failed). */
export const FINISHED_STATES: readonly string[] = ["success", "failure", "cancelled", "skipped"];

/** The most of a log a page shows inline (its tail; the rest is in the raw log). */
export const PAGE_LOG_LIMIT = 1024 * 1024;

/** A job of a run, as the API answers it. */
export type RunJob = Run["jobs"][number];

/** The most branches the "Run workflow" form offers (the default branch always among them). */
export const BRANCH_CHOICES = 500;

/** What the runs list offers a writer: the workflows to run by hand and the branches to run them on. */
export interface DispatchChoices {
  workflows: DispatchableWorkflow[];
  branches: string[];
  /** Workflow files that could not be read this time (the form says so; the next view tries again). */
  unreadable: string[];
}

/** The dispatchable workflows of the default branch and the repository's branches; null for readers (they may not dispatch). */
async function dispatchChoices(ctx: Ctx, t: RepoTarget): Promise<DispatchChoices | null> {
  if (!may(t, "repo:write")) return null;
  const { workflows, unreadable } = await dispatchableWorkflows(ctx, t);
  if (!workflows.length) return { workflows, branches: [], unreadable };
  const branches = (await refsOf(ctx, t))
    .filter((r) => r.name.startsWith("refs/heads/"))
    .map((r) => r.name.slice(11))
    .slice(0, BRANCH_CHOICES);
  return { workflows, branches, unreadable };
}

/** A page of a repository's runs, newest first; on the first page, what a writer may run by hand. */
export async function runsView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  cursor: string | undefined,
): Promise<CiChrome & { runs: Run[]; next: string | null; dispatch: DispatchChoices | null }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const chrome = await chromeOf(ctx, t);
  const list = await listRuns(ctx, t, { cursor });
  // Why the first page only: each workflow file is parsed to find its inputs; older pages are for reading.
  const dispatch = cursor ? null : await dispatchChoices(ctx, t);
  return { ...chrome, runs: list.runs, next: list.next_cursor, dispatch };
}

/** `?attempt=N` as the API reads it: a positive integer, else the masked 404 of an unknown attempt; null when absent. */
export function attemptOf(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  if (!/^[1-9]\d{0,8}$/.test(raw)) throw NotFound("attempt not found");
  return Number(raw);
}

/** One run with the jobs and steps of its latest attempt, or of `attempt`. */
export async function runView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  runId: string,
  attempt: number | null = null,
): Promise<CiChrome & { run: Run; artifacts: ArtifactShown[] }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const [v, list] = await Promise.all([runViewOf(ctx, t, runId, attempt), listRunArtifacts(ctx, t, runId)]);
  return { ...v, artifacts: list.artifacts };
}

async function runViewOf(ctx: Ctx, t: RepoTarget, runId: string, attempt: number | null): Promise<CiChrome & { run: Run }> {
  const chrome = await chromeOf(ctx, t);
  return { ...chrome, run: await getRun(ctx, t, runId, attempt) };
}

/** What the repository layout draws above a CI page (a RepoChrome). */
export interface CiChrome {
  repo: RepoBody;
  openIssues: number | null;
  watching?: WatchLevel | null;
  /** Whether the viewer may ask this mirror to sync (the layout's Sync now). */
  canSync?: boolean;
}

async function chromeOf(ctx: Ctx, t: RepoTarget): Promise<CiChrome> {
  const [repo, openIssues, viewer] = await Promise.all([getRepo(ctx, t), openIssuesOf(ctx, t), viewerFacts(ctx, t)]);
  return { repo, openIssues, ...viewer };
}

/** A job's page: its run (at the job's attempt), the job, and the tail of its log so far (`next` is where live reading continues). */
export async function jobView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  runId: string,
  jobId: string,
): Promise<CiChrome & { run: Run; job: RunJob; log: { text: string; truncated: boolean; next: number } }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const row = await requireJob(ctx, t, runId, jobId);
  // Why the job's own attempt: an earlier attempt's job (a reused job's link) is not among the latest attempt's jobs.
  const { run, ...chrome } = await runViewOf(ctx, t, runId, row.attempt);
  const job = run.jobs.find((j) => j.id === jobId);
  if (!job) throw NotFound("job not found");
  const size = row.logSize;
  const from = Math.max(0, size - PAGE_LOG_LIMIT);
  const part = await jobLogSince(ctx, t, runId, jobId, from, PAGE_LOG_LIMIT);
  return { ...chrome, run, job, log: { text: new TextDecoder().decode(part.bytes), truncated: from > 0, next: part.next } };
}

/** What the live log sends next: the job's state and steps now, and log text after `from`. */
export interface LogStep {
  state: string;
  verdict: string | null;
  error: string | null;
  finished: boolean;
  steps: { name: string; state: string; exit_code: number | null }[];
  /** Bytes of the log as text (UTF-8 decoded; a split character shows as U+FFFD). */
  text: string;
  /** The offset after `text`. */
  next: number;
  /** Whether bytes past `next` were already there (read again at once). */
  more: boolean;
}

/** The log after byte `from` (at most `max` bytes) and the job's state, checked like the log route every time. */
export async function logSince(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  runId: string,
  jobId: string,
  from: number,
  max: number,
): Promise<LogStep> {
  // Why a fresh resolution each time: the live log asks again and again, and access may change meanwhile.
  const { job, bytes, next } = await jobLogSince(ctx, await openRepo(ctx, actor, orgName, repoName), runId, jobId, from, max);
  return {
    state: job.state,
    verdict: job.verdict,
    error: job.error,
    finished: FINISHED_STATES.includes(job.state),
    steps: shownSteps(job),
    text: new TextDecoder().decode(bytes),
    next,
    more: next < job.logSize,
  };
}

/** A repository's secrets (names only) and the org secrets that reach it (repo admins, as the API's list). */
export async function repoSecretsView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
): Promise<{ frame: RepoAdminFrame; secrets: CiValueItem[]; fromOrg: { name: string; updated_at: number }[] }> {
  const secrets = await listRepoValues(ctx, actor, "secret", orgName, repoName);
  const fromOrg = await orgSecretsReaching(ctx, actor, orgName, repoName);
  return { frame: await repoAdminFrame(ctx, actor, orgName, repoName), secrets, fromOrg };
}

/** A repository's variables with their values (writers read them; the forms are for repo admins). */
export async function repoVariablesView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
): Promise<{ frame: RepoAdminFrame; variables: CiValueItem[] }> {
  const variables = await listRepoValues(ctx, actor, "variable", orgName, repoName);
  return { frame: await repoAdminFrame(ctx, actor, orgName, repoName), variables };
}

/** The most repositories an org secret form offers to choose from (the service takes at most 100 per secret). */
export const PICKABLE_REPOS = 300;

/** The org's repository names for the "selected repositories" choice, in name order (the viewer is an org admin). */
async function repoNames(ctx: Ctx, actor: Principal, orgName: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listRepos(ctx, actor, orgName, { limit: 100, cursor });
    names.push(...page.repos.map((r) => r.name));
    cursor = page.next_cursor ?? undefined;
  } while (cursor && names.length < PICKABLE_REPOS);
  return names;
}

/**
 * An org's secrets or variables (names and reach; variables with values) and its repositories for
 * the form. Why org:admin for both, with the masked 404: they are org settings pages, hidden like
 * billing from everyone else (members read variables through the API).
 */
export async function orgValuesView(
  ctx: Ctx,
  actor: Principal,
  kind: "secret" | "variable",
  orgName: string,
): Promise<{ frame: OrgAdminFrame; items: CiValueItem[]; repos: string[] }> {
  await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  const items = await listOrgValues(ctx, actor, kind, orgName);
  return { frame: await orgAdminFrame(ctx, actor, orgName), items, repos: await repoNames(ctx, actor, orgName) };
}
