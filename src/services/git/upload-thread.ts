// The pack of a large fetch, generated on a worker thread (task "git.uploadPack" in
// src/thread-tasks.ts). Why: listing a history and writing its pack is seconds of CPU for a big
// repository; on the event loop it stalls every other request. The thread opens the snapshot's
// packs through its own object store and caches, runs the same createPackFile as the event loop
// would, and writes the response bytes (whole side-band packets) into a spool file the event
// loop created, telling it how far it has written every SPOOL_STEP bytes; the event loop streams
// the file to the client at the client's pace (services/git/upload.ts). So a thread is held for
// as long as the pack takes to make, never for as long as a slow client takes to read it.
//
// Pure function of its input plus what the thread builds for itself (the store and caches,
// kept between tasks): importable on a thread, no ctx.
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { createPackFile, packSink, type PackJob } from "../../git/create-pack-file.ts";
import { PackSet } from "../../git/pack-set.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import type { Oid, Ref } from "../../git/types.ts";
import type { CollectRequest } from "../../git/walk.ts";
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

/**
 * Input of "git.uploadPack": the snapshot as rows (refs and packs), the pack to send, the spool
 * file to write. Lists of ids and refs travel as one string each (toWire): the structured clone of
 * one string is a copy, of 100,000 strings 150-300 ms of the event loop.
 */
export interface UploadPackTaskInput {
  store: ThreadStoreConfig;
  /** "<oid> <name>\n" per ref. */
  refs: string;
  head: string | null;
  packs: PackRow[];
  job: WirePackJob;
  /** An empty file the caller created; the response bytes go there from offset 0. */
  spool: string;
  /**
   * Read the packs from local copies downloaded whole into the spool's directory first (a
   * whole-repository clone of several packs from object storage, see upload.ts).
   */
  copyPacks?: boolean;
}

/** Output of "git.uploadPack": objects sent. */
export interface UploadPackTaskResult {
  objects: number;
}

/** Emitted by "git.uploadPack": the spool file holds this many bytes of whole packets (0 first: the file is open). */
export interface SpoolProgress {
  written: number;
}

/** Bytes written to the spool between two progress messages. */
export const SPOOL_STEP = 1024 * 1024;

/** Sixteenths of a thread's cache budget: 2 pack blocks, 2 delta bases, 8 idx files, 4 multi-pack indexes, no reachability indexes (wants are checked on the event loop). */
const THREAD_CACHE_SHARES = Object.freeze({ blocks: 2, deltaBases: 2, idx: 8, midx: 4, reach: 0 });

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
  // A thread makes the packs of clones and large fetches: listings need every idx and the
  // multi-pack index (re-parsed per request when they do not fit), clones stream stored bytes
  // past the block cache. So half its share goes to idx files.
  return new GitStore(store, config.cacheBytes, THREAD_CACHE_SHARES);
}

/** The task: list and write the pack of `input.job` into the spool file, emitting progress. */
export async function uploadPackTask(input: UploadPackTaskInput, io: TaskIo): Promise<UploadPackTaskResult> {
  const file = await open(input.spool, "r+");
  try {
    await io.emit({ written: 0 } satisfies SpoolProgress);
    const git = await threadGitStore(input.store);
    const opened = input.copyPacks
      ? await git.openPackCopies(input.packs, dirname(input.spool))
      : { packs: await Promise.all(input.packs.map((row) => git.openPack(row))), close: async () => {} };
    try {
      // Not the shared multi-pack-index cache for copies: a cached index holds its packs, and
      // these packs' files are removed when this task ends (the next clone would read them).
      const snapshot: RepoSnapshot = {
        refs: refsFromWire(input.refs),
        head: input.head,
        objects: new PackSet(opened.packs, input.copyPacks ? undefined : git.multiPackIndexes),
      };
      const job = fromWire(input.job);
      const out = new SpoolWriter(file, io);
      // Keep-alives come from the event loop while this thread lists (it may not yield for seconds).
      const objects = await createPackFile(snapshot, job.request, job.options, packSink(out.write, job.options), { keepalive: false });
      await out.flush();
      return { objects };
    } finally {
      await opened.close();
    }
  } finally {
    await file.close();
  }
}

/** A PackJob with every list of ids as one string of 40-hex ids. */
export interface WirePackJob {
  request: Omit<CollectRequest, "wants" | "haves" | "shallow" | "deepenNot" | "tips" | "plan"> & {
    wants: string;
    haves: string;
    shallow: string;
    deepenNot: string;
    tips: string;
    plan: { shallow: string; unshallow: string; grafts: string; extraWants: string } | null;
  };
  options: PackJob["options"];
}

const join = (oids: Iterable<Oid> | undefined): string => (oids ? Array.from(oids).join("") : "");
const split = (ids: string): Oid[] => {
  const out = new Array<Oid>(ids.length / 40);
  for (let i = 0; i < out.length; i++) out[i] = ids.slice(40 * i, 40 * i + 40);
  return out;
};

/** The job as the thread receives it. */
export function toWire(job: PackJob): WirePackJob {
  const { wants, haves, shallow, deepenNot, tips, plan, ...rest } = job.request;
  return {
    request: {
      ...rest,
      wants: join(wants),
      haves: join(haves),
      shallow: join(shallow),
      deepenNot: join(deepenNot),
      tips: join(tips),
      plan: plan ? { shallow: join(plan.shallow), unshallow: join(plan.unshallow), grafts: join(plan.grafts), extraWants: join(plan.extraWants) } : null,
    },
    options: job.options,
  };
}

/** The job the event loop sent (toWire). */
export function fromWire(wire: WirePackJob): PackJob {
  const { wants, haves, shallow, deepenNot, tips, plan, ...rest } = wire.request;
  const request: CollectRequest = {
    ...rest,
    wants: split(wants),
    haves: split(haves),
    shallow: split(shallow),
    deepenNot: split(deepenNot),
    tips: split(tips),
  };
  if (plan)
    request.plan = { shallow: split(plan.shallow), unshallow: split(plan.unshallow), grafts: new Set(split(plan.grafts)), extraWants: split(plan.extraWants) };
  return { request, options: wire.options };
}

/** Refs as one string ("<oid> <name>\n" each; names hold no newline). */
export function refsToWire(refs: Ref[]): string {
  let out = "";
  for (const r of refs) out += `${r.oid} ${r.name}\n`;
  return out;
}

function refsFromWire(text: string): Ref[] {
  const refs: Ref[] = [];
  for (let at = 0; at < text.length; ) {
    const nl = text.indexOf("\n", at);
    refs.push({ oid: text.slice(at, at + 40), name: text.slice(at + 41, nl) });
    at = nl + 1;
  }
  return refs;
}

/** Gathers whole writes into runs of about SPOOL_STEP bytes, appended to the file, each followed by a progress message. */
class SpoolWriter {
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private written = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly io: TaskIo,
  ) {}

  readonly write = async (chunk: Uint8Array): Promise<void> => {
    this.parts.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes >= SPOOL_STEP) await this.flush();
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
    for (let done = 0; done < buf.length; ) done += (await this.file.write(buf, done, buf.length - done, this.written + done)).bytesWritten;
    this.written += buf.length;
    await this.io.emit({ written: this.written } satisfies SpoolProgress);
  }
}
