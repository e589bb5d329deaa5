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
export type ApprovalStatus =
  | { kind: "ok"; required: number; approvals: number }
  | { kind: "missing"; number: number; required: number; approvals: number; changesRequestedBy: string[]; message: string };

/**
 * Counts a change's approvals under `rule`: per person, their standing review (latest non-dismissed
 * approve or request_changes); an approval counts when it is on the current patchset (with a rule
 * that dismisses stale ones: belt and braces with the stored flag), is not the author's, and its
 * author may write to the repository now. A request for changes from such a person blocks.
 * A rule requiring no approvals asks nothing (a request for changes then informs, as on GitHub).
 */
export async function approvalStatus(ctx: Ctx, org: Org, repo: Repo, change: ChangeRow, rule: ApprovalRule | null): Promise<ApprovalStatus> {
  if (!rule || rule.requiredApprovals <= 0) return { kind: "ok", required: 0, approvals: 0 };
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
  if (approvals >= required && blockers.length === 0) return { kind: "ok", required, approvals };
  const handles = await store.handlesOf(ctx.db.read, blockers);
  const changesRequestedBy = blockers.map((id) => handles.get(id) ?? id).sort();
  const parts: string[] = [];
  if (approvals < required) parts.push(`needs ${required} approval${required === 1 ? "" : "s"} from people with write access (has ${approvals})`);
  if (changesRequestedBy.length) parts.push(`changes requested by ${changesRequestedBy.join(", ")}`);
  const message = approvals < required ? `change #${change.number} ${parts.join("; ")}` : `change #${change.number} has ${parts.join("; ")}`;
  return { kind: "missing", number: change.number, required, approvals, changesRequestedBy, message };
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

/** What landing a change asks in approvals, and what it lacks: one answer for the land request and the web's status box. */
export interface LandingApprovals {
  /** Approvals the target's protection requires (0: none). */
  required: number;
  /** This change's approvals that count (on the current patchset when stale ones are dismissed; writers; not the author). */
  approvals: number;
  /** Handles whose standing request for changes blocks this change (only under a rule that requires approvals). */
  changesRequestedBy: string[];
  /** The first change of the stack (bottom first, then this one) lacking approvals: why a land request answers 409; null when approvals do not stop it. */
  blocking: Extract<ApprovalStatus, { kind: "missing" }> | null;
}

/**
 * The approvals landing `change` needs, with the open changes `beneath` it (bottom first) that
 * land with it. The land request refuses with `blocking` (409); the change page says the same.
 */
export async function landingApprovals(
  ctx: Ctx,
  org: Org,
  repo: Repo,
  change: ChangeRow,
  beneath: readonly ChangeRow[],
  rule: ApprovalRule | null,
): Promise<LandingApprovals> {
  const own = await approvalStatus(ctx, org, repo, change, rule);
  const below = await stackApprovals(ctx, org, repo, beneath, rule);
  return {
    required: own.required,
    approvals: own.approvals,
    changesRequestedBy: own.kind === "missing" ? own.changesRequestedBy : [],
    blocking: below ?? (own.kind === "missing" ? own : null),
  };
}

/** The API fields of a missing approval (409 body and verdict). */
export function approvalFields(s: Extract<ApprovalStatus, { kind: "missing" }>): { required: number; approvals: number; changes_requested_by: string[] } {
  return { required: s.required, approvals: s.approvals, changes_requested_by: s.changesRequestedBy };
}
