// The git read caches over the object store (parsed idx files, pack blocks, delta bases,
// multi-pack indexes, reachability indexes) and the stored packs opened through them. Kept free of the database and of
// the S3 client's module so that a worker thread can build its own (upload-thread.ts).
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { openFileSource } from "../../git/file-source.ts";
import type { MultiPackIndex } from "../../git/multi-pack-index.ts";
import { PackIndex } from "../../git/pack-index.ts";
import { countHeldBytes } from "../../git/buffer-pool.ts";
import { DeltaBaseCache, Pack } from "../../git/pack-reader.ts";
import type { PackSet } from "../../git/pack-set.ts";
import { PeelCache } from "../../git/repo-snapshot.ts";
import { ReachIndex } from "../../git/reachability.ts";
import { GitError, type ByteSource, type Oid } from "../../git/types.ts";
import { BlockCache, type RangeReader } from "../../storage/block-cache.ts";
import { ByteLru } from "../../storage/lru.ts";
import { StorageError, type ObjectStore } from "../../storage/object-store.ts";

/**
 * The key of a stored pack file, under the prefix of the repository that stored it (a pack row's
 * `storageRepoId`: a fork's rows name the parent's files).
 */
export function packKey(storageRepoId: string, name: string, ext: "pack" | "idx"): string {
  return `repos/${storageRepoId}/packs/pack-${name}.${ext}`;
}

/** Packs openPackCopies downloads at once. */
export const COPY_CONCURRENCY = 4;

/** How a GitStore's budget is split, in sixteenths (they add up to 16). */
export interface CacheShares {
  blocks: number;
  deltaBases: number;
  idx: number;
  midx: number;
  reach: number;
}

/**
 * Process-wide caches over the object store: parsed idx files, pack blocks, delta bases, and
 * multi-pack indexes of recent pack sets, reachability indexes of recent tip sets. They share one
 * budget in bytes (SVC_GIT_CACHE), split as 5/16 pack blocks, 1/8 delta bases, 1/4 idx files,
 * 1/4 multi-pack indexes, 1/16 reachability indexes, each entry weighed by what it holds (tables built after it was cached included). Why a bound in bytes that the
 * operator sets: what these caches hold stays in the process between requests, and the
 * collector lets a request's garbage grow in proportion to what the process already holds, so
 * each cached byte costs about two of peak memory.
 */
export class GitStore {
  readonly blocks: BlockCache;
  readonly deltaBases: DeltaBaseCache;
  private readonly idx: ByteLru<string, PackIndex>;
  /** Multi-pack indexes of recent pack sets (walks and pack writing name objects by their positions). */
  readonly multiPackIndexes: ByteLru<string, MultiPackIndex>;
  /** Reachability indexes by repository and tip set; the next one of a repository is built from them. */
  readonly reach: ByteLru<string, ReachIndex>;
  /** Peeled tags by object id, shared by every repository (ids name content). */
  readonly peeled = new PeelCache();
  /** Per repository, the keys of its latest indexes (newest first, at most 3). */
  private readonly recentReach = new Map<string, string[]>();
  private readonly loading = new Map<string, Promise<PackIndex>>();
  private readonly reachBuilds = new Map<string, Promise<ReachIndex>>();

