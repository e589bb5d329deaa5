// The compact structures of the clone and push paths: OidSet, the multi-pack index, the pack
// writer's own idx, the tree walk that steps over entries copied from a base tree, and the
// reachability records (which must agree with a full walk, or not be used).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MultiPackIndex } from "../../../src/git/multi-pack-index.ts";
import { listObjects, SEND } from "../../../src/git/object-list.ts";
import { OidSet } from "../../../src/git/oid-set.ts";
import { bytesToHex } from "../../../src/git/oid.ts";
import { writePackIndexRaw } from "../../../src/git/pack-index.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { writePack } from "../../../src/git/pack-writer.ts";
import type { CollectRequest } from "../../../src/git/walk.ts";
import { git, gitLines, makeFixtureRepo, openRepoPacks, removeDir } from "./repo-fixture.ts";

let work: string;
let fixture: string;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "svc-compact-"));
  fixture = await makeFixtureRepo(600, 3);
}, 60_000);
afterAll(async () => {
  await Promise.all(closers.map((c) => c()));
  await Promise.all([work, fixture].map(removeDir));
});

/** A bare copy of the fixture whose objects are split into overlapping packs: one per revision range. */
async function splitRepo(name: string, ranges: string[][]): Promise<{ dir: string; set: PackSet }> {
  const dir = join(work, name);
  git(work, ["init", "--quiet", "--bare", dir]);
  for (const range of ranges) {
    const objects = gitLines(fixture, ["rev-list", "--objects", ...range]).map((l) => l.slice(0, 40));
    git(fixture, ["pack-objects", "--quiet", join(dir, "objects", "pack", "pack")], objects.join("\n") + "\n");
  }
  const { set, close } = await openRepoPacks(dir);
  closers.push(close);
  return { dir, set };
}

const objectsOf = (dir: string, revs: string[]) => new Set(gitLines(dir, ["rev-list", "--objects", ...revs]).map((l) => l.slice(0, 40)));
const sent = (list: Awaited<ReturnType<typeof listObjects>>): Set<string> => {
  const out = new Set<string>();
  for (let p = 0; p < list.midx.count; p++) if (list.flags[p]! & SEND) out.add(list.midx.oidAt(p));
  return out;
};
const clone = (wants: string[]): CollectRequest => ({ wants, haves: [], shallow: [] });

describe("OidSet", () => {
  test("keeps each of 50,000 random ids once, numbered in insertion order", () => {
    const set = new OidSet(4);
    const ids: Uint8Array[] = [];
    for (let i = 0; i < 50_000; i++) ids.push(crypto.getRandomValues(new Uint8Array(20)));
    ids.forEach((id, i) => {
      expect(set.add(id, 0)).toBe(i);
    });
    ids.forEach((id, i) => {
      expect(set.add(id, 0)).toBe(i);
    });
    expect(set.size).toBe(50_000);
    for (let i = 0; i < 50_000; i += 997) {
      expect(set.lookup(ids[i]!, 0)).toBe(i);
      expect(bytesToHex(set.bytesOf(i))).toBe(bytesToHex(ids[i]!));
      expect(set.hexOf(i)).toBe(bytesToHex(ids[i]!));
    }
    const absent = crypto.getRandomValues(new Uint8Array(20));
    expect(set.has(absent, 0)).toBe(false);
    // Ids at an offset inside a larger buffer (as in tree entries).
    const buf = new Uint8Array(45);
    buf.set(ids[7]!, 25);
    expect(set.lookup(buf, 25)).toBe(7);
    expect(set.addHex(bytesToHex(ids[9]!))).toBe(9);
  });
});

