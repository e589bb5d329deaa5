// Writing packs (gitformat-pack):
//
//   "PACK", version 2, the number of objects, the entries, then "a 20-byte SHA-1 checksum
//   of all of the above". An ofs-delta names its base by "a negative relative offset from
//   the delta object's position in the pack"; a ref-delta by the base's object name. A thin
//   pack may contain ref-deltas against objects the receiver already has.
//
// Serving copies stored entries verbatim (no recompression, no new delta search): a stored
// delta stays a delta when its base is sent too (emitted first, re-pointed by offset or oid)
// or is one of the receiver's thin bases; any other delta is resolved and sent whole.
import { deflate } from "./inflate.ts";
import { hashObject, hexToBytes } from "./oid.ts";
import { encodeOfsDistance, encodeTypeSize, OBJ_OFS_DELTA, OBJ_REF_DELTA, typeCode } from "./pack-entry.ts";
import type { PackIndexEntry } from "./pack-index.ts";
import { streamBytes, type Pack, type PackEntry } from "./pack-reader.ts";
import { PackSet } from "./pack-set.ts";
import { GitError, type Oid, type RawObject } from "./types.ts";

/** Options of packObjects. */
export interface PackObjectsOptions {
  /** The receiver understands OFS_DELTA (else deltas are sent as REF_DELTA). */
  ofsDelta: boolean;
  /** Objects the receiver has: deltas against them may be sent as REF_DELTA (a thin pack). */
  thinBases?: Set<Oid>;
}

const CHUNK = 1 << 20;
const FLUSH = 64 * 1024;
/** Entries hinted ahead of the one being read (prefetch). */
const HINT_AHEAD = 512;

/** How one object is sent. */
interface Planned {
  oid: Oid;
  pack: Pack;
  entry: PackEntry;
  /** "copy": stored entry as is; "delta": stored delta re-pointed at `base`; "whole": resolved and deflated. */
  kind: "copy" | "delta" | "whole";
  base?: Oid;
}

/** Stream a pack of exactly `oids` (deduplicated) from `set`, copying stored entries verbatim. */
export async function* packObjects(set: PackSet, oids: Iterable<Oid>, opts: PackObjectsOptions): AsyncIterable<Uint8Array> {
  const wanted = new Set(oids);
  const whole = opts.ofsDelta ? wholePack(set, wanted) : null;
  if (whole) {
    yield* streamRange(whole, 0, whole.source.size);
    return;
  }
  const plan = new Map<Oid, Planned>();
  // Entry headers are read one by one: when the packs take hints (object storage), the next
  // HINT_AHEAD entries are kept coming meanwhile.
  const hints = set.packs.some((p) => p.source.prefetch) ? wanted.values() : null;
  let hinted = 0;
  let i = 0;
  for (const oid of wanted) {
    if (hints && hinted < wanted.size && hinted - i < HINT_AHEAD / 2) {
      const batch: Oid[] = [];
      while (batch.length < HINT_AHEAD) {
        const next = hints.next();
        if (next.done) break;
        batch.push(next.value);
      }
      hinted += batch.length;
      set.prefetch(batch, false);
    }
    i++;
    const at = set.locate(oid);
    if (!at) throw new GitError(`object ${oid} is missing`);
    const entry = await at.pack.entryAt(at.offset);
    const p: Planned = { oid, pack: at.pack, entry, kind: "copy" };
    if (entry.typeCode === OBJ_OFS_DELTA || entry.typeCode === OBJ_REF_DELTA) {
      const base = entry.baseOid ?? at.pack.idx.oidAtOffset(entry.baseOffset!);
      if (base === null) throw new GitError(`pack ${at.pack.name}: no object at delta base offset ${entry.baseOffset}`);
      p.base = base;
      p.kind = wanted.has(base) || opts.thinBases?.has(base) ? "delta" : "whole";
    }
    plan.set(oid, p);
  }

  const out = new PackStream(wanted.size);
  yield* out.drain();
  const written = new Map<Oid, number>();
  const sequence = order(plan);
  hinted = 0;
  for (let n = 0; n < sequence.length; n++) {
    if (hints && hinted < sequence.length && hinted - n < HINT_AHEAD / 2) {
      const batch = new Map<Pack, number[]>();
      for (const q of sequence.slice(hinted, hinted + HINT_AHEAD)) {
        // Entries sent whole are read resolved: their bases are needed too.
        if (q.kind === "whole") q.pack.prefetch([q.entry.offset], true);
        else batch.set(q.pack, [...(batch.get(q.pack) ?? []), q.entry.offset]);
      }
      for (const [pack, offsets] of batch) pack.prefetch(offsets, false);
      hinted += HINT_AHEAD;
    }
    const p = sequence[n]!;
    const at = out.position;
    written.set(p.oid, at);
    const dataStart = p.entry.offset + p.entry.headerLength;
    if (p.kind === "whole") {
      const obj = await p.pack.readAt(p.entry.offset);
      out.push(encodeTypeSize(typeCode(obj.type), obj.data.length));
      out.push(deflate(obj.data));
      yield* out.drain();
      continue;
    }
    if (p.kind === "copy") {
      out.push(encodeTypeSize(p.entry.typeCode, p.entry.size));
    } else {
      const baseAt = written.get(p.base!);
      if (baseAt !== undefined && opts.ofsDelta) {
        out.push(encodeTypeSize(OBJ_OFS_DELTA, p.entry.size));
        out.push(encodeOfsDistance(at - baseAt));
      } else {
        out.push(encodeTypeSize(OBJ_REF_DELTA, p.entry.size));
        out.push(hexToBytes(p.base!));
      }
    }
    for (let pos = dataStart; pos < p.entry.end; pos += CHUNK) {
      out.push(await p.pack.source.read(pos, Math.min(CHUNK, p.entry.end - pos)));
      yield* out.drain();
    }
  }
  yield* out.finish();
}

