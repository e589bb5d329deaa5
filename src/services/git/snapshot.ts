// A repository's git data: refs and the live pack list in SQLite, packs in object storage.
// Reads take one snapshot per request; writes publish a pack and move refs in one transaction.
import { and, desc, eq, isNull } from "drizzle-orm";
import type { MultiPackIndex } from "../../git/multi-pack-index.ts";
import { PackIndex } from "../../git/pack-index.ts";
import { DeltaBaseCache, Pack } from "../../git/pack-reader.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import type { Oid, Ref } from "../../git/types.ts";
import { packs, refs, type Repo } from "../../db/schema/index.ts";
import type { Db, DbOrTx } from "../../db/client.ts";
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

  /** Caches the idx of a pack this process just wrote, so the next snapshot needs no read. */
  rememberIndex(repoId: string, name: string, bytes: Uint8Array): void {
    this.idx.set(packKey(repoId, name, "idx"), PackIndex.parse(bytes));
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

/** The live refs of a repository, sorted by name. */
export function readRefs(db: DbOrTx, repoId: string): Ref[] {
  return db
    .select({ name: refs.name, oid: refs.target })
    .from(refs)
    .where(eq(refs.repoId, repoId))
    .orderBy(refs.name)
    .all();
}

/** One consistent snapshot: refs and pack rows read in one transaction, packs opened from storage. */
export async function openSnapshot(db: Db, git: GitStore, repo: Repo): Promise<RepoSnapshot> {
  const { refRows, packRows } = db.transaction((tx) => ({
    refRows: readRefs(tx, repo.id),
    packRows: tx
      .select({ name: packs.name, size: packs.size, reachTips: packs.reachTips })
      .from(packs)
      .where(and(eq(packs.repoId, repo.id), isNull(packs.replacedAt)))
      .orderBy(desc(packs.createdAt))
      .all(),
  }));
  const opened = await Promise.all(packRows.map((row) => git.openPack(repo.id, row)));
  return { refs: refRows, head: `refs/heads/${repo.defaultBranch}`, objects: new PackSet(opened, git.multiPackIndexes) };
}

/** The current target of one ref, or null. */
export function readRef(db: DbOrTx, repoId: string, name: string): Oid | null {
  return db.select({ target: refs.target }).from(refs).where(and(eq(refs.repoId, repoId), eq(refs.name, name))).get()?.target ?? null;
}