describe("MultiPackIndex", () => {
  test("its footprint counts the tables built on first use (for the cache budget)", async () => {
    const { set } = await splitRepo("midx-footprint", [["main~300"], ["--all"]]);
    const midx = MultiPackIndex.build(set.packs);
    const built = midx.footprint;
    expect(built).toBe(midx.oids.byteLength + 6 * midx.count);
    midx.find(midx.oids, 0); // the hash slots: a power of two of at least 2 per id, 4 bytes each
    const withSlots = midx.footprint;
    expect(withSlots - built).toBeGreaterThanOrEqual(8 * midx.count);
    midx.positionsIn(0); // a position per idx entry of every pack
    expect(midx.footprint - withSlots).toBe(4 * set.packs.reduce((n, p) => n + p.idx.count, 0));
  });

  test("over overlapping packs: every id once, found by raw bytes and hex, the last pack's copy preferred", async () => {
    const { set } = await splitRepo("midx", [["main~300"], ["main~100", "^main~350"], ["--all"]]);
    const midx = MultiPackIndex.build(set.packs);
    const all = new Set<string>();
    for (const p of set.packs) for (let i = 0; i < p.idx.count; i++) all.add(p.idx.oidAt(i));
    expect(midx.count).toBe(all.size);
    expect(set.packs.reduce((n, p) => n + p.idx.count, 0)).toBeGreaterThan(midx.count);
    for (let p = 1; p < midx.count; p++) expect(Buffer.compare(midx.oids.subarray(20 * (p - 1), 20 * p), midx.oids.subarray(20 * p, 20 * p + 20))).toBe(-1);
    for (let k = 0; k < set.packs.length; k++) {
      const idx = set.packs[k]!.idx;
      const row = midx.positionsIn(k);
      for (let i = 0; i < idx.count; i += 7) {
        const p = midx.find(idx.oidTable, 20 * i);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(midx.findHex(idx.oidAt(i))).toBe(p);
        expect(midx.oidAt(p)).toBe(idx.oidAt(i));
        // Preferred: the highest-numbered pack holding it.
        let last = -1;
        for (let j = 0; j < set.packs.length; j++) if (set.packs[j]!.idx.find(idx.oidAt(i)) >= 0) last = j;
        expect(midx.packOf[p]).toBe(last);
        expect(row[i]).toBe(last === k ? p : -(p + 1));
      }
    }
    expect(midx.findHex("0".repeat(40))).toBe(-1);
    expect(midx.findHex("not an id")).toBe(-1);
  });
});

describe("writePack", () => {
  test("the idx built from what it reports is byte for byte the one git index-pack writes", async () => {
    const { set } = await splitRepo("idx", [["main~200"], ["main", "^main~250"], ["--all"]]);
    const midx = set.multiPackIndex();
    const flags = new Uint8Array(midx.count).fill(SEND);
    const oids = new Uint8Array(20 * midx.count);
    const offsets = new Float64Array(midx.count);
    const crcs = new Uint32Array(midx.count);
    let n = 0;
    const parts: Uint8Array[] = [];
    for await (const chunk of writePack(midx, flags, midx.count, {
      ofsDelta: true,
      thin: false,
      record(p, offset, crc) {
        oids.set(midx.oids.subarray(20 * p, 20 * p + 20), 20 * n);
        offsets[n] = offset;
        crcs[n++] = crc;
      },
    }))
      parts.push(chunk.slice());
    const pack = Buffer.concat(parts);
    expect(n).toBe(midx.count);
    const name = bytesToHex(pack.subarray(pack.length - 20));
    const ours = writePackIndexRaw(oids, offsets, crcs, n, name);
    const path = join(work, "written.pack");
    writeFileSync(path, pack);
    expect(git(work, ["index-pack", "--strict", path])).toBe(name);
    expect(Buffer.from(ours).equals(readFileSync(join(work, "written.idx")))).toBe(true);
  });
});

describe("the tree walk", () => {
  test("steps over entries copied from a base tree and still lists exactly what git does", async () => {
    // One wide directory changed a file at a time: every tree is a delta of the previous one.
    const dir = join(work, "wide.git");
    git(work, ["init", "--quiet", "--bare", "-b", "main", dir]);
    const lines: string[] = [];
    for (let c = 0; c < 150; c++) {
      lines.push("commit refs/heads/main", `committer C <c@example.com> ${1_600_000_000 + c} +0000`, "data 2", "c\n");
      const files = c === 0 ? Array.from({ length: 400 }, (_, i) => i) : [(c * 37) % 400, (c * 11) % 400];
      for (const f of files) {
        const body = `file ${f} version ${c}\n`;
        lines.push(`M 100644 inline wide/f${String(f).padStart(3, "0")}.txt`, `data ${body.length}`, body);
      }
      if (c % 10 === 0) lines.push(`M 100644 inline wide/added-${c}.txt`, "data 2", "a\n");
    }
    git(dir, ["fast-import", "--quiet"], lines.join("\n") + "\n");
    git(dir, ["repack", "-adfq", "--window=250", "--depth=50"]);
    const deltas = git(dir, ["verify-pack", "-v", join(dir, "objects", "pack", readdirSync(join(dir, "objects", "pack")).find((f) => f.endsWith(".idx"))!)]);
    expect(deltas.split("\n").filter((l) => / tree .* \d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(l)).length).toBeGreaterThan(100);
    const { set, close } = await openRepoPacks(dir);
    closers.push(close);
    const list = await listObjects(set, clone([git(dir, ["rev-parse", "main"])]));
    expect([...sent(list)].sort()).toEqual([...objectsOf(dir, ["main"])].sort());
    // Most entries were stepped over, not parsed.
    expect(list.stats.skipped).toBeGreaterThan(0.9 * list.stats.entries);
    const fetch = await listObjects(set, { wants: [git(dir, ["rev-parse", "main"])], haves: [git(dir, ["rev-parse", "main~40"])], shallow: [] });
    expect([...sent(fetch)].sort()).toEqual([...objectsOf(dir, ["main", "^main~40"])].sort());
  });
});

