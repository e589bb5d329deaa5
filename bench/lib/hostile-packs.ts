// Hand-made packs for the hostile pushes of bench/stall.ts (issue 25 rows 4 and 5): a delta
// bomb (a few hundred bytes that resolve to 1 GiB), a zlib bomb (256 MiB of zeros in ~254 KB)
// and a 50,000-deep delta chain (~1 MB). Each pack holds a commit and a tree naming the blob,
// so the push is complete; the receive-pack body carries one ref command.
import { deflate } from "../../src/git/inflate.ts";
import { serializeCommit, serializeTree } from "../../src/git/object.ts";
import { hashObject } from "../../src/git/oid.ts";
import { encodeOfsDistance, encodeTypeSize, OBJ_BLOB, OBJ_COMMIT, OBJ_OFS_DELTA, OBJ_TREE } from "../../src/git/pack-entry.ts";
import { encodePkt } from "../../src/git/pkt-line.ts";

const ZERO = "0".repeat(40);

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

interface Entry {
  bytes: Uint8Array;
}

/** A whole entry (not a delta). */
function whole(code: number, data: Uint8Array): Entry {
  return { bytes: Buffer.concat([encodeTypeSize(code, data.length), deflate(data)]) };
}

/** An OFS_DELTA entry whose base starts `distance` bytes before it. */
function ofsDelta(delta: Uint8Array, distance: number): Entry {
  return { bytes: Buffer.concat([encodeTypeSize(OBJ_OFS_DELTA, delta.length), encodeOfsDistance(distance), deflate(delta)]) };
}

/** A pack of `entries` in order, with its trailer. */
function pack(entries: Entry[]): Uint8Array {
  const head = Buffer.alloc(12);
  head.write("PACK", 0, "latin1");
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([head, ...entries.map((e) => e.bytes)]);
  return Buffer.concat([body, new Bun.CryptoHasher("sha1").update(body).digest()]);
}

/** Commit and tree entries naming `files` (name → blob id); the commit's id. */
function commitOf(files: Record<string, string>, message: string): { entries: Entry[]; commit: string } {
  const tree = serializeTree(
    Object.entries(files)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, oid]) => ({ mode: "100644", name, oid })),
  );
  const treeId = hashObject("tree", tree);
  const sig = { name: "Bench", email: "bench@example.com", timestamp: 1_700_000_000, timezone: "+0000" };
  const commit = serializeCommit({ tree: treeId, parents: [], author: sig, committer: sig, message: `${message}\n`, extraHeaders: [] });
  return { entries: [whole(OBJ_TREE, tree), whole(OBJ_COMMIT, commit)], commit: hashObject("commit", commit) };
}

/** A git-receive-pack request body creating `ref` at `commit` with `packBytes`. */
export function receivePackBody(ref: string, commit: string, packBytes: Uint8Array): Uint8Array {
  return Buffer.concat([encodePkt(`${ZERO} ${commit} ${ref}\0report-status\n`), Buffer.from("0000"), packBytes]);
}

/**
 * The delta bomb: a 64 KiB blob of zeros, and a delta on it of `size / 64 KiB` copy
 * instructions of 64 KiB each (one byte each: 0x80 with no offset or size bytes means offset 0,
 * size 0x10000), so `size` bytes come from a pack of a few hundred bytes.
 */
export function deltaBomb(size = 1024 ** 3): { pack: Uint8Array; commit: string; blob: string } {
  const baseData = new Uint8Array(65536);
  const base = whole(OBJ_BLOB, baseData);
  const delta = new Uint8Array([...varint(65536), ...varint(size), ...new Array(size / 65536).fill(0x80)]);
  const bomb = ofsDelta(delta, base.bytes.length);
  // The bomb's id: the hash of `size` zero bytes, computed in 64 KiB steps.
  const h = new Bun.CryptoHasher("sha1").update(`blob ${size}\0`);
  for (let n = 0; n < size; n += 65536) h.update(baseData);
  const blob = h.digest("hex");
  const { entries, commit } = commitOf({ "zeros.bin": blob, "base.bin": hashObject("blob", baseData) }, "delta bomb");
  return { pack: pack([base, bomb, ...entries]), commit, blob };
}

/** The zlib bomb: one blob of `size` zero bytes, stored deflated (about size / 1032 bytes). */
export function zlibBomb(size = 256 * 1024 * 1024): { pack: Uint8Array; commit: string; blob: string } {
  const data = new Uint8Array(size);
  const blob = hashObject("blob", data);
  const { entries, commit } = commitOf({ "zeros.bin": blob }, "zlib bomb");
  return { pack: pack([whole(OBJ_BLOB, data), ...entries]), commit, blob };
}

/** A chain of `depth` deltas, each on the one before, each changing one byte of a 100-byte blob. */
export function deepChain(depth = 50_000): { pack: Uint8Array; commit: string; blob: string } {
  let data = new Uint8Array(100).fill(0x61);
  const entries: Entry[] = [whole(OBJ_BLOB, data)];
  let offset = 12;
  let prevOffset = offset;
  offset += entries[0]!.bytes.length;
  for (let i = 0; i < depth; i++) {
    const at = i % 100;
    const next = data.slice();
    next[at] = 0x61 + ((data[at]! - 0x61 + 1) % 26);
    // copy [0, at), insert one byte, copy [at + 1, 100)
    const ops: number[] = [...varint(100), ...varint(100)];
    if (at > 0) ops.push(0x80 | 0x10, at);
    ops.push(1, next[at]!);
    if (at < 99) ops.push(0x80 | 0x01 | 0x10, at + 1, 99 - at);
    const e = ofsDelta(new Uint8Array(ops), offset - prevOffset);
    entries.push(e);
    prevOffset = offset;
    offset += e.bytes.length;
    data = next;
  }
  const blob = hashObject("blob", data);
  const { entries: tail, commit } = commitOf({ "deep.txt": blob }, "deep chain");
  return { pack: pack([...entries, ...tail]), commit, blob };
}
