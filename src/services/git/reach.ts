// Writes into a repository that lists other repositories' packs (a fork lists its parent's) may
// name only objects the repository reaches, or objects they bring: otherwise a ref pointed at the
// parent's deleted branch, a tree naming another fork's blob, or a thin pack's delta against one
// would make it readable here (docs/architecture.md, "Reachability is the boundary"). A
// repository that lists only its own packs is exempt: what it holds unreachable was written by
// its own writers, who may point a ref at it again (restoring a deleted branch by its id).
import type { OidSet } from "../../git/oid-set.ts";
import { bytesToHex } from "../../git/oid.ts";
import type { PackIndex } from "../../git/pack-index.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import { ZERO_OID, type Oid } from "../../git/types.ts";

/** Whether the snapshot lists a pack stored under another repository (its name is `<storage repo>/<pack>`). */
export function listsForeignPacks(snapshot: RepoSnapshot, repoId: string): boolean {
  return snapshot.objects.packs.some((p) => !p.name.startsWith(`${repoId}/`));
}

/** What one write names: new ref targets, and for a received pack what its objects name and its thin bases. */
export interface NamedByWrite {
  tips: Oid[];
  pack?: { idx: PackIndex; links: OidSet; appendedBases: Oid[] };
}

/**
 * The first object `named` refers to outside the write that the snapshot's tips do not reach, or
 * null; always null for a repository that lists only its own packs (see the file comment).
 */
export async function firstUnreachableNamed(snapshot: RepoSnapshot, repoId: string, named: NamedByWrite): Promise<Oid | null> {
  if (!listsForeignPacks(snapshot, repoId) || !snapshot.reach) return null;
  const index = await snapshot.reach();
  const pending: Oid[] = [];
  const tips = new Set(snapshot.refs.map((r) => r.oid));
  const consider = (oid: Oid) => {
    if (oid !== ZERO_OID && !tips.has(oid) && !index.contains(oid)) pending.push(oid);
  };
  const pack = named.pack;
  for (const t of named.tips) if (!pack || pack.idx.indexOf(t) < 0) consider(t);
  if (pack) {
    // A thin pack's bases were copied in from the repository: the client named them, so they count as named.
    for (const b of pack.appendedBases) consider(b);
    const links = pack.links;
    for (let n = 0; n < links.size; n++) {
      const at = 20 * n;
      if (pack.idx.indexOfRaw(links.table, at) >= 0 || index.containsRaw(links.table, at)) continue;
      pending.push(bytesToHex(links.table, at, 20));
    }
  }
  return pending.length === 0 ? null : index.firstUnreachable(snapshot.objects, [...new Set(pending)]);
}
