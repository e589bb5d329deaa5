// Landing rules on reviews (issue 28; DECISIONS §5): a target's protection may require approvals
// from people with write access, and a writer's request for changes blocks landing until they
// approve or an admin dismisses it. Asked by the land request (409) and by the lander (verdict
// `approval`, never a wait: approvals are not a pending state).
import type { Org, Repo } from "../../db/schema/index.ts";
import { decide, deferredFacts } from "../access/access.ts";
import type { Ctx } from "../context.ts";
import { standings } from "./reviewers.ts";
import * as store from "./store.ts";
import type { ChangeRow } from "./store.ts";
import { reviewsOf } from "./store-reviews.ts";

/** The approval rules of a target's protection (none: nothing required). */
export interface ApprovalRule {
  requiredApprovals: number;
  dismissStaleApprovals: boolean;
}

/** Whether a change has what its target's rule asks; `missing` names what it lacks. */
export type ApprovalStatus = { kind: "ok" } | { kind: "missing"; required: number; approvals: number; changesRequestedBy: string[]; message: string };

/**
 * Counts a change's approvals under `rule`: per person, their standing review (latest non-dismissed
 * approve or request_changes); an approval counts when it is on the current patchset (with a rule
 * that dismisses stale ones: belt and braces with the stored flag), is not the author's, and its
 * author may write to the repository now. A request for changes from such a person blocks.
 * A rule requiring no approvals asks nothing (a request for changes then informs, as on GitHub).
 */
export async function approvalStatus(ctx: Ctx, org: Org, repo: Repo, change: ChangeRow, rule: ApprovalRule | null): Promise<ApprovalStatus> {
  if (!rule || rule.requiredApprovals <= 0) return { kind: "ok" };
  const standing = standings(await reviewsOf(ctx.db.read, [change.id]));
  let approvals = 0;
  const blockers: string[] = [];
  for (const [userId, review] of standing) {
    if (userId === change.authorUserId) continue;
    if (review.verdict === "approve" && rule.dismissStaleApprovals && review.patchset < change.patchset) continue;
    // Why decided now, per person: a writer who lost access since approving no longer counts.
    const facts = await deferredFacts(ctx, userId, org, repo);
    if (facts.repo) facts.repo = { ...facts.repo, writeBlocked: null };
    if (!decide(facts, "repo:write").allow) continue;
    if (review.verdict === "approve") approvals++;
    else blockers.push(userId);
  }
  const required = rule.requiredApprovals;
  if (approvals >= required && blockers.length === 0) return { kind: "ok" };
  const handles = await store.handlesOf(ctx.db.read, blockers);
  const changesRequestedBy = blockers.map((id) => handles.get(id) ?? id).sort();
  const parts: string[] = [];
  if (approvals < required) parts.push(`needs ${required} approval${required === 1 ? "" : "s"} from people with write access (has ${approvals})`);
  if (changesRequestedBy.length) parts.push(`changes requested by ${changesRequestedBy.join(", ")}`);
  const message = approvals < required ? `change #${change.number} ${parts.join("; ")}` : `change #${change.number} has ${parts.join("; ")}`;
  return { kind: "missing", required, approvals, changesRequestedBy, message };
}

/** The first change of a stack (bottom first, then the top) lacking approvals, or null when all have them. */
export async function stackApprovals(
  ctx: Ctx,
  org: Org,
  repo: Repo,
  changes: readonly ChangeRow[],
  rule: ApprovalRule | null,
): Promise<Extract<ApprovalStatus, { kind: "missing" }> | null> {
  if (!rule || rule.requiredApprovals <= 0) return null;
  for (const c of changes) {
    const s = await approvalStatus(ctx, org, repo, c, rule);
    if (s.kind === "missing") return s;
  }
  return null;
}

/** The API fields of a missing approval (409 body and verdict). */
export function approvalFields(s: Extract<ApprovalStatus, { kind: "missing" }>): { required: number; approvals: number; changes_requested_by: string[] } {
  return { required: s.required, approvals: s.approvals, changes_requested_by: s.changesRequestedBy };
}
