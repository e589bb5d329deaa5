// Where a blame walk (blame.ts) gets the lines of each version of its file.
//
// From packs (a PackSet, what the server reads), a version stored as a delta is kept as the
// delta's instructions over its base version, and its lines are derived from the base's through
// the copies (linesFromDelta): only the lines a delta inserts or cuts are read and hashed. Git
// stores a file's versions as deltas of one another, mostly of the next or previous version, so
// a walk over thousands of versions reads little more than the deltas.
//
// Any other reader: each version is read whole and its lines found against the version the walk
// compares it with (linesOf with `near`).
import { type LineBuilder, LinePool, type Lines, type LineText, lineKey, linesFromDelta, linesOf, type TextLines } from "./blame-lines.ts";
import { parseDelta } from "./delta.ts";
import { inflateExact } from "./inflate.ts";
import { OBJ_BLOB, OBJ_OFS_DELTA, OBJ_REF_DELTA } from "./pack-entry.ts";
import type { Pack } from "./pack-reader.ts";
import { PackSet } from "./pack-set.ts";
import { GitError, type ObjectReader, type Oid } from "./types.ts";

/** A version of the file as the walk reads it: its lines and its size in bytes. */
export interface VersionRead {
  lines: Lines;
  size: number;
}

/** The lines of versions of one file, by blob id. */
export interface VersionLines {
  /**
   * Blob `oid`: null when it is not there, not a blob, or larger than `maxBytes` (refused before
   * its bytes are read). `near`: a blob read before whose lines are likely close to these (the
   * version the walk compares it with).
   */
  read(oid: Oid, maxBytes: number, near?: Oid): Promise<VersionRead | null>;
  /**
   * The lines answered so far are no longer read (the walk calls this between commits): a reader
   * may reuse their memory from now on. Lines answered later stay good until the next call.
   */
  settle?(): void;
}

/** The version reader for `reader`: through delta copies when it is a pack set. */
export function versionLines(reader: ObjectReader): VersionLines {
  return reader instanceof PackSet ? new PackedVersions(reader) : new ReadVersions(reader);
}

/** Reads each version whole (the last few kept: a version is read as a parent, then as the next suspect). */
class ReadVersions implements VersionLines {
  private readonly recent = new Map<Oid, (VersionRead & { lines: TextLines }) | null>();
  constructor(private readonly reader: ObjectReader) {}

  async read(oid: Oid, maxBytes: number, near?: Oid): Promise<VersionRead | null> {
    const hit = this.recent.get(oid);
    if (hit !== undefined) return hit;
    const h = await this.reader.readHeader(oid);
    const obj = h && h.type === "blob" && h.size <= maxBytes ? await this.reader.read(oid) : null;
    const out = obj ? { lines: linesOf(obj.data, (near && this.recent.get(near)?.lines) || undefined), size: obj.data.length } : null;
    this.recent.set(oid, out);
    if (this.recent.size > 32) this.recent.delete(this.recent.keys().next().value!);
    return out;
  }
}

/**
 * One version of a blob as the walk holds it: whole bytes (an object stored whole, or one made
 * whole), or its delta's instructions over its base version (and the delta, whose literal bytes
 * the inserts point into). Its lines are found when it is made.
 */
interface Version {
  size: number;
  data: Uint8Array | null;
  ops: Int32Array | null;
  delta: Uint8Array | null;
  base: Version | null;
  /** Deltas between this version and whole bytes. */
  depth: number;
  lines: Lines;
}

/**
 * Versions at most this many deltas from whole bytes; deeper ones are made whole (bytes read
 * through a version go down its deltas: this bounds a read, whatever depth a pack's chains have).
 */
const MAX_DEPTH = 16;

/**
 * Resolves versions from the packs without writing out their bytes: a version that is a delta
 * is kept as its delta's instructions over its base, its lines derived from the base's
 * (linesFromDelta), and only the bytes of the lines a delta changes are read, through the
 * instructions. Git stores a file's versions as deltas of one another, mostly of the next or
 * the previous version, so a walk over thousands of versions of a large file reads little more
 * than the deltas: writing each version out whole (what Pack.readAt does) cost more than all the
 * rest of the walk, in copies, page faults and collections.
 */
