// Branch protections: the one enforcement point for git push, the ref API and the commit API
// (DECISIONS §3). Management routes live with the content API.
import { checkRefFormat } from "../../git/ref-name.ts";
import { globMatch } from "../../util/glob.ts";
import { ZERO_OID } from "../../git/types.ts";
import { Invalid, NotFound } from "../../errors.ts";
import type { Repo } from "../../db/schema/index.ts";
import { now, type Ctx } from "../context.ts";
import type { RefPolicy } from "../git/publish.ts";
import { requireRepoFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import * as store from "./store.ts";
import type { Protection as ProtectionRow } from "./store.ts";
import type { Protection, ProtectionList, ProtectionPut } from "./schemas.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

/** Where a ref update comes from; only the lander may move a require_change branch. */
export type UpdateSource = "push" | "ref-api" | "commit-api" | "lander";

/**
 * Whether a branch name matches a protection pattern: `*` within one path segment, `**` across
 * segments, as in workflow branch filters. Why the shared matcher (src/util/glob.ts): a RegExp
 * built from `*a*a*a*a*a*a*a*a*a*a*b` backtracked for seconds on a push to a 40-character name.
 */
export function matchesPattern(pattern: string, branch: string): boolean {
  return globMatch(pattern, branch);
}

/** The rule protecting `ref` (a branch), if any: an exact pattern wins over a wildcard. */
function ruleFor(rules: ProtectionRow[], ref: string): ProtectionRow | null {
  if (!ref.startsWith("refs/heads/")) return null;
  const branch = ref.slice("refs/heads/".length);
  return rules.find((r) => r.pattern === branch) ?? rules.find((r) => matchesPattern(r.pattern, branch)) ?? null;
}

/** The protection of branch `branch` as the lander reads it (required checks), or null. */
export async function protectionOfBranch(q: Parameters<typeof store.protectionsOf>[0], repoId: string, branch: string): Promise<ProtectionRow | null> {
  return ruleFor(await store.protectionsOf(q, repoId), `refs/heads/${branch}`);
}

/**
 * Whether a protection forbids force pushes to `ref`: only then must a write learn whether it
 * is a fast-forward, which can mean walking the whole history of a rewritten branch.
 */
export async function forbidsForcePush(ctx: Ctx, repo: Repo, ref: string): Promise<boolean> {
  const rule = ruleFor(await store.protectionsOf(ctx.db.read, repo.id), ref);
  return rule !== null && !rule.allowForcePush;
}

/**
 * The policy for updates to `repo` from `source`. Publish calls it inside its transaction, so
 * the rules checked are the ones committed when the refs move, not when the write began.
 */
export function refPolicy(repo: Repo, source: UpdateSource): RefPolicy {
  return async (tx) => {
    const rules = await store.protectionsOf(tx, repo.id);
    if (!rules.length) return () => null;
    // The names as they are now (a rename since the write began shows the new address).
    const names = await store.repoWithOrg(tx, repo.id);
    const changes = `POST /v1/orgs/${names?.org.name ?? "{org}"}/repos/${names?.repo.name ?? repo.name}/changes`;
    return (update, current) => {
      const rule = ruleFor(rules, update.ref);
      if (!rule) return null;
      const branch = update.ref.slice("refs/heads/".length);
      if (update.newOid === ZERO_OID) return rule.allowDeletion ? null : `protected branch ${branch}: deletion is not allowed`;
      if (rule.requireChange && source !== "lander") {
        return `protected branch ${branch}: direct updates are refused; land your commits through a change (${changes})`;
      }
      if (current !== null && !rule.allowForcePush) {
        if (update.fastForward === false) return `protected branch ${branch}: force push is not allowed`;
        // Why: ancestry is computed before the transaction, and only when a rule forbade force
        // pushes then (forbidsForcePush); a rule committed since leaves it unknown, and an
        // unknown is refused, never assumed to be a fast-forward.
        if (update.fastForward === undefined) return `protected branch ${branch}: force push is not allowed (the protection changed during this update; retry)`;
      }
      return null;
    };
  };
}

/** The API shape of one protection. */
function protectionBody(p: ProtectionRow): Protection {
  return { pattern: p.pattern, allow_force_push: p.allowForcePush, allow_deletion: p.allowDeletion, require_change: p.requireChange, required_checks: p.requiredChecks };
}

/** GET …/protections (admins). */
export async function listProtections(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<ProtectionList> {
  const { repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  return { protections: (await store.protectionsOf(ctx.db.read, repo.id)).map(protectionBody) };
}

function checkPattern(pattern: string): string {
  const branch = pattern.replace(/\*/g, "x");
  if (!pattern || pattern.length > 200 || !checkRefFormat(`refs/heads/${branch}`)) throw Invalid(`invalid branch pattern ${JSON.stringify(pattern)}`);
  return pattern;
}

/** PUT …/protections/{pattern}: create or replace (admins); omitted flags are false. */
export async function putProtection(ctx: Ctx, actor: Principal, orgName: string, repoName: string, pattern: string, body: ProtectionPut): Promise<Protection> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  checkPattern(pattern);
  const row: ProtectionRow = {
    repoId: repo.id,
    pattern,
    allowForcePush: body.allow_force_push ?? false,
    allowDeletion: body.allow_deletion ?? false,
    requireChange: body.require_change ?? false,
    requiredChecks: [...new Set(body.required_checks ?? [])],
    createdAt: now(),
  };
  await ctx.db.transaction(async (tx) => {
    await store.upsertProtection(tx, row);
    await recordAudit(tx, { orgId: org.id, action: "protection.updated", actor: auditActor(actor), target: `${repo.name}:${pattern}`, data: protectionBody(row) });
  });
  return protectionBody(row);
}

/** DELETE …/protections/{pattern} (admins); 404 when there is none. */
export async function deleteProtection(ctx: Ctx, actor: Principal, orgName: string, repoName: string, pattern: string): Promise<void> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  const gone = await ctx.db.transaction(async (tx) => {
    const deleted = await store.deleteProtection(tx, repo.id, pattern);
    if (deleted) await recordAudit(tx, { orgId: org.id, action: "protection.deleted", actor: auditActor(actor), target: `${repo.name}:${pattern}`, data: { pattern } });
    return deleted;
  });
  if (!gone) throw NotFound(`no protection for ${JSON.stringify(pattern)}`);
}
