// What the repository settings pages General and Protections show, and their forms (issue 33):
// each read and each write is the API's own service call (getRepo/patchRepo/deleteRepo,
// list/put/deleteProtection), so a page refuses exactly as its API route does (401, 403, the
// masked 404) and a form fails with the API's status and message. What only a form has (the
// typed confirmation of a deletion, the bounds of fields the API's schema would check) is here.
import { Invalid, Unprocessable } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import type { Principal } from "../access/principal.ts";
import { need } from "../access/target.ts";
import { refsOf } from "../git/snapshot.ts";
import { deleteRepo, openRepo, patchRepo, type RepoBody } from "../repos/repos.ts";
import { deleteProtection, listProtections, putProtection } from "../repos/protections.ts";
import type { Protection, RepoPatch } from "../repos/schemas.ts";
import { repoAdminFrameOf, type RepoAdminFrame } from "./admin.ts";

/** The longest description the API's schema accepts. */
const MAX_DESCRIPTION = 2000;
/** The most required checks one protection form may name, and the longest name (the API's schema). */
const MAX_CHECKS = 100;
const MAX_CHECK_NAME = 200;

/** The General page: the repository as the API answers it, and its branches for the default-branch select. */
export async function generalView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
): Promise<{ frame: RepoAdminFrame; repo: RepoBody; branches: string[] }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  // Why repo:admin for reading too: every control on the page is an admin's (the API's PATCH).
  need(t, "repo:admin");
  const frame = await repoAdminFrameOf(ctx, t);
  const branches = (await refsOf(ctx, t))
    .filter((r) => r.name.startsWith("refs/heads/"))
    .map((r) => r.name.slice(11))
    .sort((a, b) => a.localeCompare(b));
  return { frame, repo: frame.chrome.repo, branches };
}

/** One of the General page's forms: the API's PATCH with the fields it sent. */
export async function patchRepoFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, input: RepoPatch): Promise<RepoBody> {
  // Why here: the API's route schema bounds the description; the service does not.
  if (typeof input.description === "string" && input.description.length > MAX_DESCRIPTION)
    throw Invalid(`description is longer than ${MAX_DESCRIPTION.toLocaleString("en")} characters`);
  return patchRepo(ctx, await openRepo(ctx, actor, orgName, repoName), input);
}

/**
 * The danger zone: deletes the repository when `confirm` is exactly `org/name` (as stored). A
 * mismatch is 422 and deletes nothing. Why the admin check first: whoever may not delete learns
 * the API's refusal, never whether they typed the name right.
 */
export async function deleteRepoFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, confirm: string): Promise<void> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  need(t, "repo:admin");
  const full = `${t.org.name}/${t.repo.name}`;
  if (confirm.trim() !== full) throw Unprocessable(`type ${full} to confirm the deletion; nothing was deleted`);
  await deleteRepo(ctx, t);
}

/** The Protections page: the repository's protections (repo admins, as the API's GET). */
export async function protectionsView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
): Promise<{ frame: RepoAdminFrame; protections: Protection[] }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const { protections } = await listProtections(ctx, t);
  return { frame: await repoAdminFrameOf(ctx, t), protections };
}

/** What the protection form sends, read as the API's PUT body would be. */
export interface ProtectionForm {
  pattern: string;
  allow_force_push: boolean;
  allow_deletion: boolean;
  require_change: boolean;
  dismiss_stale_approvals: boolean;
  /** As typed: the service refuses what is not an integer 0-10 (422). */
  required_approvals: string;
  /** As typed: one check name a line (or comma-separated). */
  required_checks: string;
}

/** The required checks of a form: one a line or comma-separated, blanks dropped, bounded as the API's schema. */
export function checksOf(raw: string): string[] {
  const names = raw
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (names.length > MAX_CHECKS) throw Invalid(`at most ${MAX_CHECKS} required checks`);
  for (const n of names) if (n.length > MAX_CHECK_NAME) throw Invalid(`a check name is longer than ${MAX_CHECK_NAME} characters`);
  return names;
}

/** Creates or replaces the protection of `form.pattern` (the API's PUT). */
export async function putProtectionFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, form: ProtectionForm): Promise<Protection> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  // Why first: whoever may not change protections learns the API's refusal, not a field's.
  need(t, "repo:admin");
  const approvals = form.required_approvals.trim() === "" ? 0 : Number(form.required_approvals.trim());
  return putProtection(ctx, t, form.pattern, {
    allow_force_push: form.allow_force_push,
    allow_deletion: form.allow_deletion,
    require_change: form.require_change,
    dismiss_stale_approvals: form.dismiss_stale_approvals,
    required_approvals: approvals,
    required_checks: checksOf(form.required_checks),
  });
}

/** Deletes the protection of `pattern` (the API's DELETE; 404 when there is none). */
export async function deleteProtectionFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, pattern: string): Promise<void> {
  await deleteProtection(ctx, await openRepo(ctx, actor, orgName, repoName), pattern);
}
