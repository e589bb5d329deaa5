// The default branch follows the first branch pushed (DECISIONS §5, as on GitHub): a repository
// made with `default_branch: main` that receives an existing project's `master` would otherwise
// point HEAD at a branch that does not exist (git clone checks out nothing and warns). Runs in
// the transaction that moves the refs, so HEAD and the refs never disagree.
import { ZERO_OID } from "../../git/types.ts";
import type { Repo } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import * as store from "./store.ts";

/** Branch names preferred when one write creates several branches (`git push --all`). */
const PREFERRED: readonly string[] = ["main", "master"];

/**
 * After a write has applied `updates` (ref moves, in the order the client sent them): when the
 * repository's default branch does not exist and the write created or moved a branch, that branch
 * becomes the default (`main`, then `master`, then the first). A default branch that exists is
 * never moved by a push; a mirror's follows its origin's HEAD instead. Answers the new default, or
 * null when nothing changed.
 */
export async function adoptDefaultBranch(tx: Tx, repo: Pick<Repo, "id" | "kind">, updates: { ref: string; newOid: string }[]): Promise<string | null> {
  if (repo.kind === "mirror") return null;
  const branches = updates.filter((u) => u.newOid !== ZERO_OID && u.ref.startsWith("refs/heads/")).map((u) => u.ref.slice("refs/heads/".length));
  if (!branches.length) return null;
  const current = await store.defaultBranchOf(tx, repo.id);
  if (current === null || (await store.readRef(tx, repo.id, `refs/heads/${current}`)) !== null) return null;
  const chosen = PREFERRED.find((b) => branches.includes(b)) ?? branches[0]!;
  await store.setDefaultBranch(tx, repo.id, chosen);
  return chosen;
}
