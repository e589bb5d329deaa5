// Changes (DECISIONS §3): reviewable proposals from a branch of this repository or of a fork,
// stacked with depends_on, followed by their branch on every push, landed by the queue.
import { checkRefFormat } from "../../git/ref-name.ts";
import { AppError, Conflict, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { decide, deferredFacts, requireRepoFor } from "../access/access.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { personOf, principalKey } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { enqueueWorkflowTrigger, runsCreatedFor } from "../ci/trigger.ts";
import { countRequest } from "../people/throttle.ts";
import { checksOfCommits } from "../ci/checks.ts";
import type { Check } from "../ci/schemas.ts";
import { readRef } from "../git/snapshot.ts";
import type { RepoEvent } from "../events/types.ts";
import { parsePage, pageOf } from "../paging.ts";
import {
  CHANGE_STATES,
  SETTABLE_CHANGE_STATES as SETTABLE_STATES,
  type Change,
  type ChangeCreate,
  type ChangeList,
  type ChangeListQuery,
  type ChangePatch,
  type Verdict,
} from "./schemas.ts";
import * as store from "./store.ts";
import { recordPatchset } from "./store-patchsets.ts";
import { queueLanding } from "./land-job.ts";
import { queueReanchor } from "./reanchor.ts";
import { mentionsIn } from "./comments.ts";
import type { ChangeRow } from "./store.ts";
import { reviewersOfChanges } from "./reviewers.ts";
import { approvalFields, landingApprovals, type LandingApprovals } from "./approvals.ts";
import { dismissStaleApprovals } from "./store-reviews.ts";
import { protectionOfBranch } from "../git/policy.ts";

/** How deep a stack may be (depends_on chains are walked in requests and by the lander). */
export const MAX_STACK = 50;
const MAX_TITLE = 200;
const MAX_DESCRIPTION = 65_536;

/** The API shapes of rows (author handles and fork names looked up in one query each). */
export async function changeBodies(ctx: Ctx, rows: ChangeRow[]): Promise<Change[]> {
  const handles = await store.handlesOf(
    ctx.db.read,
    rows.map((r) => r.authorUserId).filter((x): x is string => x !== null),
  );
  const sources = await store.repoNames(
    ctx.db.read,
    rows.map((r) => r.sourceRepoId).filter((x): x is string => x !== null),
  );
  const reviewers = await reviewersOfChanges(ctx.db.read, rows);
  // Checks of the heads, read in the target repository (a fork change's runs are the target's too).
  const checks = new Map<string, Check[]>();
  for (const [repoId, heads] of Map.groupBy(
    rows.filter((r) => r.head),
    (r) => r.repoId,
  ))
    for (const [sha, list] of await checksOfCommits(
      ctx,
      repoId,
      heads.map((r) => r.head!),
    ))
      checks.set(`${repoId}:${sha}`, list);
  return rows.map((r) => ({
    number: r.number,
    title: r.title,
    description: r.description,
    state: r.state,
    branch: r.branch,
    source: r.sourceRepoId ? (sources.get(r.sourceRepoId) ?? null) : null,
    target: r.target,
    head: r.head,
    base: r.base,
    patchset: r.patchset,
    depends_on: r.dependsOn,
    landed_commit: r.landedCommit,
    included_in: r.includedIn,
    author: r.authorUserId && handles.has(r.authorUserId) ? { user_id: r.authorUserId, handle: handles.get(r.authorUserId)! } : null,
    verdict: (r.verdict as Verdict | null) ?? null,
    waiting: r.waiting,
    checks: (r.head && checks.get(`${r.repoId}:${r.head}`)) || [],
    reviewers: reviewers.get(r.id) ?? [],
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  }));
}

async function one(ctx: Ctx, row: ChangeRow): Promise<Change> {
  return (await changeBodies(ctx, [row]))[0]!;
}

function checkBranchName(name: string, field: string): string {
  if (typeof name !== "string" || !name || name.length > 255 || name.startsWith("refs/") || !checkRefFormat(`refs/heads/${name}`))
    throw Invalid(`${field} must be a valid branch name`);
  return name;
}

function checkTitle(title: string): string {
  const t = title.trim();
  if (!t || t.length > MAX_TITLE || /[\0\n\r]/.test(t)) throw Invalid(`title must be 1-${MAX_TITLE} characters on one line`);
  return t;
}

function checkDescription(d: string | null | undefined): string | null {
  if (d === undefined || d === null || d.trim() === "") return null;
  if (d.length > MAX_DESCRIPTION || d.includes("\0")) throw Invalid(`description must be at most ${MAX_DESCRIPTION} characters without NUL`);
  return d;
}

/** The change a repository's number names, or 404. */
async function mustChange(q: Parameters<typeof store.changeByNumber>[0], repoId: string, number: number): Promise<ChangeRow> {
  if (!Number.isInteger(number) || number < 1) throw NotFound("change not found");
  const row = await store.changeByNumber(q, repoId, number);
  if (!row) throw NotFound("change not found");
  return row;
}

/**
 * Checks that `change` may depend on `dependsOn`: it exists here, is not closed or landed, and
 * the chain below it does not come back to `change` (a cycle). 422 otherwise.
 */
async function checkDependency(tx: Tx, repoId: string, change: number | null, dependsOn: number): Promise<void> {
  const seen: number[] = change === null ? [] : [change];
  let n: number | null = dependsOn;
  for (let depth = 0; n !== null; depth++) {
    if (seen.includes(n)) throw Unprocessable(`depends_on would form a cycle: ${[...seen, n].map((x) => `#${x}`).join(" → ")}`);
    if (depth >= MAX_STACK) throw Unprocessable(`a stack may be at most ${MAX_STACK} changes deep`);
    const row = await store.changeByNumber(tx, repoId, n);
    if (!row) throw Unprocessable(`depends_on names change #${n}, which does not exist`);
    if (depth === 0 && (row.state === "closed" || row.state === "landed")) throw Unprocessable(`depends_on names change #${n}, which is ${row.state}`);
    seen.push(n);
    n = row.state === "landed" ? null : row.dependsOn;
  }
}

/** POST …/changes: opens a change from a branch here (repo:write) or of a fork (read on both). */
export async function createChange(ctx: Ctx, t: RepoTarget, body: ChangeCreate): Promise<Change> {
  const fromFork = body.source !== undefined && body.source !== null;
  need(t, fromFork ? "repo:read" : "repo:write");
  const { repo, actor } = t;
  const { org: orgName, repo: repoName } = t.named;
  const person = personOf(actor);
  if (fromFork && !person) throw Unprocessable("a change from a fork is opened by a person");
  let source: Repo | null = null;
  if (fromFork) {
    // Why: read access on the source is checked like any read, so a private fork the caller
    // cannot see answers the same 404 as one that does not exist.
    const s = await requireRepoFor(ctx, actor, body.source!.org, body.source!.repo, "repo:read");
    if (s.repo.id !== repo.id) {
      source = s.repo;
      if (!(await isForkOf(ctx, source, repo))) throw Unprocessable(`${body.source!.org}/${body.source!.repo} is not a fork of ${orgName}/${repoName}`);
    } else {
      need(t, "repo:write");
    }
  }
  if (repo.kind === "mirror") throw Unprocessable(`${orgName}/${repoName} is a mirror: it follows its origin and takes no changes`);
  const title = checkTitle(body.title);
  const description = checkDescription(body.description);
  const branch = checkBranchName(body.branch, "branch");
  const target = checkBranchName(body.target ?? repo.defaultBranch, "target");
  if (!source && branch === target) throw Unprocessable("branch and target are the same branch");
  const mentioned = description ? await mentionsIn(ctx, description) : [];

  const row = await ctx.db.transaction(async (tx) => {
    const head = await readRef(tx, (source ?? repo).id, `refs/heads/${branch}`);
    if (!head) throw Unprocessable(`branch ${branch} does not exist in ${fromFork ? `${body.source!.org}/${body.source!.repo}` : `${orgName}/${repoName}`}`);
    const base = await readRef(tx, repo.id, `refs/heads/${target}`);
    if (!base) throw Unprocessable(`target branch ${target} does not exist in ${orgName}/${repoName}`);
    const dependsOn = body.depends_on ?? null;
    if (dependsOn !== null) await checkDependency(tx, repo.id, null, dependsOn);
    const t = now();
    const r: ChangeRow = {
      id: newId(),
      repoId: repo.id,
      number: await store.nextNumber(tx, repo.id),
      title,
      description,
      state: "open",
      branch,
      sourceRepoId: source?.id ?? null,
      target,
      head,
      base,
      patchset: 1,
      dependsOn,
      landedCommit: null,
      includedIn: null,
      verdict: null,
      authorUserId: person?.id ?? null,
      queuedAt: null,
      queuedHead: null,
      queuedByUserId: null,
      waiting: null,
      createdAt: t,
      updatedAt: t,
    };
    await store.insertChange(tx, r);
    await recordPatchset(tx, { changeId: r.id, patchset: 1, head, base, createdAt: t });
    await recordOpened(ctx, tx, repo, r, person, source ? { org: body.source!.org, repo: body.source!.repo } : null, mentioned);
    await enqueueChangeTrigger(ctx, tx, r, repo.orgId, person?.id ?? null);
    return r;
  });
  return one(ctx, row);
}

/**
 * Queues the `on: change` workflows of change `c` at its head (inside the caller's transaction).
 * A change from a fork runs too, untrusted (its jobs get no secrets): the trigger reads the
 * workflows from the fork's objects and the run belongs to the target (its checks show on the
 * change). Path filters diff against the target's tip (`base`).
 */
async function enqueueChangeTrigger(ctx: Ctx, tx: Tx, c: ChangeRow, targetOrgId: string, actorUserId: string | null, approved = false): Promise<void> {
  if (!c.head) return;
  if (c.sourceRepoId && !approved && !(await forkRunsStartByThemselves(ctx, tx, c, actorUserId))) return;
  await enqueueWorkflowTrigger(ctx, tx, {
    repoId: c.repoId,
    orgId: targetOrgId,
    ref: `refs/heads/${c.branch}`,
    commit: c.head,
    event: "change",
    actorUserId,
    before: c.base,
    change: { number: c.number, title: c.title, target: c.target },
    ...(c.sourceRepoId ? { fork: true, sourceRepoId: c.sourceRepoId } : {}),
  });
}

/**
 * Whether the runs of a change from a fork start without a writer's approval: only when the
 * person who opened it or pushed its patchset may write the target. Why: its workflow is the
 * fork author's code and it runs on this organization's runners (self-hosted machines, hosted
 * minutes); as GitHub asks approval for outside contributors, a writer starts an outsider's runs
 * (startChangeRuns), once per patchset.
 */
async function forkRunsStartByThemselves(ctx: Ctx, tx: Tx, c: ChangeRow, actorUserId: string | null): Promise<boolean> {
  if (!actorUserId) return false;
  const place = await store.repoWithOrg(tx, c.repoId);
  if (!place) return false;
  return decide(await deferredFacts(ctx, actorUserId, place.org, place.repo), "repo:write").allow;
}

/**
 * POST …/changes/{number}/runs: starts the `on: change` runs of the change's head that have not
 * started (a writer approving an outside contributor's fork change). Idempotent per head: a call
 * while the head's trigger is pending folds into it (CI_TRIGGER's unique key), and a head that
 * has runs already enqueues nothing (while a trigger runs, before its first run, calls fold into
 * one more pending trigger at most: the engine releases the unique key when a job starts). Each call counts against the caller's hourly allowance
 * (`SVC_CHANGE_RUNS_LIMIT_PER_PERSON`, then a doubling wait: 429 with Retry-After). 202 with the change.
 */
export async function startChangeRuns(ctx: Ctx, t: RepoTarget, number: number): Promise<Change> {
  need(t, "repo:write");
  // Per person (a service token by itself): a writer's script cannot make every call a write transaction.
  countRequest(ctx, "changeRuns", personOf(t.actor)?.id ?? principalKey(t.actor), "requests to start a change's runs");
  const row = await ctx.db.transaction(async (tx) => {
    const cur = await mustChange(tx, t.repo.id, number);
    if (cur.state === "landed" || cur.state === "closed") throw Conflict(`change #${number} is ${cur.state}; runs start only for an open change`);
    if (cur.head && !(await runsCreatedFor(tx, cur.repoId, cur.head, `refs/heads/${cur.branch}`, "change")))
      await enqueueChangeTrigger(ctx, tx, cur, t.org.id, personOf(t.actor)?.id ?? null, true);
    return cur;
  });
  return one(ctx, row);
}

/** A new change's `change.opened` event (SPEC §6.1 webhooks) and its thread's first activity (the author takes part). */
async function recordOpened(
  ctx: Ctx,
  tx: Tx,
  repo: Repo,
  r: ChangeRow,
  author: { id: string; handle: string } | null,
  source: { org: string; repo: string } | null,
  mentioned: { id: string }[],
): Promise<void> {
  await ctx.events.record(tx, {
    repoId: repo.id,
    orgId: repo.orgId,
    kind: "change.opened",
    payload: {
      change: r.number,
      title: r.title,
      branch: r.branch,
      target: r.target,
      author: author ? { user_id: author.id, handle: author.handle } : null,
      source,
    },
    actorUserId: author?.id ?? null,
  });
  await ctx.events.emit(tx, {
    kind: "thread.activity",
    repoId: repo.id,
    orgId: repo.orgId,
    subject: { kind: "change", id: r.id, number: r.number, title: r.title },
    activity: "opened",
    actorUserId: author?.id ?? null,
    participants: [
      ...(author ? [{ userId: author.id, reason: "author" as const }] : []),
      ...mentioned.filter((m) => m.id !== author?.id).map((m) => ({ userId: m.id, reason: "mention" as const })),
    ],
    summary: { excerpt: (r.description ?? "").slice(0, 500) },
  });
}

/** Whether `source` descends from `target` through fork parents (a bounded walk). */
async function isForkOf(ctx: Ctx, source: Repo, target: Repo): Promise<boolean> {
  let parent = source.forkParentId;
  for (let i = 0; parent && i < 20; i++) {
    if (parent === target.id) return true;
    parent = (await store.repoWithOrg(ctx.db.read, parent))?.repo.forkParentId ?? null;
  }
  return false;
}

/** GET …/changes?state= (repo:read), newest first. */
export async function listChanges(ctx: Ctx, t: RepoTarget, query: ChangeListQuery): Promise<ChangeList> {
  need(t, "repo:read");
  const { repo } = t;
  // A value outside the enumeration is 422 (SPEC §7), not an empty list that looks like an answer.
  if (query.state !== undefined && !CHANGE_STATES.includes(query.state as never)) throw Unprocessable(`state must be one of ${CHANGE_STATES.join(", ")}`);
  const page = parsePage<number>(query, (k): k is number => typeof k === "number" && Number.isInteger(k));
  const rows = await store.listChanges(ctx.db.read, repo.id, query.state ?? null, page.after, page.limit + 1);
  const { items, next_cursor } = pageOf(rows, page, (r) => r.number);
  return { changes: await changeBodies(ctx, items), next_cursor };
}

/** GET …/changes/{number} (repo:read). */
export async function getChange(ctx: Ctx, t: RepoTarget, number: number): Promise<Change> {
  need(t, "repo:read");
  const { repo } = t;
  return one(ctx, await mustChange(ctx.db.read, repo.id, number));
}

/** PATCH …/changes/{number}: title, description, target, depends_on, close/reopen (writers or the author). */
export async function patchChange(ctx: Ctx, t: RepoTarget, number: number, body: ChangePatch): Promise<Change> {
  need(t, "repo:read");
  const { repo, actor } = t;
  const { org: orgName, repo: repoName } = t.named;
  const existing = await mustChange(ctx.db.read, repo.id, number);
  const author = existing.authorUserId !== null && existing.authorUserId === personOf(actor)?.id;
  need(t, { kind: "change:edit", author });
  const title = body.title !== undefined ? checkTitle(body.title) : undefined;
  const description = body.description !== undefined ? checkDescription(body.description) : undefined;
  const target = body.target !== undefined ? checkBranchName(body.target, "target") : undefined;
  if (body.state !== undefined && !SETTABLE_STATES.includes(body.state as never))
    throw Unprocessable(`state must be ${SETTABLE_STATES.join(" or ")} (a change is queued, landed or ejected by landing it)`);
  const row = await ctx.db.transaction(async (tx) => {
    const cur = await mustChange(tx, repo.id, number);
    const set: Partial<ChangeRow> = { updatedAt: now() };
    let moved: "closed" | "reopened" | null = null;
    if (title !== undefined) set.title = title;
    if (description !== undefined) set.description = description;
    const editsCode = target !== undefined || body.depends_on !== undefined;
    if (editsCode && (cur.state === "landed" || cur.state === "closed")) throw Conflict(`change #${number} is ${cur.state}`);
    if (target !== undefined && target !== cur.target) {
      if (!cur.sourceRepoId && target === cur.branch) throw Unprocessable("branch and target are the same branch");
      const base = await readRef(tx, repo.id, `refs/heads/${target}`);
      if (!base) throw Unprocessable(`target branch ${target} does not exist in ${orgName}/${repoName}`);
      Object.assign(set, { target, base });
      // A queued change leaves the old target's queue: it must be landed again on the new one.
      if (cur.state === "queued") Object.assign(set, { state: "open", queuedAt: null, queuedHead: null, waiting: null });
    }
    if (body.depends_on !== undefined) {
      if (body.depends_on !== null) await checkDependency(tx, repo.id, number, body.depends_on);
      set.dependsOn = body.depends_on;
    }
    if (body.state === "closed" && cur.state !== "closed") {
      if (cur.state === "landed") throw Conflict(`change #${number} has landed; it cannot be closed`);
      Object.assign(set, { state: "closed", queuedAt: null, queuedHead: null, waiting: null });
      moved = "closed";
    } else if (body.state === "open" && cur.state !== "open") {
      if (cur.state !== "closed") throw Conflict(`change #${number} is ${cur.state}; only a closed change can be reopened`);
      // Reopening catches up with the branch: pushes while closed did not move the head.
      const source = cur.sourceRepoId ?? repo.id;
      const head = await readRef(tx, source, `refs/heads/${cur.branch}`);
      if (!head) throw Unprocessable(`branch ${cur.branch} no longer exists; push it again to reopen the change`);
      Object.assign(set, { state: "open", verdict: null });
      moved = "reopened";
      if (head !== cur.head) {
        Object.assign(set, { head, patchset: cur.patchset + 1, base: await readRef(tx, repo.id, `refs/heads/${cur.target}`) });
        await recordPatchset(tx, { changeId: cur.id, patchset: cur.patchset + 1, head, base: set.base ?? null, createdAt: set.updatedAt! });
        await queueReanchor(ctx, tx, cur.id);
        // The new head runs CI like a push to the branch would have (the pushes while closed did not).
        await enqueueChangeTrigger(ctx, tx, { ...cur, ...set, head, base: set.base ?? null }, t.org.id, personOf(actor)?.id ?? null);
      }
    }
    await store.updateChange(tx, cur.id, set);
    // Closing or reopening tells the thread (its participants and `all` watchers), as on GitHub.
    if (moved)
      await ctx.events.emit(tx, {
        kind: "thread.activity",
        repoId: cur.repoId,
        orgId: t.org.id,
        subject: { kind: "change", id: cur.id, number: cur.number, title: set.title ?? cur.title },
        activity: moved,
        actorUserId: personOf(actor)?.id ?? null,
        participants: [],
        summary: {},
      });
    return { ...cur, ...set } as ChangeRow;
  });
  return one(ctx, row);
}

/**
 * The open changes beneath `top` (bottom first) that landing it lands too. 409 when one of them
 * is closed: its commits would land without the change being open.
 */
export async function changesBeneath(q: Parameters<typeof store.changeByNumber>[0], repoId: string, top: ChangeRow): Promise<ChangeRow[]> {
  const out: ChangeRow[] = [];
  let n = top.dependsOn;
  for (let depth = 0; n !== null && depth < MAX_STACK; depth++) {
    const row = await store.changeByNumber(q, repoId, n);
    if (!row || row.state === "landed") break;
    if (row.state === "closed") throw Conflict(`change #${row.number} beneath #${top.number} is closed; reopen it or drop the dependency`);
    out.unshift(row);
    n = row.dependsOn;
  }
  return out;
}

/** What landing a change needs, judged as its land request would judge it now (the web's status box). */
export interface LandingNeeds extends LandingApprovals {
  /** The checks the target's protection requires to succeed on the head. */
  requiredChecks: string[];
  /** Why the stack beneath stops a land request (a closed change beneath), or null. */
  stack: string | null;
  /** The target branch's tip now (null: the branch is gone): equal to the change's `base`, it lands as a fast-forward. */
  targetTip: string | null;
}

/** What change `number` needs to land (repo:read, the caller's target): approvals from the land request's own rule (landingApprovals), required checks, where its target stands. */
export async function landingNeeds(ctx: Ctx, t: RepoTarget, number: number): Promise<LandingNeeds> {
  need(t, "repo:read");
  const { org, repo } = t;
  const row = await mustChange(ctx.db.read, repo.id, number);
  const rule = await protectionOfBranch(ctx.db.read, repo.id, row.target);
  let beneath: ChangeRow[] = [];
  let stack: string | null = null;
  try {
    beneath = await changesBeneath(ctx.db.read, repo.id, row);
  } catch (e) {
    if (!(e instanceof AppError) || e.code !== "conflict") throw e;
    stack = e.message;
  }
  return {
    ...(await landingApprovals(ctx, org, repo, row, beneath, rule)),
    requiredChecks: rule?.requiredChecks ?? [],
    stack,
    targetTip: await readRef(ctx.db.read, repo.id, `refs/heads/${row.target}`),
  };
}

/** POST …/changes/{number}/land (repo:write) → queued; the lander takes it from there. */
export async function landChange(ctx: Ctx, t: RepoTarget, number: number): Promise<Change> {
  need(t, "repo:write");
  const { org, repo, actor } = t;
  // Landing rules on reviews (approvals.ts), read before the transaction; the lander asks again
  // before it lands, so a review that arrives in between is still heard.
  const pre = await mustChange(ctx.db.read, repo.id, number);
  if (pre.state === "open" || pre.state === "ejected") {
    const rule = await protectionOfBranch(ctx.db.read, repo.id, pre.target);
    const { blocking } = await landingApprovals(ctx, org, repo, pre, await changesBeneath(ctx.db.read, repo.id, pre), rule);
    if (blocking) throw Conflict(blocking.message, { approval: approvalFields(blocking) });
  }
  const row = await ctx.db.transaction(async (tx) => {
    const cur = await mustChange(tx, repo.id, number);
    if (cur.state === "queued") return cur;
    if (cur.state === "landed" || cur.state === "closed") throw Conflict(`change #${number} is ${cur.state}; only an open or ejected change can be landed`);
    await changesBeneath(tx, repo.id, cur);
    const t = now();
    const set: Partial<ChangeRow> = {
      state: "queued",
      queuedAt: t,
      queuedHead: cur.head,
      queuedByUserId: personOf(actor)?.id ?? null,
      verdict: null,
      waiting: null,
      updatedAt: t,
    };
    await store.updateChange(tx, cur.id, set);
    // The lander takes this target's queue once this commits (services/changes/land-job.ts).
    await queueLanding(ctx, tx, repo.id, cur.target);
    return { ...cur, ...set } as ChangeRow;
  });
  return one(ctx, row);
}

/** Ejects a queued change with a verdict and emits change.ejected (SPEC §6.1), inside `tx`. */
export async function ejectChange(ctx: Ctx, tx: Tx, org: Pick<Org, "id">, row: ChangeRow, verdict: Verdict, actorUserId: string | null): Promise<void> {
  await store.updateChange(tx, row.id, { state: "ejected", verdict, waiting: null, queuedAt: null, updatedAt: now() });
  await ctx.events.record(tx, { repoId: row.repoId, orgId: org.id, kind: "change.ejected", payload: { change: row.number, verdict }, actorUserId });
  await ctx.events.emit(tx, {
    kind: "thread.activity",
    repoId: row.repoId,
    orgId: org.id,
    subject: { kind: "change", id: row.id, number: row.number, title: row.title },
    activity: "ejected",
    actorUserId,
    participants: [],
    summary: { verdict: verdict.kind, excerpt: verdict.message.slice(0, 200) },
  });
}

/** A patchset recorded by a push: its comments re-anchored by a job, and the thread told. */
async function recordNewPatchset(ctx: Ctx, tx: Tx, event: RepoEvent, c: ChangeRow, patchset: number): Promise<void> {
  await queueReanchor(ctx, tx, c.id);
  // A fork's push is the fork's event: the change's thread lives in the target's org.
  const orgId = c.repoId === event.repoId ? event.orgId : ((await store.repoWithOrg(tx, c.repoId))?.org.id ?? event.orgId);
  await ctx.events.emit(tx, {
    kind: "thread.activity",
    repoId: c.repoId,
    orgId,
    subject: { kind: "change", id: c.id, number: c.number, title: c.title },
    activity: "patchset",
    actorUserId: event.actorUserId,
    participants: [],
    summary: { patchset },
  });
}

/**
 * The push subscriber: every live change following a branch that moved takes the new head (the
 * patchset grows), whatever transport moved it. A queued change whose head moved is ejected:
 * what was asked to land is no longer what the branch holds.
 */
export async function followPushes(ctx: Ctx, tx: Tx, event: RepoEvent): Promise<void> {
  if (event.kind !== "push") return;
  for (const move of event.moves) {
    if (!move.ref.startsWith("refs/heads/")) continue;
    const branch = move.ref.slice("refs/heads/".length);
    for (const c of await store.liveChangesOnBranch(tx, event.repoId, branch)) {
      if (move.new === c.head) continue;
      const t = now();
      if (move.new === null) {
        if (c.state === "queued") {
          const org = await store.repoWithOrg(tx, c.repoId);
          await ejectChange(
            ctx,
            tx,
            { id: org!.org.id },
            c,
            { kind: "head_moved", message: `branch ${branch} was deleted after the land request`, expected: c.queuedHead ?? c.head ?? "", actual: null },
            event.actorUserId,
          );
        }
        continue;
      }
      const base = await readRef(tx, c.repoId, `refs/heads/${c.target}`);
      await store.updateChange(tx, c.id, { head: move.new, patchset: c.patchset + 1, base, updatedAt: t });
      await recordPatchset(tx, { changeId: c.id, patchset: c.patchset + 1, head: move.new, base, createdAt: t });
      await recordNewPatchset(ctx, tx, event, c, c.patchset + 1);
      // Approvals of earlier patchsets go stale when the target's protection says so (requests for changes stay).
      if ((await protectionOfBranch(tx, c.repoId, c.target))?.dismissStaleApprovals) await dismissStaleApprovals(tx, c.id, c.patchset + 1, t);
      if (c.state === "queued") {
        const org = await store.repoWithOrg(tx, c.repoId);
        const moved = { ...c, head: move.new, patchset: c.patchset + 1 };
        await ejectChange(
          ctx,
          tx,
          { id: org!.org.id },
          moved,
          {
            kind: "head_moved",
            message: `branch ${branch} moved to ${move.new.slice(0, 12)} after the land request for ${(c.queuedHead ?? "").slice(0, 12)}; land it again`,
            expected: c.queuedHead ?? "",
            actual: move.new,
          },
          event.actorUserId,
        );
      }
      // A fork's push is the fork's event: the run belongs to the target, in the target's org.
      const targetOrgId = c.repoId === event.repoId ? event.orgId : (await store.repoWithOrg(tx, c.repoId))?.org.id;
      if (targetOrgId) await enqueueChangeTrigger(ctx, tx, { ...c, head: move.new, base }, targetOrgId, event.actorUserId);
    }
  }
}