class PackedVersions implements VersionLines {
  /** Versions by pack number × 2^40 + offset, least recently used first. */
  private readonly known = new Map<number, Version>();
  private held = 0;
  private readonly pool = new LinePool();
  /** Where a kept version's bytes are read out to find a whole object's lines against them. */
  private scratch = new Uint8Array(0);
  /** Lines of versions dropped since the last settle(): given to the pool then. */
  private dropped: Lines[] = [];

  constructor(private readonly set: PackSet) {}

  settle(): void {
    for (const l of this.dropped) this.pool.give(l);
    this.dropped = [];
  }

  async read(oid: Oid, maxBytes: number, near?: Oid): Promise<VersionRead | null> {
    const at = this.set.locate(oid);
    if (!at) return null;
    const v = await this.version(this.set.packs.indexOf(at.pack), at.pack, at.offset, maxBytes, near);
    return v ? { lines: v.lines, size: v.size } : null;
  }

  /** The version kept for blob `oid`, if any. */
  private keptVersion(oid: Oid): Version | undefined {
    const at = this.set.locate(oid);
    return at ? this.known.get(this.set.packs.indexOf(at.pack) * OFFSET_LIMIT + at.offset) : undefined;
  }

  /**
   * The blob stored at `offset` of pack `k`: null when it is not a blob or is larger than
   * `maxBytes` (an object stored whole, from its entry's header; a delta, from the delta's).
   * Bases on the way are made whatever their size, as any read of the blob would.
   */
  private async version(k: number, pack: Pack, offset: number, maxBytes: number, near?: Oid): Promise<Version | null> {
    // The chain down to a known version or whole bytes, then made from there up.
    const chain: { offset: number; compressed: Uint8Array; size: number }[] = [];
    let cur = offset;
    let base: Version | undefined;
    for (;;) {
      base = this.get(k * OFFSET_LIMIT + cur);
      if (base) break;
      const { entry, bytes } = await pack.rawEntryAt(cur);
      const compressed = bytes.subarray(entry.headerLength);
      if (entry.typeCode !== OBJ_OFS_DELTA && entry.typeCode !== OBJ_REF_DELTA) {
        if (entry.typeCode !== OBJ_BLOB || (cur === offset && entry.size > maxBytes)) return null;
        const data = inflateExact(compressed, entry.size);
        base = this.put(k * OFFSET_LIMIT + cur, {
          size: data.length,
          data,
          ops: null,
          delta: null,
          base: null,
          depth: 0,
          lines: this.wholeLines(data, near),
        });
        break;
      }
      chain.push({ offset: cur, compressed, size: entry.size });
      if (chain.length > pack.idx.count) throw new GitError(`delta cycle in pack ${pack.name}`);
      cur = pack.baseOffsetOf(entry);
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const d = chain[i]!;
      const delta = inflateExact(d.compressed, d.size);
      let parsed: ReturnType<typeof parseDelta>;
      try {
        parsed = parseDelta(delta, base.size, i === 0 ? maxBytes : Number.POSITIVE_INFINITY);
      } catch (e) {
        if (e instanceof GitError && e.code === "too-large") return null;
        throw e;
      }
      const { resultSize, ops } = parsed;
      const v: Version = { size: resultSize, data: null, ops, delta, base, depth: base.depth + 1, lines: base.lines };
      v.lines = linesFromDelta(base.lines, ops, new VersionText(v), this.pool);
      if (v.depth > MAX_DEPTH) {
        const data = new Uint8Array(v.size);
        readVersion(v, 0, v.size, data, 0);
        Object.assign(v, { data, ops: null, delta: null, base: null, depth: 0 });
      }
      base = this.put(k * OFFSET_LIMIT + d.offset, v);
    }
    // A version kept from before may have been made as a base, whatever its size.
    return base.size > maxBytes ? null : base;
  }

