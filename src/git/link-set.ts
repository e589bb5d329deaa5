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
const SP = 0x20;
const EMPTY = 0;

/** A set of 20-byte object ids. */
export class LinkSet {
  private keys: Uint8Array;
  private used: Uint8Array;
  private mask: number;
  /** Distinct ids held. */
  size = 0;

  constructor(initial = 1 << 16) {
    let cap = 1024;
    while (cap < initial) cap <<= 1;
    this.keys = new Uint8Array(cap * 20);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
  }

  /** Adds the id stored as 20 bytes at `bytes[at..at+20)`. */
  addRaw(bytes: Uint8Array, at: number): void {
    // Object ids are uniformly distributed: four of their bytes are a good hash.
    let slot = (((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0) & this.mask;
    const keys = this.keys;
    for (;;) {
      if (this.used[slot] === EMPTY) break;
      const p = slot * 20;
      let same = true;
      for (let j = 0; j < 20; j++) {
        if (keys[p + j] !== bytes[at + j]) {
          same = false;
          break;
        }
      }
      if (same) return;
      slot = (slot + 1) & this.mask;
    }
    keys.set(bytes.subarray(at, at + 20), slot * 20);
    this.used[slot] = 1;
    if (++this.size * 2 > this.used.length) this.grow();
  }

  /** Adds a hex id. */
  addHex(hex: string): void {
    hexInto(hex, this.scratch, 0);
    this.addRaw(this.scratch, 0);
  }

  private readonly scratch = new Uint8Array(20);

  /** Calls `fn` with each id (as `keys`, offset) until it returns false. */
  forEachRaw(fn: (keys: Uint8Array, at: number) => boolean): void {
    for (let slot = 0; slot < this.used.length; slot++) {
      if (this.used[slot] !== EMPTY && !fn(this.keys, slot * 20)) return;
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
    this.keys = new Uint8Array(cap * 20);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
    this.size = 0;
    for (let slot = 0; slot < oldUsed.length; slot++) if (oldUsed[slot] !== EMPTY) this.addRaw(old, slot * 20);
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
    let at = 0;
    while (at < data.length) {
      const sp = data.indexOf(SP, at);
      const nul = sp < 0 ? -1 : data.indexOf(0, sp + 1);
      if (sp <= at || nul < 0 || nul + 21 > data.length) throw new GitError("invalid tree: truncated entry");
      const gitlink = sp - at === 6 && startsWithAt(data, at, "160000");
      if (!gitlink) set.addRaw(data, nul + 1);
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