  constructor(
    readonly store: ObjectStore,
    cacheBytes: number,
    /** Sixteenths of the budget for blocks, delta bases, idx files, multi-pack indexes and reachability indexes (default 5, 2, 4, 4, 1). */
    shares: CacheShares = { blocks: 5, deltaBases: 2, idx: 4, midx: 4, reach: 1 },
  ) {
    const sixteenth = Math.floor(cacheBytes / 16);
    // Against a bucket a request costs far more than the bytes it carries: larger blocks take a
    // walk's neighbouring entries in one request (a cold fetch of git.git: 92 requests instead of
    // 148, 35 MiB read instead of 26; bench/README.md).
    const blockSize = store.kind === "fs" ? 64 * 1024 : 256 * 1024;
    this.blocks = new BlockCache(store, { blockSize, maxBytes: Math.max(blockSize, shares.blocks * sixteenth) });
    this.deltaBases = new DeltaBaseCache(shares.deltaBases * sixteenth);
    this.idx = new ByteLru<string, PackIndex>(shares.idx * sixteenth, (v) => v.footprint);
    this.multiPackIndexes = new ByteLru<string, MultiPackIndex>(shares.midx * sixteenth, (v) => 1024 + v.footprint);
    this.reach = new ByteLru<string, ReachIndex>(shares.reach * sixteenth, (v) => v.footprint);
    countHeldBytes(this);
  }

