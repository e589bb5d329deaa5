// A change's patchsets: list them, the diff of any one, and what changed from one to another.
import { Invalid, NotFound } from "../../errors.ts";
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { changeReader, diffCommits, diffEnv } from "./diff.ts";
import { diffTreePair, treeOfCommit } from "../git/diff.ts";
import type { Diff, PatchsetList } from "./schemas.ts";
import * as store from "./store.ts";
import { patchsetOf, patchsetsOf } from "./store-patchsets.ts";

async function changeRow(ctx: Ctx, t: RepoTarget, number: number) {
  need(t, "repo:read");
  const { repo } = t;
  const row = Number.isInteger(number) && number > 0 ? await store.changeByNumber(ctx.db.read, repo.id, number) : null;
  if (!row) throw NotFound("change not found");
  return { repo, row };
}

/** GET …/changes/{number}/patchsets (repo:read), oldest first. */
export async function listPatchsets(ctx: Ctx, t: RepoTarget, number: number): Promise<PatchsetList> {
  const { row } = await changeRow(ctx, t, number);
  const rows = await patchsetsOf(ctx.db.read, row.id);
  return { patchsets: rows.map((p) => ({ patchset: p.patchset, head: p.head, base: p.base, created_at: p.createdAt })) };
}

/**
 * GET …/changes/{number}/patchsets/{n}/diff[?against=m] (repo:read): patchset n against the
 * target tip recorded with it (like the change's diff), or, with `against`, what changed from
 * patchset m's head to n's (two-dot: the interdiff a reviewer reads after a push).
 */
export async function patchsetDiff(ctx: Ctx, t: RepoTarget, number: number, n: number, against: number | null): Promise<Diff> {
  const { repo, row } = await changeRow(ctx, t, number);
  const to = await patchsetOf(ctx.db.read, row.id, n);
  if (!to) throw NotFound(`change #${number} has no patchset ${n}`);
  const reader = await changeReader(ctx, repo, row);
  if (against === null) {
    if (!to.base) throw NotFound("patchset has no base to compare with");
    return diffCommits(reader, to.base, to.head, diffEnv(ctx, repo));
  }
  if (against === n) throw Invalid("compare two different patchsets");
  const from = await patchsetOf(ctx.db.read, row.id, against);
  if (!from) throw NotFound(`change #${number} has no patchset ${against}`);
  const [fromTree, toTree] = await Promise.all([treeOfCommit(reader, from.head), treeOfCommit(reader, to.head)]);
  return { base: from.head, head: to.head, merge_base: null, ...(await diffTreePair(reader, fromTree, toTree, diffEnv(ctx, repo))) };
}
