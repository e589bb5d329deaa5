// The state of one repository a protocol request is served from: refs, HEAD and objects,
// taken once per request so every answer in the request agrees.
import type { PackSet } from "./pack-set.ts";
import type { ReachIndex } from "./reachability.ts";
import { CommitCache } from "./revision.ts";
import type { Oid, Ref } from "./types.ts";

/** Refs (sorted by name, HEAD excluded), HEAD's target (the branch may be unborn) and the objects. */
export interface RepoSnapshot {
  refs: Ref[];
  /** Symref target of HEAD, e.g. "refs/heads/main"; null when HEAD is detached or absent. */
  head: string | null;
  objects: PackSet;
  /**
   * What may be read through the repository: the index of what its tips reach (refs, and for a
   * server's snapshot the heads of its open changes), built on first use and cached per set of
   * tips. Absent in engine-only uses (tests, tools), where the refs alone are the tips.
   */
  reach?: () => Promise<ReachIndex>;
  /** Peeled tags of the server's repositories (GitStore's, shared across requests); absent in engine-only uses. */
  peeled?: PeelCache;
}

/**
 * Peeled value of each object id seen in a ref, or null for a non-tag. Object ids name content,
 * so the answer holds in every repository and one cache serves them all (the server's GitStore
 * holds it); bounded, oldest first out.
 */
export class PeelCache {
  private readonly map = new Map<Oid, Oid | null>();
  constructor(private readonly max = 200_000) {}
  has(oid: Oid): boolean {
    return this.map.has(oid);
  }
  get(oid: Oid): Oid | null | undefined {
    return this.map.get(oid);
  }
  set(oid: Oid, peeled: Oid | null): void {
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value!);
    this.map.set(oid, peeled);
  }
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

/** Refs peeled side by side: each peel is a few dependent reads, which object storage answers slowly. */
const PEEL_CONCURRENCY = 16;

/** Every ref with annotated tags peeled. */
export async function peelRefs(snapshot: RepoSnapshot): Promise<AdvertisedRef[]> {
  const cache = new CommitCache(snapshot.objects);
  const peelCache = snapshot.peeled ?? new PeelCache();
  const unknown = [...new Set(snapshot.refs.map((r) => r.oid).filter((oid) => !peelCache.has(oid)))];
  const missing = new Set<Oid>();
  const found = new Map<Oid, Oid | null>();
  let next = 0;
  // Object storage: neighbouring objects come in one request rather than one each.
  if (unknown.length > 0) snapshot.objects.prefetch(unknown, false);
  const worker = async (): Promise<void> => {
    while (next < unknown.length) {
      const oid = unknown[next++]!;
      const p = await cache.peel(oid);
      if (!p) {
        missing.add(oid);
        continue;
      }
      const peeled = p.tags.length > 0 ? p.oid : null;
      found.set(oid, peeled);
      peelCache.set(oid, peeled);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PEEL_CONCURRENCY, unknown.length) }, worker));
  return snapshot.refs.map((ref) => {
    const peeled = missing.has(ref.oid) ? null : found.has(ref.oid) ? found.get(ref.oid) : peelCache.get(ref.oid);
    return peeled ? { ...ref, peeled } : { ...ref };
  });
}

const refsByName = new WeakMap<RepoSnapshot, Map<string, Ref>>();

/** Ref names a short name can mean, in git's rev-parse order (ref_rev_parse_rules). */
export function expandRefName(snapshot: RepoSnapshot, name: string): Ref[] {
  const candidates = [name, `refs/${name}`, `refs/tags/${name}`, `refs/heads/${name}`, `refs/remotes/${name}`, `refs/remotes/${name}/HEAD`];
  // Built once per snapshot: a request may name thousands of refs (deepen-not lines).
  let byName = refsByName.get(snapshot);
  if (!byName) {
    byName = new Map(snapshot.refs.map((r) => [r.name, r]));
    refsByName.set(snapshot, byName);
  }
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
