// The objects a pack's objects point at, gathered while the pack is indexed, so the pack can be
// checked "self-contained and connected" (git index-pack --check-self-contained-and-connected)
// without walking it again: every link of every commit, tree and tag must name an object of the
// pack or one the repository already has. With the new ref values in the pack (or already
// stored) and the stored objects' own closure present, that proves the refs' closure complete.
//
// Links are kept once each, as raw 20-byte ids in an open-addressing table: a history has many
// more tree entries than distinct objects (every version of a tree lists mostly unchanged ids).
import { bytesToHex, hexInto } from "./oid.ts";
import { GitError, type ObjectType } from "./types.ts";

const NL = 0x0a;
const EMPTY = 0;

/** A set of 20-byte object ids, kept as five 32-bit words each (compared word by word). */
export class LinkSet {
  private keys: Uint32Array;
  private used: Uint8Array;
  private mask: number;
  /** Distinct ids held. */
  size = 0;

  constructor(initial = 1 << 16) {
    let cap = 1024;
    while (cap < initial) cap <<= 1;
    this.keys = new Uint32Array(cap * 5);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
  }

  /** Adds the id stored as 20 bytes at `d[a..a+20)`. */
  addRaw(d: Uint8Array, a: number): void {
    const w0 = ((d[a]! << 24) | (d[a + 1]! << 16) | (d[a + 2]! << 8) | d[a + 3]!) >>> 0;
    const w1 = ((d[a + 4]! << 24) | (d[a + 5]! << 16) | (d[a + 6]! << 8) | d[a + 7]!) >>> 0;
    const w2 = ((d[a + 8]! << 24) | (d[a + 9]! << 16) | (d[a + 10]! << 8) | d[a + 11]!) >>> 0;
    const w3 = ((d[a + 12]! << 24) | (d[a + 13]! << 16) | (d[a + 14]! << 8) | d[a + 15]!) >>> 0;
    const w4 = ((d[a + 16]! << 24) | (d[a + 17]! << 16) | (d[a + 18]! << 8) | d[a + 19]!) >>> 0;
    const k = this.keys;
    // Object ids are uniformly distributed: any of their words is a good hash.
    let slot = w1 & this.mask;
    for (;;) {
      if (this.used[slot] === EMPTY) break;
      const p = slot * 5;
      if (k[p] === w0 && k[p + 1] === w1 && k[p + 2] === w2 && k[p + 3] === w3 && k[p + 4] === w4) return;
      slot = (slot + 1) & this.mask;
    }
    this.store(slot, w0, w1, w2, w3, w4);
  }

  private store(slot: number, w0: number, w1: number, w2: number, w3: number, w4: number): void {
    const k = this.keys;
    const p = slot * 5;
    k[p] = w0;
    k[p + 1] = w1;
    k[p + 2] = w2;
    k[p + 3] = w3;
    k[p + 4] = w4;
    this.used[slot] = 1;
    if (++this.size * 2 > this.used.length) this.grow();
  }

  /** Adds a hex id. */
  addHex(hex: string): void {
    hexInto(hex, this.scratch, 0);
    this.addRaw(this.scratch, 0);
  }

  private readonly scratch = new Uint8Array(20);

  /** Calls `fn` with each id (as 20 bytes at `bytes[at..]`, a reused buffer) until it returns false. */
  forEachRaw(fn: (bytes: Uint8Array, at: number) => boolean): void {
    const out = new Uint8Array(20);
    const view = new DataView(out.buffer);
    for (let slot = 0; slot < this.used.length; slot++) {
      if (this.used[slot] === EMPTY) continue;
      for (let j = 0; j < 5; j++) view.setUint32(4 * j, this.keys[slot * 5 + j]!);
      if (!fn(out, 0)) return;
    }
  }

  /** Every id, as hex (tests, diagnostics). */
  toHex(): string[] {
    const out: string[] = [];
    this.forEachRaw((k, at) => (out.push(bytesToHex(k, at, 20)), true));
    return out;
  }

  private grow(): void {
    const old = this.keys;
    const oldUsed = this.used;
    const cap = oldUsed.length * 2;
    this.keys = new Uint32Array(cap * 5);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
    this.size = 0;
    for (let from = 0; from < oldUsed.length; from++) {
      if (oldUsed[from] === EMPTY) continue;
      const p = from * 5;
      // Distinct already: only a free slot is needed.
      let slot = old[p + 1]! & this.mask;
      while (this.used[slot] !== EMPTY) slot = (slot + 1) & this.mask;
      this.store(slot, old[p]!, old[p + 1]!, old[p + 2]!, old[p + 3]!, old[p + 4]!);
    }
  }
}

function startsWithAt(data: Uint8Array, at: number, text: string): boolean {
  if (at + text.length > data.length) return false;
  for (let i = 0; i < text.length; i++) if (data[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

const decoder = new TextDecoder();

/**
 * Adds the links of one object to `set`: a commit's tree and parents, a tree's entries (not
 * gitlinks: a submodule's commit lives elsewhere), a tag's object. The object was validated
 * before (validateObject), so the layout is known to be sound.
 */
export function addLinks(set: LinkSet, type: ObjectType, data: Uint8Array): void {
  if (type === "blob") return;
  if (type === "tree") {
    // validateObject checked every entry ("<mode> <name>\0<20 bytes>"), so the NUL ends the
    // name, and a mode starting "16" is a gitlink (160000).
    let at = 0;
    while (at < data.length) {
      const nul = data.indexOf(0, at);
      if (nul < 0 || nul + 21 > data.length) throw new GitError("invalid tree: truncated entry");
      if (!(data[at] === 0x31 && data[at + 1] === 0x36)) set.addRaw(data, nul + 1);
      at = nul + 21;
    }
    return;
  }
  if (type === "commit") {
    set.addHex(decoder.decode(data.subarray(5, 45)));
    let at = 46;
    while (startsWithAt(data, at, "parent ")) {
      set.addHex(decoder.decode(data.subarray(at + 7, at + 47)));
      at += 48;
    }
    return;
  }
  // A tag: "object <hex>\n" first.
  if (!startsWithAt(data, 0, "object ") || data[47] !== NL) throw new GitError("invalid tag: bad object line");
  set.addHex(decoder.decode(data.subarray(7, 47)));
}

/** What checkLinksPresent looks in: the new pack's index, and the repository's objects. */
export interface LinkSources {
  pack: { indexOfRaw(key: Uint8Array, at: number): number };
  /** The repository before the pack: its packs' indexes when it is a pack set, else a reader. */
  existing: { packs?: { idx: { indexOfRaw(key: Uint8Array, at: number): number } }[]; has(oid: string): Promise<boolean> };
}

/** Throws GitError (code "missing") naming a link found neither in the pack nor in the repository. */
export async function checkLinksPresent(links: LinkSet, from: LinkSources): Promise<void> {
  const packs = from.existing.packs;
  let missing: string | null = null;
  const unsure: string[] = [];
  links.forEachRaw((keys, at) => {
    if (from.pack.indexOfRaw(keys, at) >= 0) return true;
    if (packs) {
      for (const p of packs) if (p.idx.indexOfRaw(keys, at) >= 0) return true;
      missing = bytesToHex(keys, at, 20);
      return false;
    }
    unsure.push(bytesToHex(keys, at, 20));
    return true;
  });
  for (const oid of unsure) if (!(await from.existing.has(oid))) missing ??= oid;
  if (missing) throw new GitError(`missing necessary object ${missing}`, "missing");
}
