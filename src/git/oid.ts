// Object ids: SHA-1 hashing and hex <-> bytes conversion.
import type { ObjectType, Oid } from "./types.ts";

const HEX = "0123456789abcdef";
const HEX_CHARS = new TextEncoder().encode(HEX);
// module-state: scratch (synchronous, reused by every call; see below)
const HEX_SCRATCH = new Uint8Array(40);
const ASCII = new TextDecoder("latin1");
const OID_RE = /^[0-9a-f]{40}$/;
const encoder = new TextEncoder();

/** SHA-1 of `bytes` as 40 lowercase hex characters. */
export function sha1Hex(bytes: Uint8Array): Oid {
  return new Bun.CryptoHasher("sha1").update(bytes).digest("hex");
}

/** The loose-object header git hashes before the data: "<type> <size>\0". */
export function objectHeader(type: ObjectType, size: number): Uint8Array {
  return encoder.encode(`${type} ${size}\0`);
}

/** The object id git gives to an object of this type and content. */
export function hashObject(type: ObjectType, data: Uint8Array): Oid {
  const h = new Bun.CryptoHasher("sha1");
  h.update(objectHeader(type, data.length));
  h.update(data);
  return h.digest("hex");
}

/** Decode 40 (or any even number of) hex characters into bytes; throws on bad input. */
export function hexToBytes(hex: string): Uint8Array {
  if (hex.length % 2 !== 0) throw new TypeError(`odd-length hex string: ${hex}`);
  const out = new Uint8Array(hex.length / 2);
  hexInto(hex, out, 0);
  return out;
}

/** Decode hex characters into `out` at `offset` (no allocation); throws on bad input. */
export function hexInto(hex: string, out: Uint8Array, offset: number): void {
  const n = hex.length >> 1;
  for (let i = 0; i < n; i++) {
    const hi = hexValue(hex.charCodeAt(2 * i));
    const lo = hexValue(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw new TypeError(`invalid hex string: ${hex}`);
    out[offset + i] = (hi << 4) | lo;
  }
}

/** Encode `length` bytes from `offset` (default: the rest of the array) as lowercase hex. */
export function bytesToHex(bytes: Uint8Array, offset = 0, length = bytes.length - offset): string {
  // One flat string: `s +=` per byte builds a rope of ~20 nodes per oid (~500 bytes of heap
  // until flattened), which dominated the heap of everything that keeps many oids.
  const out = length === 20 ? HEX_SCRATCH : new Uint8Array(2 * length);
  for (let i = 0; i < length; i++) {
    const v = bytes[offset + i]!;
    out[2 * i] = HEX_CHARS[v >> 4]!;
    out[2 * i + 1] = HEX_CHARS[v & 15]!;
  }
  return ASCII.decode(out);
}

/** True for a well-formed object id (40 lowercase hex characters). */
export function isOid(s: unknown): s is Oid {
  return typeof s === "string" && OID_RE.test(s);
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Decodes the id of an object header line `<name><40 lowercase hex>\n` starting at `at` into
 * `key` (20 bytes); false when the line is not there (commit `tree `/`parent `, tag `object `).
 */
export function headerOidInto(data: Uint8Array, at: number, name: string, key: Uint8Array): boolean {
  const start = at + name.length;
  if (start + 41 > data.length || data[start + 40] !== 0x0a) return false;
  for (let i = 0; i < name.length; i++) if (data[at + i] !== name.charCodeAt(i)) return false;
  for (let i = 0; i < 20; i++) {
    const hi = lowerHexValue(data[start + 2 * i]!);
    const lo = lowerHexValue(data[start + 2 * i + 1]!);
    if (hi < 0 || lo < 0) return false;
    key[i] = (hi << 4) | lo;
  }
  return true;
}

function lowerHexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}
