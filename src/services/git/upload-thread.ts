// The pack of a large fetch, generated on a worker thread (task "git.uploadPack" in
// src/thread-tasks.ts). Why: listing a history and writing its pack is seconds of CPU for a big
// repository; on the event loop it stalls every other request. The thread opens the snapshot's
// packs through its own object store and caches, runs the same createPackFile as the event loop
// would, and emits the response bytes (whole side-band packets, about 256 KiB at a time) that
// the event loop only writes to the client (services/git/upload.ts), with the pool's credit
// backpressure: a slow client slows the thread, it never fills memory.
//
// Pure function of its input plus what the thread builds for itself (the store and caches,
// kept between tasks): importable on a thread, no ctx.
import { createPackFile, packSink, type PackJob } from "../../git/create-pack-file.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import type { Ref } from "../../git/types.ts";
import type { StorageConfig } from "../../config.ts";
import type { ObjectStore } from "../../storage/object-store.ts";
import type { TaskIo } from "../../util/thread-pool.ts";
import { GitStore } from "./git-store.ts";
import type { PackRow } from "./store.ts";

/** How a thread reaches the object store, and the share of SVC_GIT_CACHE its caches may hold. */
export interface ThreadStoreConfig {
  storage: StorageConfig;
  cacheBytes: number;
}

/** Input of "git.uploadPack": the snapshot as rows (refs and packs) and the pack to send. */
export interface UploadPackTaskInput {
  store: ThreadStoreConfig;
  refs: Ref[];
  head: string | null;
  packs: PackRow[];
  job: PackJob;
}

/** Output of "git.uploadPack": objects sent. Each emitted value is an ArrayBuffer of response bytes. */
export interface UploadPackTaskResult {
  objects: number;
}

/** Bytes gathered before one emit: few messages per clone, little held per request. */
const EMIT_BYTES = 256 * 1024;

let threadStore: { key: string; git: Promise<GitStore> } | null = null;

/** This thread's git store for `config` (built on first use and kept; rebuilt if the config differs). */
export function threadGitStore(config: ThreadStoreConfig): Promise<GitStore> {
  const key = JSON.stringify(config);
  if (threadStore?.key !== key) threadStore = { key, git: openStore(config) };
  return threadStore.git;
}

async function openStore(config: ThreadStoreConfig): Promise<GitStore> {
  let store: ObjectStore;
  if (config.storage.kind === "fs") {
    store = (await import("../../storage/fs-store.ts")).createFsStore(config.storage.root);
  } else {
    // Loaded only for S3: the client's modules cost a thread hundreds of milliseconds to load.
    const { kind: _kind, ...s3 } = config.storage;
    store = await (await import("../../storage/s3-store.ts")).createS3Store(s3);
  }
  return new GitStore(store, config.cacheBytes);
}

/** The task: list and write the pack of `input.job`, emitting the response bytes. */
export async function uploadPackTask(input: UploadPackTaskInput, io: TaskIo): Promise<UploadPackTaskResult> {
  const git = await threadGitStore(input.store);
  const packs = await Promise.all(input.packs.map((row) => git.openPack(row)));
  const snapshot: RepoSnapshot = { refs: input.refs, head: input.head, objects: new PackSet(packs, git.multiPackIndexes) };
  const out = new EmitBuffer(io);
  // Keep-alives come from the event loop while this thread lists (it may not yield for seconds).
  const objects = await createPackFile(snapshot, input.job.request, input.job.options, packSink(out.write, input.job.options), { keepalive: false });
  await out.flush();
  return { objects };
}

/** Gathers whole writes into buffers of about EMIT_BYTES, emitted (transferred) in order. */
class EmitBuffer {
  private parts: Uint8Array[] = [];
  private bytes = 0;

  constructor(private readonly io: TaskIo) {}

  readonly write = async (chunk: Uint8Array): Promise<void> => {
    this.parts.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes >= EMIT_BYTES) await this.flush();
  };

  async flush(): Promise<void> {
    if (this.bytes === 0) return;
    const buf = new Uint8Array(this.bytes);
    let at = 0;
    for (const p of this.parts) {
      buf.set(p, at);
      at += p.length;
    }
    this.parts = [];
    this.bytes = 0;
    await this.io.emit(buf.buffer, [buf.buffer]);
  }
}
