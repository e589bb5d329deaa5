// Fuzzing download-artifact's extraction (issue 30, cli/runner/builtins/artifacts-zip.ts
// extractZip): zips made by yazl (as upload-artifact makes them) and hand-made hostile ones
// (`..`, absolute names, many entries), mutated byte-wise. Invariants: each case resolves or
// throws an Error (never a crash or a hang); nothing is written beside the target directory; the
// target never holds more files or bytes than the limits allow. FUZZ_CASES_SCALE scales the cases.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as yazl from "yazl";
import { extractZip } from "../../cli/runner/builtins/artifacts-zip.ts";
import { mutate, runTarget, type Target } from "./lib.ts";

const SCALE = Number(process.env.FUZZ_CASES_SCALE ?? "1");
const SEED = Number(process.env.FUZZ_SEED ?? "20261128");
const LIMITS = { entries: 40, bytes: 256 * 1024 };
const root = mkdtempSync(join(tmpdir(), "svc-fuzz-unzip-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A zip of `files` made by yazl (deflated or stored). */
async function yazlZip(files: Record<string, string>, compress: boolean): Promise<Uint8Array> {
  const z = new yazl.ZipFile();
  for (const [name, text] of Object.entries(files)) z.addBuffer(Buffer.from(text), name, { compress });
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

/** A zip of stored entries with any names (yazl refuses hostile ones). */
function rawZip(entries: [string, string][]): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const n = Buffer.from(name);
    const d = Buffer.from(text);
    const crc = Bun.hash.crc32(d) >>> 0;
    const l = Buffer.alloc(30);
    l.writeUInt32LE(0x04034b50, 0);
    l.writeUInt16LE(20, 4);
    l.writeUInt32LE(crc, 14);
    l.writeUInt32LE(d.length, 18);
    l.writeUInt32LE(d.length, 22);
    l.writeUInt16LE(n.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(d.length, 20);
    c.writeUInt32LE(d.length, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(offset, 42);
    parts.push(l, n, d);
    central.push(c, n);
    offset += 30 + n.length + d.length;
  }
  const cd = Buffer.concat(central);
  const e = Buffer.alloc(22);
  e.writeUInt32LE(0x06054b50, 0);
  e.writeUInt16LE(entries.length, 8);
  e.writeUInt16LE(entries.length, 10);
  e.writeUInt32LE(cd.length, 12);
  e.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, e]);
}

/** Files and bytes under `dir` (recursively, not following links). */
function tally(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const t = tally(p);
      files += t.files;
      bytes += t.bytes;
    } else {
      files++;
      bytes += statSync(p).size;
    }
  }
  return { files, bytes };
}

const seeds: Uint8Array[] = [];

const extraction: Target = {
  name: "artifact zip extraction",
  async run(r, caseNo) {
    if (!seeds.length) {
      seeds.push(
        await yazlZip({ "a.txt": "alpha", "dir/b.txt": "beta".repeat(100), "dir/sub/c.bin": "\u0000\u0001" }, true),
        await yazlZip({ "one.log": "x".repeat(5000), "two.log": "y" }, false),
        await yazlZip(Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, "z"])), true),
        rawZip([
          ["../up.txt", "escape"],
          ["ok.txt", "fine"],
        ]),
        rawZip([["/abs.txt", "escape"]]),
        rawZip([
          ["d/", ""],
          ["d/../../x", "escape"],
        ]),
        rawZip([["big", "q".repeat(300 * 1024)]]),
      );
    }
    const seed = r.pick(seeds);
    const bytes = r.chance(0.15) ? seed : mutate(seed, r, 1 + r.int(6));
    const dir = join(root, `c${caseNo}`);
    mkdirSync(dir);
    const zip = join(dir, "in.zip");
    writeFileSync(zip, bytes);
    const target = join(dir, "t");
    try {
      await extractZip(zip, target, LIMITS);
    } catch (e) {
      if (!(e instanceof Error)) throw new Error(`threw a non-Error: ${String(e)}`);
    }
    const beside = readdirSync(dir).sort();
    if (beside.join(",") !== "in.zip,t" && beside.join(",") !== "in.zip") throw new Error(`written beside the target: ${beside.join(", ")}`);
    if (beside.includes("t")) {
      const t = tally(target);
      if (t.files > LIMITS.entries || t.bytes > LIMITS.bytes) throw new Error(`past the limits: ${t.files} files, ${t.bytes} bytes`);
    }
    rmSync(dir, { recursive: true, force: true });
  },
};

describe("fuzzing the artifact extraction (seeded)", () => {
  test(`${extraction.name}: ${Math.round(400 * SCALE)} cases, nothing outside the target, within the limits`, async () => {
    const report = await runTarget(extraction, { seed: SEED, cases: Math.round(400 * SCALE), capMs: 5_000 });
    expect(report.failures).toEqual([]);
  }, 240_000);
});
