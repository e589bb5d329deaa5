// A set of object ids kept as raw 20-byte keys in typed arrays (open addressing, linear
// probing): about 28 bytes per id, no string or object per id. Used where a walk or a push
// meets millions of ids, most of them repeats (the tree entries of a history).
import { copyBytes } from "./bytes.ts";
import { bytesToHex, hexInto } from "./oid.ts";
import type { Oid } from "./types.ts";

/** Raw 20-byte object ids, each kept once; ids get dense numbers 0..size-1 in insertion order. */
export class OidSet {
  /** 20 bytes per id, in insertion order. */
  private keys: Uint8Array;
  /** Slot → id number + 1 (0 = empty). */
  private slots: Int32Array;
  private mask: number;
  private count = 0;
  private readonly scratch = new Uint8Array(20);

  constructor(expected = 1024) {
    let cap = 16;
    while (cap < expected * 2) cap *= 2;
    this.slots = new Int32Array(cap);
    this.mask = cap - 1;
    this.keys = new Uint8Array(20 * Math.max(8, expected));
  }

  /** Number of ids in the set. */
  get size(): number {
    return this.count;
  }

  /** Add the id stored at `bytes[at..at+20)`; returns its number (new or existing). */
  add(bytes: Uint8Array, at: number): number {
    const found = this.lookup(bytes, at);
    if (found >= 0) return found;
    if (2 * (this.count + 1) > this.slots.length) this.rehash(this.slots.length * 2);
    if (20 * (this.count + 1) > this.keys.length) {
      const next = new Uint8Array(this.keys.length * 2);
      next.set(this.keys);
      this.keys = next;
    }
    const n = this.count++;
    copyBytes(bytes, at, at + 20, this.keys, 20 * n);
    this.place(n);
    return n;
  }

  /** Add a hex id (40 lowercase characters). */
  addHex(oid: Oid): number {
    hexInto(oid, this.scratch, 0);
    return this.add(this.scratch, 0);
  }

  /** Add an id written as 40 hex digits (ASCII, either case) at `text[at..at+40)`, as in a commit's header. */
  addHexAt(text: Uint8Array, at: number): number {
    const out = this.scratch;
    for (let i = 0; i < 20; i++) out[i] = (hexNibble(text[at + 2 * i]!) << 4) | hexNibble(text[at + 2 * i + 1]!);
    return this.add(out, 0);
  }

  /** The set as transferable parts (it crosses threads without a copy); the set is unusable after. */
  export(): { keys: Uint8Array; slots: Int32Array; count: number } {
    return { keys: this.keys, slots: this.slots, count: this.count };
  }

  /** A set from `export()`'s parts. */
  static from(parts: { keys: Uint8Array; slots: Int32Array; count: number }): OidSet {
    const set = new OidSet(1);
    set.keys = parts.keys;
    set.slots = parts.slots;
    set.mask = parts.slots.length - 1;
    set.count = parts.count;
    return set;
  }

  /** True when the id at `bytes[at..at+20)` is in the set. */
  has(bytes: Uint8Array, at: number): boolean {
    return this.lookup(bytes, at) >= 0;
  }

  /** The number of the id at `bytes[at..at+20)`, or -1. */
  lookup(bytes: Uint8Array, at: number): number {
    const keys = this.keys;
    let s = hashAt(bytes, at) & this.mask;
    for (;;) {
      const v = this.slots[s]!;
      if (v === 0) return -1;
      const p = 20 * (v - 1);
      let j = 0;
      while (j < 20 && keys[p + j] === bytes[at + j]) j++;
      if (j === 20) return v - 1;
      s = (s + 1) & this.mask;
    }
  }

  /** The raw bytes of id number `n` (a view; do not modify). */
  bytesOf(n: number): Uint8Array {
    return this.keys.subarray(20 * n, 20 * n + 20);
  }

  /** The underlying key table: id `n` is at `[20n, 20n+20)`. */
  get table(): Uint8Array {
    return this.keys;
  }

  /** Id number `n` as hex. */
  hexOf(n: number): Oid {
    return bytesToHex(this.keys, 20 * n, 20);
  }

  private place(n: number): void {
    let s = hashAt(this.keys, 20 * n) & this.mask;
    while (this.slots[s] !== 0) s = (s + 1) & this.mask;
    this.slots[s] = n + 1;
  }

  private rehash(cap: number): void {
    this.slots = new Int32Array(cap);
    this.mask = cap - 1;
    for (let n = 0; n < this.count; n++) this.place(n);
  }
}

function hexNibble(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

/** Object ids are SHA-1 output: four of their bytes are as good a hash as any. */
function hashAt(b: Uint8Array, at: number): number {
  return ((b[at + 4]! << 24) | (b[at + 5]! << 16) | (b[at + 6]! << 8) | b[at + 7]!) >>> 0;
}
