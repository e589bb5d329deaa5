// A repository's git data: refs and the live pack list in SQLite, packs in object storage.
// Reads take one snapshot per request; writes publish a pack and move refs in one transaction.
import { and, desc, eq, isNull } from "drizzle-orm";
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { openFileSource } from "../../git/file-source.ts";
import { PackIndex } from "../../git/pack-index.ts";
import { DeltaBaseCache, Pack } from "../../git/pack-reader.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import { GitError, type ByteSource, type Oid, type Ref } from "../../git/types.ts";
import { packs, refs, type Repo } from "../../db/schema/index.ts";
import type { Db, DbOrTx } from "../../db/client.ts";
import { BlockCache, ByteLru, StorageError, type ObjectStore, type RangeReader } from "../../storage/index.ts";
import { AppError } from "../../errors.ts";

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

  /** Opens one stored pack for reading. */
  async openPack(repoId: string, row: { name: string; size: number }): Promise<Pack> {
    const idx = await this.packIndex(packKey(repoId, row.name, "idx"));
    return new Pack(`${repoId}/${row.name}`, idx, engineSource(this.blocks.source(packKey(repoId, row.name, "pack"), row.size)), this.deltaBases);
  }

  /**
   * Opens stored packs for maintenance, which reads every byte of them, often more than once:
   * from object storage each is first downloaded whole into `tmpDir` (a few large streamed
   * reads instead of thousands of small ranged ones); the fs store's packs are read in place.
   * close() removes the copies.
   */
  async openPackCopies(repoId: string, rows: { name: string; size: number }[], tmpDir: string): Promise<{ packs: Pack[]; close(): Promise<void> }> {
    if (this.store.kind === "fs") return { packs: await Promise.all(rows.map((row) => this.openPack(repoId, row))), close: async () => {} };
    const opened: { source: Awaited<ReturnType<typeof openFileSource>>; path: string }[] = [];
    const close = async () => {
      for (const o of opened.splice(0)) {
        await o.source.close();
        await rm(o.path, { force: true });
      }
    };
    try {
      const packs: Pack[] = [];
      for (const row of rows) {
        const idx = await this.packIndex(packKey(repoId, row.name, "idx"));
        const path = join(tmpDir, `copy-${row.name}-${process.pid}-${Math.random().toString(36).slice(2)}.pack`);
        const file = await open(path, "w");
        try {
          for await (const chunk of this.blocks.stream(packKey(repoId, row.name, "pack"), row.size, 0, row.size)) {
            for (let at = 0; at < chunk.length; ) at += (await file.write(chunk, at)).bytesWritten;
          }
        } catch (err) {
          await file.close();
          await rm(path, { force: true });
          throw err;
        }
        await file.close();
        const source = await openFileSource(path);
        opened.push({ source, path });
        packs.push(new Pack(`${repoId}/${row.name}`, idx, source, this.deltaBases));
      }
      return { packs, close };
    } catch (err) {
      await close();
      throw err;
    }
  }

  /** Forgets cached bytes of a deleted pack. */
  evict(repoId: string, name: string): void {
    this.idx.delete(packKey(repoId, name, "idx"));
    this.blocks.evict(packKey(repoId, name, "pack"));
  }
}

const UNAVAILABLE = "object storage is unavailable (it kept failing after retries); try again later";

/** Whether `err` is the storage layer giving up after its retries. */
function isUnavailable(err: unknown): boolean {
  return err instanceof StorageError && err.code === "unavailable";
}

/**
 * A pack source for the engine: when the store gives up mid-request, the engine gets a GitError,
 * whose message it sends to the client in band (ERR, or side-band 3 once the pack has started)
 * before ending the response, so git reports the failure instead of reading a cut-off pack.
 */
function engineSource(source: RangeReader): ByteSource {
  const rethrow = (err: unknown): never => {
    throw isUnavailable(err) ? new GitError(UNAVAILABLE) : err;
  };
  const out: ByteSource = { size: source.size, read: (offset, length) => source.read(offset, length).catch(rethrow) };
  if (source.stream) {
    const stream = source.stream.bind(source);
    out.stream = async function* (offset, length) {
      try {
        yield* stream(offset, length);
      } catch (err) {
        rethrow(err);
      }
    };
  }
  if (source.prefetch) out.prefetch = source.prefetch.bind(source);
  return out;
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
      .select({ name: packs.name, size: packs.size })
      .from(packs)
      .where(and(eq(packs.repoId, repo.id), isNull(packs.replacedAt)))
      .orderBy(desc(packs.createdAt))
      .all(),
  }));
  // Why 503: the store giving up is temporary; the client should retry, not report a broken repository.
  const opened = await Promise.all(packRows.map((row) => git.openPack(repo.id, row))).catch((err: unknown) => {
    throw isUnavailable(err) ? new AppError(503, UNAVAILABLE) : err;
  });
  return { refs: refRows, head: `refs/heads/${repo.defaultBranch}`, objects: new PackSet(opened) };
}

/** The current target of one ref, or null. */
export function readRef(db: DbOrTx, repoId: string, name: string): Oid | null {
  return db.select({ target: refs.target }).from(refs).where(and(eq(refs.repoId, repoId), eq(refs.name, name))).get()?.target ?? null;
}
