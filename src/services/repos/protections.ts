// Branch protections: the admins' rules (list, put, delete; DECISIONS §3). Management routes live
// with the content API. Git enforces them (services/git/policy.ts: push, the ref and commit APIs,
// the lander).
import { checkRefFormat } from "../../git/ref-name.ts";
import { Invalid, NotFound, Unprocessable } from "../../errors.ts";
import { now, type Ctx } from "../context.ts";
import { protectionsOf } from "../git/policy.ts";
import { need, type RepoTarget } from "../access/target.ts";
import * as store from "./store.ts";
import type { Protection as ProtectionRow } from "./store.ts";
import type { Protection, ProtectionList, ProtectionPut } from "./schemas.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

/** The most approvals a protection may require. */
const MAX_APPROVALS = 10;

/** The API shape of one protection. */
function protectionBody(p: ProtectionRow): Protection {
  return {
    pattern: p.pattern,
    allow_force_push: p.allowForcePush,
    allow_deletion: p.allowDeletion,
    require_change: p.requireChange,
    required_checks: p.requiredChecks,
    required_approvals: p.requiredApprovals,
    dismiss_stale_approvals: p.dismissStaleApprovals,
  };
}

/** GET …/protections (admins). */
export async function listProtections(ctx: Ctx, t: RepoTarget): Promise<ProtectionList> {
  need(t, "repo:admin");
  const { repo } = t;
  return { protections: (await protectionsOf(ctx.db.read, repo.id)).map(protectionBody) };
}

function checkPattern(pattern: string): string {
  const branch = pattern.replace(/\*/g, "x");
  if (!pattern || pattern.length > 200 || !checkRefFormat(`refs/heads/${branch}`)) throw Invalid(`invalid branch pattern ${JSON.stringify(pattern)}`);
  return pattern;
}

/** PUT …/protections/{pattern}: create or replace (admins); omitted flags are false (dismiss_stale_approvals: true, required_approvals: 0). */
export async function putProtection(ctx: Ctx, t: RepoTarget, pattern: string, body: ProtectionPut): Promise<Protection> {
  need(t, "repo:admin");
  const { org, repo, actor } = t;
  checkPattern(pattern);
  const approvals = body.required_approvals ?? 0;
  if (!Number.isInteger(approvals) || approvals < 0 || approvals > MAX_APPROVALS) throw Unprocessable(`required_approvals must be 0-${MAX_APPROVALS}`);
  const row: ProtectionRow = {
    repoId: repo.id,
    pattern,
    allowForcePush: body.allow_force_push ?? false,
    allowDeletion: body.allow_deletion ?? false,
    requireChange: body.require_change ?? false,
    requiredChecks: [...new Set(body.required_checks ?? [])],
    requiredApprovals: approvals,
    dismissStaleApprovals: body.dismiss_stale_approvals ?? true,
    createdAt: now(),
  };
  await ctx.db.transaction(async (tx) => {
    await store.upsertProtection(tx, row);
    await recordAudit(tx, {
      orgId: org.id,
      action: "protection.updated",
      actor: auditActor(actor),
      target: `${repo.name}:${pattern}`,
      data: protectionBody(row),
    });
  });
  return protectionBody(row);
}

/** DELETE …/protections/{pattern} (admins); 404 when there is none. */
export async function deleteProtection(ctx: Ctx, t: RepoTarget, pattern: string): Promise<void> {
  need(t, "repo:admin");
  const { org, repo, actor } = t;
  const gone = await ctx.db.transaction(async (tx) => {
    const deleted = await store.deleteProtection(tx, repo.id, pattern);
    if (deleted)
      await recordAudit(tx, { orgId: org.id, action: "protection.deleted", actor: auditActor(actor), target: `${repo.name}:${pattern}`, data: { pattern } });
    return deleted;
  });
  if (!gone) throw NotFound(`no protection for ${JSON.stringify(pattern)}`);
}