/** Stream a pack of every object of `packs` (first pack wins for duplicates), optionally filtered. */
export function mergePacks(packs: Pack[], keep?: (oid: Oid) => boolean): AsyncIterable<Uint8Array> {
  const oids = new Set<Oid>();
  for (const pack of packs) {
    for (let i = 0; i < pack.idx.count; i++) {
      const oid = pack.idx.oidAt(i);
      if (!keep || keep(oid)) oids.add(oid);
    }
  }
  return packObjects(new PackSet(packs), oids, { ofsDelta: true });
}

/** A complete pack built in memory (small packs made by the commit API). */
export function buildPack(objects: RawObject[]): { pack: Uint8Array; checksum: Oid; entries: PackIndexEntry[] } {
  const seen = new Set<Oid>();
  const parts: Uint8Array[] = [];
  const entries: PackIndexEntry[] = [];
  let pos = 12;
  for (const obj of objects) {
    const oid = hashObject(obj.type, obj.data);
    if (seen.has(oid)) continue;
    seen.add(oid);
    const head = encodeTypeSize(typeCode(obj.type), obj.data.length);
    const z = deflate(obj.data);
    const raw = new Uint8Array(head.length + z.length);
    raw.set(head);
    raw.set(z, head.length);
    entries.push({ oid, offset: pos, crc: Bun.hash.crc32(raw) });
    parts.push(raw);
    pos += raw.length;
  }
  const pack = new Uint8Array(pos + 20);
  pack.set(packHeader(entries.length));
  let p = 12;
  for (const part of parts) {
    pack.set(part, p);
    p += part.length;
  }
  const sum = new Bun.CryptoHasher("sha1").update(pack.subarray(0, pos)).digest();
  pack.set(sum, pos);
  return { pack, checksum: sum.toString("hex"), entries };
}

/** The 12-byte pack header. */
export function packHeader(count: number): Uint8Array {
  const h = new Uint8Array(12);
  h.set([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2]);
  new DataView(h.buffer).setUint32(8, count);
  return h;
}

/** A pack of the set holding exactly `wanted` (then its stored bytes are the answer), or null. */
function wholePack(set: PackSet, wanted: Set<Oid>): Pack | null {
  for (const pack of set.packs) {
    if (pack.idx.count !== wanted.size || wanted.size === 0) continue;
    let all = true;
    for (const oid of wanted) {
      if (pack.idx.find(oid) < 0) {
        all = false;
        break;
      }
    }
    if (all) return pack;
  }
  return null;
}

/**
 * Send order: roughly the requested order, but every delta after its base. A base cycle
 * (possible across packs after dedup) is broken by sending one member whole.
 */
function order(plan: Map<Oid, Planned>): Planned[] {
  const out: Planned[] = [];
  const placed = new Set<Oid>();
  for (const start of plan.values()) {
    if (placed.has(start.oid)) continue;
    const path: Planned[] = [];
    const onPath = new Set<Oid>();
    let cur: Planned | undefined = start;
    while (cur && !placed.has(cur.oid)) {
      path.push(cur);
      onPath.add(cur.oid);
      const base: Planned | undefined = cur.kind === "delta" ? plan.get(cur.base!) : undefined;
      if (base && onPath.has(base.oid)) {
        cur.kind = "whole";
        break;
      }
      cur = base;
    }
    for (let i = path.length - 1; i >= 0; i--) {
      out.push(path[i]!);
      placed.add(path[i]!.oid);
    }
  }
  return out;
}

function streamRange(pack: Pack, from: number, to: number): AsyncIterable<Uint8Array> {
  return streamBytes(pack.source, from, to, CHUNK);
}

/** Output side: counts bytes, hashes them, batches small pieces. */
class PackStream {
  position = 0;
  private readonly hash = new Bun.CryptoHasher("sha1");
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;

  constructor(count: number) {
    this.push(packHeader(count));
  }

  push(bytes: Uint8Array): void {
    this.hash.update(bytes);
    this.position += bytes.length;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
  }

  /** Pieces ready to send (only once enough have accumulated). */
  *drain(force = false): Iterable<Uint8Array> {
    if (this.pendingBytes === 0 || (!force && this.pendingBytes < FLUSH)) return;
    const parts = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (parts.length === 1) {
      yield parts[0]!;
      return;
    }
    yield Buffer.concat(parts);
  }

  /** The rest, then the trailer. */
  *finish(): Iterable<Uint8Array> {
    this.pending.push(new Uint8Array(this.hash.digest()));
    this.pendingBytes += 20;
    yield* this.drain(true);
  }
}
