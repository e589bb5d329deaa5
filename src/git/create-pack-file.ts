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
import { streamBytes, type Pack } from "./pack-reader.ts";
import { packObjects } from "./pack-writer.ts";
import { FLUSH_PKT } from "./pkt-line.ts";
import { peelRefs, type RepoSnapshot } from "./repo-snapshot.ts";
import { CommitCache } from "./revision.ts";
import { SidebandWriter } from "./sideband.ts";
import type { Oid } from "./types.ts";
import { type CollectRequest, collectObjects } from "./walk.ts";

/** Pack options negotiated by the client. */
export interface PackOptions {
  thinPack: boolean;
  ofsDelta: boolean;
  includeTag: boolean;
  noProgress: boolean;
  /** 0 for a raw pack, else the side-band packet size (1000 or 65520). */
  sideband: number;
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
const KEEPALIVE_PKT = new Uint8Array([0x30, 0x30, 0x30, 0x35, 0x01]);

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

/** Bytes read per step when a stored pack is streamed as it is: small, so many concurrent clones stay cheap. */
const STREAM_CHUNK = 256 * 1024;

/**
 * The stored pack that answers `req` as it is, or null. Every object reachable from the refs is in
 * some live pack, so when there is exactly one, a full clone (wants covering every ref tip; no
 * haves, shallow, deepen or filter) is that pack, possibly with a few unreachable objects extra,
 * which git accepts. No listing, no copying: the stored bytes go out as they are.
 */
function wholePackClone(snapshot: RepoSnapshot, req: CollectRequest, opts: PackOptions): Pack | null {
  if (!opts.ofsDelta || req.haves.length || req.shallow.length || req.depth || req.deepenSince || req.deepenNot?.length || req.filter) return null;
  if (snapshot.objects.packs.length !== 1) return null;
  const pack = snapshot.objects.packs[0]!;
  const wants = new Set(req.wants);
  for (const ref of snapshot.refs) if (!wants.has(ref.oid)) return null;
  for (const w of wants) if (pack.idx.find(w) < 0) return null;
  return pack;
}

/** Compute and stream the pack for `req`; returns the number of objects sent. */
export async function createPackFile(
  snapshot: RepoSnapshot,
  req: CollectRequest,
  opts: PackOptions,
  sink: PackSink,
): Promise<number> {
  const whole = wholePackClone(snapshot, req, opts);
  if (whole) {
    await sink.progress(`Enumerating objects: ${whole.idx.count}, done.\n`);
    for await (const chunk of streamBytes(whole.source, 0, whole.source.size, STREAM_CHUNK)) await sink.data(chunk);
    await sink.progress(`Total ${whole.idx.count}\n`);
    await sink.end();
    return whole.idx.count;
  }
  sink.keepalive(true);
  let oids: Oid[];
  let bases: Set<Oid>;
  try {
    const listed = await collectObjects(snapshot.objects, req);
    oids = listed.oids;
    bases = listed.bases;
    if (opts.includeTag) oids = [...(await tagsToInclude(snapshot, oids)), ...oids];
  } finally {
    sink.keepalive(false);
  }
  await sink.progress(`Enumerating objects: ${oids.length}, done.\n`);
  // Why no thin pack under a filter: a partial clone may lack the blobs we would delta against.
  const thinBases = opts.thinPack && !req.filter ? bases : undefined;
  for await (const chunk of packObjects(snapshot.objects, oids, { ofsDelta: opts.ofsDelta, thinBases })) {
    await sink.data(chunk);
  }
  await sink.progress(`Total ${oids.length}\n`);
  await sink.end();
  return oids.length;
}

/** Tag objects (with nested tags) under refs/tags/ whose peeled object is being sent. */
async function tagsToInclude(snapshot: RepoSnapshot, oids: Oid[]): Promise<Oid[]> {
  const sent = new Set(oids);
  const cache = new CommitCache(snapshot.objects);
  const extra: Oid[] = [];
  for (const ref of await peelRefs(snapshot)) {
    if (!ref.name.startsWith("refs/tags/") || !ref.peeled || sent.has(ref.oid) || !sent.has(ref.peeled)) continue;
    const p = await cache.peel(ref.oid);
    for (const t of p?.tags ?? []) {
      if (sent.has(t)) continue;
      sent.add(t);
      extra.push(t);
    }
  }
  return extra;
}
