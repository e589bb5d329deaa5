// The agent's artifact files (issue 30, cli/runner/builtins/artifacts-zip.ts): which files
// upload-artifact's `path` names and under which names (GitHub's rules), a zip round trip through
// yazl and yauzl, and extraction refusing what would escape the target or exceed its bounds.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { extractZip, uploadFiles, writeZip } from "../../../cli/runner/builtins/artifacts-zip.ts";

const root = mkdtempSync(join(tmpdir(), "svc-runner-artifacts-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A fresh workspace holding `files` (path → content). */
function workspace(files: Record<string, string>): string {
  const dir = join(root, `ws${++n}`);
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

const names = async (path: string, ws: string, includeHidden = false) => {
  const r = await uploadFiles(path, ws, { includeHidden });
  return { root: r.root.slice(ws.length) || "/", names: r.files.map((f) => f.name) };
};

describe("upload-artifact's path", () => {
  const ws = workspace({
    "dist/app.js": "a",
    "dist/lib/util.js": "u",
    "dist/.cache/x": "hidden",
    "dist/app.js.map": "m",
    "logs/a.log": "1",
    "logs/sub/b.log": "2",
    "README.md": "r",
    ".env": "secret",
  });
  test("a directory: everything under it, named from it; hidden files left out unless asked", async () => {
    expect(await names("dist", ws)).toEqual({ root: "/dist", names: ["app.js", "app.js.map", "lib/util.js"] });
    expect(await names("dist/", ws, true)).toEqual({ root: "/dist", names: [".cache/x", "app.js", "app.js.map", "lib/util.js"] });
  });
  test("one file: its directory is the root", async () => {
    expect(await names("dist/lib/util.js", ws)).toEqual({ root: "/dist/lib", names: ["util.js"] });
  });
  test("globs and excludes; several paths share their least common ancestor", async () => {
    expect(await names("dist/**/*.js\n!dist/lib", ws)).toEqual({ root: "/dist", names: ["app.js"] });
    expect(await names("logs/**/*.log\nREADME.md", ws)).toEqual({ root: "/", names: ["README.md", "logs/a.log", "logs/sub/b.log"] });
    expect(await names("dist/app.js\ndist/lib/util.js", ws)).toEqual({ root: "/dist", names: ["app.js", "lib/util.js"] });
    expect(await names("logs\n!**/sub", ws)).toEqual({ root: "/logs", names: ["a.log"] });
    expect(await names("*.md\n.env", ws)).toEqual({ root: "/", names: ["README.md"] });
  });
  test("nothing matched: no files", async () => {
    expect((await uploadFiles("missing/**\nnope.txt", ws, { includeHidden: false })).files).toEqual([]);
  });
});

describe("zip and extraction", () => {
  test("a round trip keeps names and bytes; the size and sha256 are the written file's", async () => {
    const ws = workspace({ "out/a.txt": "alpha", "out/deep/b.bin": "\u0000\u0001bytes", "out/empty": "" });
    const { files } = await uploadFiles("out", ws, { includeHidden: false });
    const zip = join(ws, "a.zip");
    for (const level of [0, 9]) {
      const w = await writeZip(files, zip, level);
      const bytes = readFileSync(zip);
      expect(w).toEqual({ size: bytes.byteLength, sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex") });
      const target = join(ws, `x${level}`);
      expect(await extractZip(zip, target)).toEqual({ files: 3, bytes: 5 + 7 + 0 });
      expect(readFileSync(join(target, "a.txt"), "utf8")).toBe("alpha");
      expect(readFileSync(join(target, "deep/b.bin"), "utf8")).toBe("\u0000\u0001bytes");
      expect(readFileSync(join(target, "empty"), "utf8")).toBe("");
    }
  });

  test("past the entry or byte bound nothing more is written", async () => {
    const ws = workspace({ "big/zeros": "\u0000".repeat(100_000), "big/other": "x" });
    const { files } = await uploadFiles("big", ws, { includeHidden: false });
    const zip = join(ws, "bomb.zip");
    await writeZip(files, zip, 9);
    await expect(extractZip(zip, join(ws, "t1"), { entries: 10, bytes: 50_000 })).rejects.toThrow("more than 50000 bytes");
    expect(existsSync(join(ws, "t1/zeros"))).toBe(false);
    await expect(extractZip(zip, join(ws, "t2"), { entries: 1, bytes: 1e9 })).rejects.toThrow("2 entries");
  });

  test("an entry naming a path outside the target is refused; so is writing through a symbolic link", async () => {
    const ws = workspace({});
    const evil = join(ws, "evil.zip");
    writeFileSync(evil, storedZip([["../escaped.txt", "out"]]));
    await expect(extractZip(evil, join(ws, "t"))).rejects.toThrow();
    expect(existsSync(join(ws, "escaped.txt"))).toBe(false);
    const abs = join(ws, "abs.zip");
    writeFileSync(abs, storedZip([["/tmp/svc-abs-escape.txt", "out"]]));
    await expect(extractZip(abs, join(ws, "t"))).rejects.toThrow();
    // A link already in the target, pointing out of it: an entry under it is refused.
    const outside = join(ws, "outside");
    mkdirSync(outside);
    mkdirSync(join(ws, "t2"));
    symlinkSync(outside, join(ws, "t2", "link"));
    const via = join(ws, "via.zip");
    writeFileSync(via, storedZip([["link/file.txt", "out"]]));
    await expect(extractZip(via, join(ws, "t2"))).rejects.toThrow("outside");
    expect(existsSync(join(outside, "file.txt"))).toBe(false);
    // Nor does one make directories out there on its way (a file deeper under the link, a directory entry).
    writeFileSync(via, storedZip([["link/a/b/file.txt", "out"]]));
    await expect(extractZip(via, join(ws, "t2"))).rejects.toThrow("outside");
    writeFileSync(via, storedZip([["link/d/", ""]]));
    await expect(extractZip(via, join(ws, "t2"))).rejects.toThrow("outside");
    expect(readdirSync(outside)).toEqual([]);
  });
});

/** A zip of stored entries written by hand (yazl refuses the hostile names a test needs). */
function storedZip(entries: [string, string][]): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const nameBytes = Buffer.from(name);
    const data = Buffer.from(text);
    const crc = Bun.hash.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