  /**
   * The lines of whole bytes: against the bytes of `near` when it is kept (runs of equal bytes
   * found natively, their lines' keys copied), else every line hashed. A walk meets an object
   * stored whole every 50 versions or so (git's deepest chain), as the version it asks for or as
   * its base: either way within a chain's length of the version it compares it with.
   */
  private wholeLines(data: Uint8Array, near?: Oid): Lines {
    const n = near ? this.keptVersion(near) : undefined;
    if (!n) return bare(linesOf(data));
    let bytes = n.data;
    if (!bytes) {
      if (this.scratch.length < n.size) this.scratch = new Uint8Array(Math.max(n.size, 2 * this.scratch.length));
      readVersion(n, 0, n.size, this.scratch, 0);
      bytes = this.scratch.subarray(0, n.size);
    }
    return bare(linesOf(data, { ...n.lines, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }));
  }

  private get(key: number): Version | undefined {
    const v = this.known.get(key);
    if (v) {
      this.known.delete(key);
      this.known.set(key, v);
    }
    return v;
  }

  private put(key: number, v: Version): Version {
    const old = this.known.get(key);
    if (old) this.held -= sizeOf(old);
    this.known.delete(key);
    this.known.set(key, v);
    this.held += sizeOf(v);
    for (const [k, u] of this.known) {
      if ((this.held <= BUDGET && this.known.size <= MAX_VERSIONS) || u === v) break;
      this.known.delete(k);
      this.held -= sizeOf(u);
      // Its lines are read by no other version (a base's are read only while its result is made).
      this.dropped.push(u.lines);
    }
    return v;
  }
}

/** Copies bytes [from, to) of `v` into `out` at `at`, through its deltas down to whole bytes. */
function readVersion(v: Version, from: number, to: number, out: Uint8Array, at: number): void {
  if (v.data) {
    out.set(v.data.subarray(from, to), at);
    return;
  }
  const ops = v.ops!;
  // The instruction holding `from`.
  let lo = 0;
  let hi = ops.length / 3 - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ops[3 * mid]! <= from) lo = mid;
    else hi = mid - 1;
  }
  for (let j = lo; from < to; j++) {
    const start = ops[3 * j]!;
    const source = ops[3 * j + 2]!;
    const stop = Math.min(to, start + ops[3 * j + 1]!);
    const skip = from - start;
    if (source < 0) out.set(v.delta!.subarray(-1 - source + skip, -1 - source + skip + (stop - from)), at);
    else readVersion(v.base!, source + skip, source + skip + (stop - from), out, at);
    at += stop - from;
    from = stop;
  }
}

/** A version read a line at a time through its deltas (the bytes of one line gathered in a scratch buffer). */
class VersionText implements LineText {
  private scratch = new Uint8Array(256);
  private readonly one = new Uint8Array(1);
  constructor(private readonly v: Version) {}
  get length(): number {
    return this.v.size;
  }
  line(from: number, out: LineBuilder): number {
    // Read on in doubling pieces until a "\n" or the end.
    let have = 0;
    for (let want = 128; ; want *= 2) {
      const to = Math.min(this.v.size, from + have + want);
      if (this.scratch.length < to - from) {
        const next = new Uint8Array(Math.max(2 * this.scratch.length, to - from));
        next.set(this.scratch.subarray(0, have));
        this.scratch = next;
      }
      readVersion(this.v, from + have, to, this.scratch, have);
      const nl = this.scratch.subarray(0, to - from).indexOf(10, have);
      have = to - from;
      if (nl >= 0 || to === this.v.size) {
        const len = nl >= 0 ? nl + 1 : have;
        out.add(from, lineKey(this.scratch, 0, len));
        return from + len;
      }
    }
  }
  byteAt(at: number): number {
    readVersion(this.v, at, at + 1, this.one, 0);
    return this.one[0]!;
  }
}

const OFFSET_LIMIT = 2 ** 40;
/**
 * Versions a walk keeps, and their bytes (whole bytes, deltas, lines) at most. A count first:
 * each version made then drops one, whose line tables a later one takes (LinePool).
 */
const MAX_VERSIONS = 64;
const BUDGET = 32 * 1024 * 1024;

/** Lines without the bytes they were read from. */
const bare = (l: Lines): Lines => ({ starts: l.starts, keys: l.keys });
const sizeOf = (v: Version) =>
  (v.data?.byteLength ?? 0) + (v.delta?.byteLength ?? 0) + (v.ops?.byteLength ?? 0) + v.lines.starts.buffer.byteLength + v.lines.keys.buffer.byteLength + 128;
