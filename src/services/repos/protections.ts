// Branch protections: the one enforcement point for git push, the ref API and the commit API
// (DECISIONS §3). Management routes live with the content API.
import { and, eq } from "drizzle-orm";
import { checkRefFormat } from "../../git/ref-name.ts";
import { ZERO_OID } from "../../git/types.ts";
import { Invalid, NotFound } from "../../errors.ts";
import { protections, type Repo } from "../../db/schema/index.ts";
import { now, type Ctx } from "../context.ts";
import type { RefPolicy } from "../git/publish.ts";
import { requireRepoFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";

/** Where a ref update comes from; only the lander may move a require_change branch. */
export type UpdateSource = "push" | "ref-api" | "commit-api" | "lander";

/** Whether a branch name matches a protection pattern (`*` matches within one path segment). */
export function matchesPattern(pattern: string, branch: string): boolean {
  const re = new RegExp(`^${pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`);
  return re.test(branch);
}

/** The rule protecting `ref` (a branch), if any: an exact pattern wins over a wildcard. */
function ruleFor(rules: (typeof protections.$inferSelect)[], ref: string) {
  if (!ref.startsWith("refs/heads/")) return null;
  const branch = ref.slice("refs/heads/".length);
  return rules.find((r) => r.pattern === branch) ?? rules.find((r) => matchesPattern(r.pattern, branch)) ?? null;
}

/**
 * Whether a protection forbids force pushes to `ref`: only then must a write learn whether it
 * is a fast-forward, which can mean walking the whole history of a rewritten branch.
 */
export async function forbidsForcePush(ctx: Ctx, repo: Repo, ref: string): Promise<boolean> {
  const rule = ruleFor(ctx.db.read.select().from(protections).where(eq(protections.repoId, repo.id)).all(), ref);
  return rule !== null && !rule.allowForcePush;
}

/** The policy for updates to `repo` from `source`, loaded once per write. */
export async function refPolicy(ctx: Ctx, repo: Repo, source: UpdateSource): Promise<RefPolicy> {
  const rules = ctx.db.read.select().from(protections).where(eq(protections.repoId, repo.id)).all();
  if (!rules.length) return () => null;
  return (update, current) => {
    const rule = ruleFor(rules, update.ref);
    if (!rule) return null;
    const branch = update.ref.slice("refs/heads/".length);
    if (update.newOid === ZERO_OID) return rule.allowDeletion ? null : `protected branch ${branch}: deletion is not allowed`;
    if (rule.requireChange && source !== "lander") {
      return `protected branch ${branch}: direct updates are refused; land your commits through a change (POST /v1/orgs/{org}/repos/{repo}/changes)`;
    }
    if (current !== null && update.fastForward === false && !rule.allowForcePush) return `protected branch ${branch}: force push is not allowed`;
    return null;
  };
}

/** The API shape of one protection. */
function protectionBody(p: typeof protections.$inferSelect) {
  return { pattern: p.pattern, allow_force_push: p.allowForcePush, allow_deletion: p.allowDeletion, require_change: p.requireChange, required_checks: p.requiredChecks };
}

/** GET …/protections (admins). */
export async function listProtections(ctx: Ctx, actor: Principal, orgName: string, repoName: string) {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  return { protections: ctx.db.read.select().from(protections).where(eq(protections.repoId, repo.id)).orderBy(protections.pattern).all().map(protectionBody) };
}

function checkPattern(pattern: string): string {
  const branch = pattern.replace(/\*/g, "x");
  if (!pattern || pattern.length > 200 || !checkRefFormat(`refs/heads/${branch}`)) throw Invalid(`invalid branch pattern ${JSON.stringify(pattern)}`);
  return pattern;
}

/** PUT …/protections/{pattern}: create or replace (admins). */
export async function putProtection(ctx: Ctx, actor: Principal, orgName: string, repoName: string, pattern: string, body: Record<string, unknown>) {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  checkPattern(pattern);
  const flag = (k: string) => {
    const v = body[k];
    if (v === undefined) return false;
    if (typeof v !== "boolean") throw Invalid(`${k} must be a boolean`);
    return v;
  };
  const checks = body.required_checks ?? [];
  if (!Array.isArray(checks) || !checks.every((c) => typeof c === "string" && c.length > 0 && c.length <= 200)) throw Invalid("required_checks must be an array of check names");
  const row = {
    repoId: repo.id,
    pattern,
    allowForcePush: flag("allow_force_push"),
    allowDeletion: flag("allow_deletion"),
    requireChange: flag("require_change"),
    requiredChecks: [...new Set(checks as string[])],
    createdAt: now(),
  };
  await ctx.db.transaction((tx) =>
    tx
      .insert(protections)
      .values(row)
      .onConflictDoUpdate({ target: [protections.repoId, protections.pattern], set: { allowForcePush: row.allowForcePush, allowDeletion: row.allowDeletion, requireChange: row.requireChange, requiredChecks: row.requiredChecks } })
      .run(),
  );
  return protectionBody(row);
}

/** DELETE …/protections/{pattern} (admins); 404 when there is none. */
export async function deleteProtection(ctx: Ctx, actor: Principal, orgName: string, repoName: string, pattern: string): Promise<void> {
  const { org, repo } = await requireRepoFor(ctx, actor, orgName, repoName, "repo:admin");
  const gone = await ctx.db.transaction((tx) => tx.delete(protections).where(and(eq(protections.repoId, repo.id), eq(protections.pattern, pattern))).returning().all());
  if (!gone.length) throw NotFound(`no protection for ${JSON.stringify(pattern)}`);
}
