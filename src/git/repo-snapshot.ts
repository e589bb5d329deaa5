// The state of one repository a protocol request is served from: refs, HEAD and objects,
// taken once per request so every answer in the request agrees.
import type { PackSet } from "./pack-set.ts";
import { CommitCache } from "./revision.ts";
import type { Oid, Ref } from "./types.ts";

/** Refs (sorted by name, HEAD excluded), HEAD's target (the branch may be unborn) and the objects. */
export interface RepoSnapshot {
  refs: Ref[];
  /** Symref target of HEAD, e.g. "refs/heads/main"; null when HEAD is detached or absent. */
  head: string | null;
  objects: PackSet;
}

/** A ref with its peeled value when it names an annotated tag. */
export interface AdvertisedRef extends Ref {
  peeled?: Oid;
}

/** The ref HEAD points at, when that ref exists. */
export function resolveHead(snapshot: RepoSnapshot): Ref | null {
  if (!snapshot.head) return null;
  return snapshot.refs.find((r) => r.name === snapshot.head) ?? null;
}

/**
 * Peeled value of each object id seen in a ref, or null for a non-tag. Object ids name content,
 * so the answer holds in every repository and the cache may be shared.
 */
const peelCache = new Map<Oid, Oid | null>();
const PEEL_CACHE_MAX = 200_000;

/** Every ref with annotated tags peeled. */
export async function peelRefs(snapshot: RepoSnapshot): Promise<AdvertisedRef[]> {
  const cache = new CommitCache(snapshot.objects);
  const out: AdvertisedRef[] = [];
  for (const ref of snapshot.refs) {
    let peeled = peelCache.get(ref.oid);
    if (peeled === undefined) {
      const p = await cache.peel(ref.oid);
      if (!p) {
        out.push({ ...ref });
        continue;
      }
      peeled = p.tags.length > 0 ? p.oid : null;
      if (peelCache.size >= PEEL_CACHE_MAX) peelCache.delete(peelCache.keys().next().value!);
      peelCache.set(ref.oid, peeled);
    }
    out.push(peeled ? { ...ref, peeled } : { ...ref });
  }
  return out;
}

/** Ref names a short name can mean, in git's rev-parse order (ref_rev_parse_rules). */
export function expandRefName(snapshot: RepoSnapshot, name: string): Ref[] {
  const candidates = [
    name,
    `refs/${name}`,
    `refs/tags/${name}`,
    `refs/heads/${name}`,
    `refs/remotes/${name}`,
    `refs/remotes/${name}/HEAD`,
  ];
  const byName = new Map(snapshot.refs.map((r) => [r.name, r]));
  const found: Ref[] = [];
  for (const c of candidates) {
    const ref = byName.get(c);
    if (ref && !found.includes(ref)) found.push(ref);
  }
  if (name === "HEAD") {
    const head = resolveHead(snapshot);
    if (head) found.unshift(head);
  }
  return found;
}
