// The cache built-in's archives (cli/runner/builtins/cache.ts): what a save stores (each path
// line under its root, globs and `!` excludes, `~`, symbolic links kept) comes back under the same
// roots on another machine; and a hostile archive — `..` names, absolute names, a link out of its
// root and a write through it, entries of a line that is not there, too many entries — writes
// nothing outside the roots and fails past its bounds.
import { afterAll, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Header } from "tar";
import { archivePaths, cacheVersion, restorePaths } from "../../../cli/runner/builtins/cache.ts";

const root = mkdtempSync(join(tmpdir(), "svc-cache-archive-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => {
  const d = join(root, `${++n}-${name}`);
  mkdirSync(d, { recursive: true });
  return d;
};
const put = (file: string, text: string) => {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
};

test("a save's archive restores under the same roots elsewhere: dirs, globs, excludes, ~, links", async () => {
  const [ws, home, ws2, home2, tmp] = ["ws", "home", "ws2", "home2", "tmp"].map(fresh) as [string, string, string, string, string];
  put(join(ws, "deps/a.txt"), "a");
  put(join(ws, "deps/sub/b.txt"), "b");
  put(join(ws, "deps/skip.txt"), "skip");
  symlinkSync("a.txt", join(ws, "deps/link"));
  put(join(ws, "logs/x/one.log"), "1");
  put(join(ws, "logs/y/two.log"), "2");
  put(join(ws, "logs/y/two.txt"), "not a log");
  put(join(home, ".tool/cache/c.bin"), "c");
  const path = "deps\n!deps/skip.txt\nlogs/**/*.log\n~/.tool/cache\n";
  const file = join(tmp, "cache.tgz");
  expect(await archivePaths(file, path, ws, home)).toBe(4);
  await restorePaths(file, path, ws2, home2);
  const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : null);
  expect({
    a: read(join(ws2, "deps/a.txt")),
    b: read(join(ws2, "deps/sub/b.txt")),
    skip: read(join(ws2, "deps/skip.txt")),
    link: readlinkSync(join(ws2, "deps/link")),
    one: read(join(ws2, "logs/x/one.log")),
    two: read(join(ws2, "logs/y/two.log")),
    txt: read(join(ws2, "logs/y/two.txt")),
    home: read(join(home2, ".tool/cache/c.bin")),
  }).toEqual({ a: "a", b: "b", skip: null, link: "a.txt", one: "1", two: "2", txt: null, home: "c" });
  // Nothing matched: nothing to save.
  expect(await archivePaths(join(tmp, "none.tgz"), "nothing-here", ws, home)).toBe(0);
  // The version digests the lines as written: another list is another cache.
  expect(cacheVersion(["deps"])).not.toBe(cacheVersion(["deps", "logs"]));
  expect(cacheVersion(["deps"])).toMatch(/^[0-9a-f]{64}$/);
});

/** A gzip'd tar written entry by entry, as an attacker could. */
function hostileArchive(entries: { path: string; type?: "File" | "SymbolicLink" | "Link" | "Directory"; body?: string; linkpath?: string }[]): Uint8Array {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? "");
    const h = new Header({
      path: e.path,
      type: e.type ?? "File",
      size: e.type && e.type !== "File" ? 0 : body.length,
      mode: 0o644,
      linkpath: e.linkpath,
      mtime: new Date(0),
    });
    const block = Buffer.alloc(512);
    h.encode(block, 0);
    blocks.push(block);
    if (body.length && (e.type ?? "File") === "File") blocks.push(Buffer.concat([body, Buffer.alloc((512 - (body.length % 512)) % 512)]));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

test("a hostile archive writes nothing outside its roots", async () => {
  const base = fresh("hostile");
  const ws = join(base, "ws");
  mkdirSync(ws);
  const file = join(base, "evil.tgz");
  writeFileSync(
    file,
    hostileArchive([
      { path: "0/deps/ok.txt", body: "ok" },
      { path: "0/deps/../../escape.txt", body: "escaped" },
      { path: "0/../../abs-escape.txt", body: "escaped" },
      { path: "/tmp-abs.txt", body: "absolute" },
      { path: "0/deps/out", type: "SymbolicLink", linkpath: "../../.." },
      { path: "0/deps/out/through.txt", body: "through the link" },
      { path: "0/deps/hard", type: "Link", linkpath: "9/../../../etc/hostname" },
      { path: "7/elsewhere.txt", body: "a line that is not there" },
    ]),
  );
  await restorePaths(file, "deps", ws, join(base, "home"));
  expect(readFileSync(join(ws, "deps/ok.txt"), "utf8")).toBe("ok");
  for (const p of ["escape.txt", "abs-escape.txt", "through.txt", "tmp-abs.txt", "elsewhere.txt"]) {
    expect({ p, base: existsSync(join(base, p)), ws: existsSync(join(ws, p)), root: existsSync(join(root, p)) }).toEqual({
      p,
      base: false,
      ws: false,
      root: false,
    });
  }
  // The link pointing out of the root was not made: the entry "through" it is a plain file inside the root.
  expect(lstatSync(join(ws, "deps/out")).isSymbolicLink()).toBe(false);
  expect(readFileSync(join(ws, "deps/out/through.txt"), "utf8")).toBe("through the link");
  expect(existsSync(join(ws, "deps/hard"))).toBe(false);
  expect(lstatSync(join(ws, "deps")).isDirectory()).toBe(true);
});

test("an archive past the entry or byte bound fails the restore", async () => {
  const base = fresh("bounds");
  const file = join(base, "many.tgz");
  writeFileSync(file, hostileArchive(Array.from({ length: 5 }, (_, i) => ({ path: `0/deps/f${i}`, body: "x".repeat(100) }))));
  expect(restorePaths(file, "deps", join(base, "ws"), base, { entries: 3, bytes: 1e9 })).rejects.toThrow("more than 3 entries");
  expect(restorePaths(file, "deps", join(base, "ws2"), base, { entries: 100, bytes: 250 })).rejects.toThrow("250 bytes");
  await restorePaths(file, "deps", join(base, "ws3"), base, { entries: 5, bytes: 500 });
  expect(readFileSync(join(base, "ws3/deps/f4"), "utf8")).toBe("x".repeat(100));
});
