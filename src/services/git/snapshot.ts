// A repository's git data: refs and the live pack list in SQLite, packs in object storage.
// Reads take one snapshot per request; writes publish a pack and move refs in one transaction.
import type { MultiPackIndex } from "../../git/multi-pack-index.ts";
import { PackIndex } from "../../git/pack-index.ts";
import { DeltaBaseCache, Pack } from "../../git/pack-reader.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import type { Repo } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import { snapshotRows } from "./store.ts";
import { BlockCache, ByteLru, type ObjectStore } from "../../storage/index.ts";

/** The key of a stored pack file. */
export function packKey(repoId: string, name: string, ext: "pack" | "idx"): string {
  return `repos/${repoId}/packs/pack-${name}.${ext}`;
}

export type { RepoSnapshot };

/** Process-wide caches over the object store: parsed idx files, pack blocks, delta bases. */
export class GitStore {
  readonly blocks: BlockCache;
  readonly deltaBases = new DeltaBaseCache(32 * 1024 * 1024);
  private readonly idx = new ByteLru<string, PackIndex>(64 * 1024 * 1024, (v) => 1024 + v.count * 28);
  /** Multi-pack indexes of recent pack sets (walks and pack writing name objects by their positions). */
  readonly multiPackIndexes = new ByteLru<string, MultiPackIndex>(64 * 1024 * 1024, (v) => 1024 + v.footprint);
  private readonly loading = new Map<string, Promise<PackIndex>>();

  constructor(readonly store: ObjectStore) {
    this.blocks = new BlockCache(store, { blockSize: 64 * 1024, maxBytes: 64 * 1024 * 1024 });
  }

  /** The parsed idx of a stored pack (cached; concurrent loads share one read). */
  async packIndex(key: string): Promise<PackIndex> {
    const hit = this.idx.get(key);
    if (hit) return hit;
    let p = this.loading.get(key);
    if (!p) {
      p = (async () => {
        const bytes = await this.store.get(key);
        if (!bytes) throw new Error(`missing pack index ${key}`);
        const parsed = PackIndex.parse(bytes);
        this.idx.set(key, parsed);
        return parsed;
      })().finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }

  /**
   * Uploads a pack from local files: the `.pack` first, then the `.idx` (so whoever finds the idx
   * finds its pack), then caches the idx so the next snapshot needs no read. The one upload path
   * of publish (push, commit API, ref API) and maintenance; the pack is visible only once its row
   * commits.
   */
  async storePack(repoId: string, pack: { name: string; packPath: string; idxPath: string }): Promise<void> {
    await this.store.putFile(packKey(repoId, pack.name, "pack"), pack.packPath);
    await this.store.putFile(packKey(repoId, pack.name, "idx"), pack.idxPath);
    this.idx.set(packKey(repoId, pack.name, "idx"), PackIndex.parse(await Bun.file(pack.idxPath).bytes()));
  }

  /** Opens one stored pack for reading (with its reachability record, when it has one). */
  async openPack(repoId: string, row: { name: string; size: number; reachTips?: string | null }): Promise<Pack> {
    const idx = await this.packIndex(packKey(repoId, row.name, "idx"));
    const pack = new Pack(`${repoId}/${row.name}`, idx, this.blocks.source(packKey(repoId, row.name, "pack"), row.size), this.deltaBases);
    if (row.reachTips) pack.reachTips = row.reachTips.split("\n");
    return pack;
  }

  /** Forgets cached bytes of a deleted pack. */
  evict(repoId: string, name: string): void {
    this.idx.delete(packKey(repoId, name, "idx"));
    this.blocks.evict(packKey(repoId, name, "pack"));
  }
}

/** One consistent snapshot: refs and pack rows read together, packs opened from storage. */
export async function openSnapshot(q: Queryable, git: GitStore, repo: Repo): Promise<RepoSnapshot> {
  const rows = await snapshotRows(q, repo.id);
  const opened = await Promise.all(rows.packs.map((row) => git.openPack(repo.id, row)));
  return { refs: rows.refs, head: `refs/heads/${repo.defaultBranch}`, objects: new PackSet(opened, git.multiPackIndexes) };
}

export { readRef, readRefs } from "./store.ts";
