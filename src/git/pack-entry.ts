// Pack entry headers (gitformat-pack, "Pack file format"):
//
//   Each object entry starts with a variable-length header: the first byte holds
//   1 bit "more", 3 bits type, 4 bits size; each following byte 1 bit "more", 7 bits size
//   (little-endian groups). Types: 1 commit, 2 tree, 3 blob, 4 tag, 6 ofs-delta, 7 ref-delta.
//   ofs-delta: then a negative offset to the base, big-endian 7-bit groups where each
//   continuation adds 1 ("offset encoding: n bytes with MSB set in all but the last one").
//   ref-delta: then the 20-byte base object name. Then the zlib-deflated data.
import { bytesToHex } from "./oid.ts";
import { GitError, type ObjectType, type Oid } from "./types.ts";

/** Entry type code of a commit. */
export const OBJ_COMMIT = 1;
/** Entry type code of a tree. */
export const OBJ_TREE = 2;
/** Entry type code of a blob. */
export const OBJ_BLOB = 3;
/** Entry type code of a tag. */
export const OBJ_TAG = 4;
/** Entry type code of a delta against an earlier entry named by offset. */
export const OBJ_OFS_DELTA = 6;
/** Entry type code of a delta against an object named by oid. */
export const OBJ_REF_DELTA = 7;

const TYPE_NAMES: readonly (ObjectType | undefined)[] = [undefined, "commit", "tree", "blob", "tag"];
const TYPE_CODES: Readonly<Record<ObjectType, number>> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** Object type for a non-delta type code (throws GitError for others). */
export function typeName(code: number): ObjectType {
  const t = TYPE_NAMES[code];
  if (!t) throw new GitError(`invalid object type ${code} in pack`);
  return t;
}

/** Pack type code (1..4) of an object type. */
export function typeCode(type: ObjectType): number {
  return TYPE_CODES[type];
}

/** A decoded entry header. */
export interface EntryHeader {
  typeCode: number;
  /** Inflated size of the entry data (for a delta: the delta's size). */
  size: number;
  headerLength: number;
  /** For OFS_DELTA: the distance back to the base (entry offset - base offset). */
  baseDistance?: number;
  baseOid?: Oid;
}

/**
 * Decode an entry header from `buf` at `pos`; returns null when `buf` ends before the header
 * does (a streaming caller then waits for more bytes). Throws GitError on a malformed header.
 */
export function decodeEntryHeader(buf: Uint8Array, pos: number, end = buf.length): EntryHeader | null {
  const start = pos;
  if (pos >= end) return null;
  let c = buf[pos++]!;
  const code = (c >> 4) & 7;
  let size = c & 15;
  let mult = 16;
  while (c & 0x80) {
    if (pos >= end) return null;
    if (mult > 2 ** 56) throw new GitError("corrupt pack: entry size too large");
    c = buf[pos++]!;
    size += (c & 0x7f) * mult;
    mult *= 128;
  }
  if (code === OBJ_OFS_DELTA) {
    if (pos >= end) return null;
    c = buf[pos++]!;
    let dist = c & 0x7f;
    while (c & 0x80) {
      if (pos >= end) return null;
      if (dist > 2 ** 45) throw new GitError("corrupt pack: delta base offset overflow");
      c = buf[pos++]!;
      dist = (dist + 1) * 128 + (c & 0x7f);
    }
    return { typeCode: code, size, headerLength: pos - start, baseDistance: dist };
  }
  if (code === OBJ_REF_DELTA) {
    if (pos + 20 > end) return null;
    return { typeCode: code, size, headerLength: pos + 20 - start, baseOid: bytesToHex(buf, pos, 20) };
  }
  if (code < 1 || code > 4) throw new GitError(`corrupt pack: invalid object type ${code}`);
  return { typeCode: code, size, headerLength: pos - start };
}

/** Encode the type+size part of an entry header. */
export function encodeTypeSize(code: number, size: number): Uint8Array {
  const out: number[] = [];
  let c = (code << 4) | (size & 15);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    out.push(c | 0x80);
    c = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  out.push(c);
  return Uint8Array.from(out);
}

/** Encode an OFS_DELTA base distance. */
export function encodeOfsDistance(dist: number): Uint8Array {
  const out: number[] = [dist & 0x7f];
  let d = Math.floor(dist / 128);
  while (d > 0) {
    d -= 1;
    out.unshift(0x80 | (d & 0x7f));
    d = Math.floor(d / 128);
  }
  return Uint8Array.from(out);
}
