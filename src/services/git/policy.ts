// Branch protections as git enforces them: the one enforcement point for git push, the ref API,
// the commit API and the lander (DECISIONS §3). The rules are rows the repository admins edit
// (repos/protections.ts); this file only reads and evaluates them, next to `RefPolicy`
// (publish.ts), so the git service below every feature needs nothing from above it.
import { globMatch } from "../../util/glob.ts";
import { ZERO_OID } from "../../git/types.ts";
import type { Repo } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import type { RefPolicy } from "./publish.ts";
import * as store from "./store.ts";
import type { ProtectionRow } from "./store.ts";

export type { ProtectionRow } from "./store.ts";

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

/** Every protection of a repository, by pattern (the admins' listing reads the same rows). */
export async function protectionsOf(q: Queryable, repoId: string): Promise<ProtectionRow[]> {
  return store.protectionsOf(q, repoId);
}

/** The protection of branch `branch` as the lander reads it (required checks), or null. */
export async function protectionOfBranch(q: Queryable, repoId: string, branch: string): Promise<ProtectionRow | null> {
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
    const names = await store.repoAddress(tx, repo.id);
    const changes = `POST /v1/orgs/${names?.org ?? "{org}"}/repos/${names?.repo ?? repo.name}/changes`;
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

/** `policy` with `refusals` (ref → message, decided before the transaction) checked first. */
export function withRefusals(policy: RefPolicy, refusals: ReadonlyMap<string, string>): RefPolicy {
  if (!refusals.size) return policy;
  return async (tx) => {
    const check = await policy(tx);
    return (update, current) => refusals.get(update.ref) ?? check(update, current);
  };
}
