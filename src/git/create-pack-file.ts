// Sending the packfile of an upload-pack response (git's create_pack_file): list the objects,
// add the tags of include-tag, and stream the stored entries, multiplexed when side-band is on.
//
// From gitprotocol-pack(5):
//
//   "include-tag": If the local side is fetching and the remote side has an annotated
//   tag whose peeled object is being sent, the tag object is sent too.
//
//   "thin-pack": the server may send a pack with deltas against objects the client
//   has (REF_DELTA bases outside the pack); the client completes it.
//
//   "A keep-alive packet is an empty band-1 packet ("0005\1")" sent while the
//   server is busy before pack data is ready.
import { listObjects, SEND, type ObjectList } from "./object-list.ts";
import { OBJ_TAG } from "./pack-entry.ts";
import { writePack } from "./pack-writer.ts";
import { FLUSH_PKT } from "./pkt-line.ts";
import { peelRefs, type RepoSnapshot } from "./repo-snapshot.ts";
import { CommitCache } from "./revision.ts";
import { encodeSideband, SidebandWriter } from "./sideband.ts";
import type { CollectRequest } from "./walk.ts";
import type { WorkBudget } from "./work-budget.ts";

/** Pack options negotiated by the client. */
export interface PackOptions {
  thinPack: boolean;
  ofsDelta: boolean;
  includeTag: boolean;
  noProgress: boolean;
  /** 0 for a raw pack, else the side-band packet size (1000 or 65520). */
  sideband: number;
}

/**
 * One pack to send: what to list and how to send it. Structured-cloneable, so a worker thread can
 * run it (services/git/upload-thread.ts).
 */
export interface PackJob {
  request: CollectRequest;
  options: PackOptions;
}

/**
 * Lists and streams the pack of `job` through `write`: side-band packets ending with a
 * flush-pkt (or the raw pack without side-band), each write whole packets. Returns the number of
 * objects sent; a GitError it throws is reported to the client by the caller (band 3).
 */
export type Packer = (job: PackJob, write: (chunk: Uint8Array) => Promise<void>) => Promise<number>;

/** The packer that runs in this thread over `snapshot`. */
export function localPacker(snapshot: RepoSnapshot): Packer {
  return (job, write) => createPackFile(snapshot, job.request, job.options, packSink(write, job.options));
}

/** Writes a fatal error on band 3 (what the client prints before it gives up); nothing without side-band. */
export function bandError(write: (chunk: Uint8Array) => void | Promise<void>, opts: PackOptions): (text: string) => Promise<void> {
  return async (text) => {
    if (opts.sideband === 0) return;
    for (const p of encodeSideband(3, text, opts.sideband)) await write(p);
  };
}

/** Where pack bytes go. */
export interface PackSink {
  data(bytes: Uint8Array): Promise<void>;
  progress(text: string): Promise<void>;
  error(text: string): Promise<void>;
  /** Begin/stop keep-alive packets while the object list is computed. */
  keepalive(on: boolean): void;
  end(): Promise<void>;
}

const KEEPALIVE_MS = 5000;
const KEEPALIVE_PKT: Readonly<Uint8Array> = new Uint8Array([0x30, 0x30, 0x30, 0x35, 0x01]);

/** A sink writing side-band packets (ending with a flush-pkt) or, with sideband 0, the raw pack. */
export function packSink(write: (chunk: Uint8Array) => void | Promise<void>, opts: PackOptions): PackSink {
  if (opts.sideband === 0) {
    return {
      data: async (b) => {
        await write(b);
      },
      progress: async () => {},
      error: async () => {},
      keepalive: () => {},
      end: async () => {},
    };
  }
  const sb = new SidebandWriter(write, opts.sideband);
  let timer: ReturnType<typeof setInterval> | null = null;
  return {
    data: (b) => sb.data(b),
    progress: async (t) => {
      if (!opts.noProgress) await sb.progress(t);
    },
    error: (t) => sb.error(t),
    keepalive(on) {
      if (timer) clearInterval(timer);
      timer = on ? setInterval(() => void write(KEEPALIVE_PKT), KEEPALIVE_MS) : null;
    },
    end: async () => {
      await sb.flushData();
      await write(FLUSH_PKT);
    },
  };
}

/** Options of createPackFile. */
export interface CreatePackOptions {
  /** Give up with OverBudget once this is spent (nothing is written before listing ends). */
  budget?: WorkBudget;
  /** Send keep-alive packets while listing (default true; off where the caller sends them). */
  keepalive?: boolean;
}

/** Compute and stream the pack for `req`; returns the number of objects sent. */
export async function createPackFile(
  snapshot: RepoSnapshot,
  req: CollectRequest,
  opts: PackOptions,
  sink: PackSink,
  how: CreatePackOptions = {},
): Promise<number> {
  const keepalive = how.keepalive !== false;
  if (keepalive) sink.keepalive(true);
  let list: ObjectList;
  try {
    // Why no thin pack under a filter: a partial clone may lack the blobs we would delta against.
    list = await listObjects(snapshot.objects, req, { reachability: true, budget: how.budget, thinBases: opts.thinPack && !req.filter });
    if (opts.includeTag) {
      how.budget?.spend(snapshot.refs.length);
      await includeTags(snapshot, list);
    }
  } finally {
    if (keepalive) sink.keepalive(false);
  }
  await sink.progress(`Enumerating objects: ${list.count}, done.\n`);
  const thin = opts.thinPack && !req.filter;
  for await (const chunk of writePack(list.midx, list.flags, list.count, { ofsDelta: opts.ofsDelta, thin, bases: list.bases, budget: how.budget })) {
    await sink.data(chunk);
  }
  await sink.progress(`Total ${list.count}\n`);
  await sink.end();
  return list.count;
}

/** Mark the tag objects (with nested tags) under refs/tags/ whose peeled object is being sent. */
async function includeTags(snapshot: RepoSnapshot, list: ObjectList): Promise<void> {
  const { midx, flags } = list;
  const sent = (oid: string) => {
    const p = midx.findHex(oid);
    return p >= 0 && (flags[p]! & SEND) !== 0;
  };
  const cache = new CommitCache(snapshot.objects);
  for (const ref of await peelRefs(snapshot)) {
    if (!ref.name.startsWith("refs/tags/") || !ref.peeled || sent(ref.oid) || !sent(ref.peeled)) continue;
    const p = await cache.peel(ref.oid);
    for (const t of p?.tags ?? []) {
      const q = midx.findHex(t);
      if (q < 0 || flags[q]! & SEND) continue;
      flags[q]! |= SEND;
      list.types[q] = OBJ_TAG;
      list.count++;
    }
  }
}