  /** Bytes all these caches hold together (live data: memory pacing does not count it as garbage). */
  heldBytes(): number {
    return this.blocks.cachedBytes + this.deltaBases.size + this.idx.bytes + this.multiPackIndexes.bytes + this.reach.bytes;
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
   * Uploads a pack from local files, the `.pack` and the `.idx` side by side (against a bucket
   * each costs round trips; nothing reads either file before the pack's row commits, and a
   * failure leaves at most an orphan the sweep removes), then caches the idx so the next
   * snapshot needs no read. Resolves once both are durably stored. The one upload path of
   * publish (push, commit API, ref API) and maintenance; the pack is visible only once its row
   * commits.
   */
  async storePack(repoId: string, pack: { name: string; packPath: string; idxPath: string }): Promise<void> {
    const uploads = [
      this.store.putFile(packKey(repoId, pack.name, "pack"), pack.packPath),
      this.store.putFile(packKey(repoId, pack.name, "idx"), pack.idxPath),
    ];
    // Both settle before a failure is thrown: nothing of this pack is still being written after.
    const settled = await Promise.allSettled(uploads);
    for (const s of settled) if (s.status === "rejected") throw s.reason;
    this.idx.set(packKey(repoId, pack.name, "idx"), PackIndex.parse(await Bun.file(pack.idxPath).bytes()));
  }

  /**
   * Opens one stored pack for reading (with its reachability record, when it has one). Keyed by
   * where the files live, so a parent and its forks share one cached copy of a shared pack.
   */
  async openPack(row: { storageRepoId: string; name: string; size: number; reachTips?: string | null }): Promise<Pack> {
    const idx = await this.packIndex(packKey(row.storageRepoId, row.name, "idx"));
    const pack = new Pack(
      `${row.storageRepoId}/${row.name}`,
      idx,
      engineSource(this.blocks.source(packKey(row.storageRepoId, row.name, "pack"), row.size)),
      this.deltaBases,
    );
    if (row.reachTips) pack.reachTips = row.reachTips.split("\n");
    return pack;
  }

  /**
   * Opens stored packs for reading every byte of them, often more than once (maintenance, and a
   * whole-repository clone of several packs): from object storage each is first downloaded whole
   * into `tmpDir` (a few large streamed reads instead of thousands of small ranged ones, up to
   * COPY_CONCURRENCY packs at once); the fs store's packs are read in place. Reachability records
   * come along as in openPack. close() removes the copies.
   */
  async openPackCopies(
    rows: { storageRepoId: string; name: string; size: number; reachTips?: string | null }[],
    tmpDir: string,
  ): Promise<{ packs: Pack[]; close(): Promise<void> }> {
    if (this.store.kind === "fs") return { packs: await Promise.all(rows.map((row) => this.openPack(row))), close: async () => {} };
    const opened: { source: Awaited<ReturnType<typeof openFileSource>>; path: string }[] = [];
    const close = async () => {
      for (const o of opened.splice(0)) {
        await o.source.close();
        await rm(o.path, { force: true });
      }
    };
    const copy = async (row: (typeof rows)[number]): Promise<Pack> => {
      const idx = await this.packIndex(packKey(row.storageRepoId, row.name, "idx"));
      const path = join(tmpDir, `copy-${row.name}-${process.pid}-${Math.random().toString(36).slice(2)}.pack`);
      const file = await open(path, "w");
      try {
        for await (const chunk of this.blocks.stream(packKey(row.storageRepoId, row.name, "pack"), row.size, 0, row.size)) {
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
      const pack = new Pack(`${row.storageRepoId}/${row.name}`, idx, source, this.deltaBases);
      if (row.reachTips) pack.reachTips = row.reachTips.split("\n");
      return pack;
    };
    // Why in parallel: one pack's stream keeps a few ranged reads in flight; twelve packs one
    // after the other wait out each one's first and last round trips in turn.
    const packs: Pack[] = new Array(rows.length);
    let next = 0;
    let failing = false;
    const worker = async (): Promise<void> => {
      while (next < rows.length && !failing) {
        const i = next++;
        packs[i] = await copy(rows[i]!).catch((err: unknown) => {
          failing = true;
          throw err;
        });
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: Math.min(COPY_CONCURRENCY, rows.length) }, worker));
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) {
      await close();
      throw (failed as PromiseRejectedResult).reason;
    }
    return { packs, close };
  }

  /**
   * The reachability index of `repoId`'s `tips` over `objects`: the cached one when the tips are
   * the same, else built (from the repository's previous index when its tips still reach it) by
   * one walk that concurrent requests share. Reads by id call it; reads by ref name never do.
   */
  async reachIndex(repoId: string, objects: PackSet, tips: Oid[]): Promise<ReachIndex> {
    // The tips as the caller lists them (refs by name, then change heads in order): the same set
    // listed otherwise is only a miss, and sorting a thousand refs per request cost more than the rest.
    const key = `${repoId}\n${tips.join("\n")}`;
    const cached = this.reach.get(key);
    if (cached) return cached;
    let p = this.reachBuilds.get(key);
    if (!p) {
      // The repository's recent indexes (a request still on the snapshot before a push asks for
      // the older tips): any of them whose tips the new ones still reach saves the walk.
      const recent = (this.recentReach.get(repoId) ?? []).map((k) => this.reach.get(k)).filter((x) => x !== undefined);
      p = ReachIndex.build(objects, tips, { previous: recent })
        .then((index) => {
          this.reach.set(key, index);
          // At most three per repository: an index may hold the idx of a pack GC has replaced.
          const keys = [key, ...(this.recentReach.get(repoId) ?? []).filter((k) => k !== key && this.reach.has(k))];
          for (const old of keys.splice(3)) this.reach.delete(old);
          this.recentReach.delete(repoId);
          this.recentReach.set(repoId, keys);
          if (this.recentReach.size > 10_000) this.recentReach.delete(this.recentReach.keys().next().value!);
          return index;
        })
        .finally(() => this.reachBuilds.delete(key));
      this.reachBuilds.set(key, p);
    }
    return p;
  }

  /** Bytes each cache holds now (the process_ metrics report them). */
  cacheBytes(): Record<"pack_blocks" | "delta_bases" | "pack_indexes" | "multi_pack_indexes" | "reach_indexes", number> {
    return {
      pack_blocks: this.blocks.cachedBytes,
      delta_bases: this.deltaBases.size,
      pack_indexes: this.idx.bytes,
      multi_pack_indexes: this.multiPackIndexes.bytes,
      reach_indexes: this.reach.bytes,
    };
  }

  /** Forgets cached bytes of a deleted pack (by the repository whose prefix held it). */
  evict(storageRepoId: string, name: string): void {
    this.idx.delete(packKey(storageRepoId, name, "idx"));
    this.blocks.evict(packKey(storageRepoId, name, "pack"));
  }
}

export const UNAVAILABLE = "object storage is unavailable (it kept failing after retries); try again later";

/** Whether `err` is the storage layer giving up after its retries. */
export function isUnavailable(err: unknown): boolean {
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