describe("reachability records", () => {
  const refs = () => gitLines(fixture, ["for-each-ref", "--format=%(objectname)"]);
  const mainAt = (rev: string) => git(fixture, ["rev-parse", rev]);

  test("a recorded pack plus newer packs: the same objects as a full walk, and the record is used", async () => {
    // The "GC pack" is what main~100 reached at GC time; two pushes of main followed.
    const gcTips = [mainAt("main~100")];
    const { set } = await splitRepo("recorded", [["main", "^main~40"], ["main~40", "^main~100"], gcTips]);
    const gcPack = set.packs.find((p) => p.idx.count === objectsOf(fixture, gcTips).size)!;
    expect(gcPack).toBeDefined();
    gcPack.reachTips = gcTips;
    const wants = [mainAt("main")];
    const full = await listObjects(new PackSet(set.packs), clone(wants));
    const quick = await listObjects(new PackSet(set.packs), clone(wants), { reachability: true });
    expect(sent(quick)).toEqual(sent(full));
    expect(sent(full)).toEqual(objectsOf(fixture, wants));
    // Used: only the commits outside the recorded pack were read.
    expect(quick.commitCount).toBe(Number(git(fixture, ["rev-list", "--count", "main", "^main~100"])));
    expect(full.commitCount).toBe(Number(git(fixture, ["rev-list", "--count", "main"])));
  });

  test("every ref a recorded tip (a clone right after gc): the recorded pack is the whole answer", async () => {
    const tips = [...new Set(refs())];
    const { set } = await splitRepo("after-gc", [tips]);
    set.packs[0]!.reachTips = tips;
    const quick = await listObjects(new PackSet(set.packs), clone(tips), { reachability: true });
    expect(quick.commitCount).toBe(0);
    expect(quick.count).toBe(set.packs[0]!.idx.count);
    expect(sent(quick)).toEqual(objectsOf(fixture, tips));
  });

  test("a recorded tip the refs no longer reach: the record is not used, the answer stays exact", async () => {
    // The record says the pack is what main and an extra branch reach; the branch was deleted.
    const extra = git(fixture, ["rev-parse", "orphan"]);
    const tips = [mainAt("main"), extra];
    const { set } = await splitRepo("stale", [tips]);
    set.packs[0]!.reachTips = tips;
    const wants = [mainAt("main")];
    const quick = await listObjects(new PackSet(set.packs), clone(wants), { reachability: true });
    const full = await listObjects(new PackSet(set.packs), clone(wants));
    expect(sent(quick)).toEqual(sent(full));
    expect(sent(full)).toEqual(objectsOf(fixture, wants));
    expect(sent(full).has(extra)).toBe(false);
  });

  test("a rewound ref: not wanted and not met by the walk, so the full walk answers", async () => {
    const tips = [mainAt("main")];
    const { set } = await splitRepo("rewound", [tips]);
    set.packs[0]!.reachTips = tips;
    const wants = [mainAt("main~30")];
    const quick = await listObjects(new PackSet(set.packs), clone(wants), { reachability: true });
    expect(sent(quick)).toEqual(objectsOf(fixture, wants));
  });

  test("with a filter or haves the record is not used", async () => {
    const tips = [...new Set(refs())];
    const { set } = await splitRepo("filtered", [tips]);
    set.packs[0]!.reachTips = tips;
    const filtered = await listObjects(new PackSet(set.packs), { ...clone(tips), filter: { kind: "blob:none" } }, { reachability: true });
    expect(sent(filtered)).toEqual(new Set(gitLines(fixture, ["rev-list", "--objects", "--filter=blob:none", ...tips]).map((l) => l.slice(0, 40))));
    const fetch = await listObjects(new PackSet(set.packs), { wants: [mainAt("main")], haves: [mainAt("main~5")], shallow: [] }, { reachability: true });
    expect(sent(fetch)).toEqual(objectsOf(fixture, ["main", "^main~5"]));
  });
});
