// Hand-made packs for tests: entries encoded exactly as given (deltas included).
import { deflateSync } from "node:zlib";
import { hexToBytes } from "../../../src/git/oid.ts";
import { encodeOfsDistance, encodeTypeSize } from "../../../src/git/pack-entry.ts";

export interface CraftEntry {
  /** 1..4, 6 (ofs: `base` is the index of an earlier entry) or 7 (ref: `baseOid`). */
  typeCode: number;
  data: Uint8Array;
  base?: number;
  baseOid?: string;
}

/** A pack of these entries in order, with a correct header and trailer. */
export function craftPack(entries: CraftEntry[], count = entries.length): { pack: Uint8Array; offsets: number[] } {
  const parts: Uint8Array[] = [];
  const header = new Uint8Array(12);
  header.set([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2]);
  new DataView(header.buffer).setUint32(8, count);
  parts.push(header);
  let pos = 12;
  const offsets: number[] = [];
  for (const e of entries) {
    offsets.push(pos);
    const bytes = [encodeTypeSize(e.typeCode, e.data.length)];
    if (e.typeCode === 6) bytes.push(encodeOfsDistance(pos - offsets[e.base!]!));
    if (e.typeCode === 7) bytes.push(hexToBytes(e.baseOid!));
    bytes.push(deflateSync(e.data));
    for (const b of bytes) {
      parts.push(b);
      pos += b.length;
    }
  }
  const body = Buffer.concat(parts);
  const trailer = new Bun.CryptoHasher("sha1").update(body).digest();
  return { pack: Buffer.concat([body, trailer]), offsets };
}
