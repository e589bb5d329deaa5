// The tar encoder (services/git/archive-tar.ts) read back by the system tar: every path length
// from short to past both ustar fields (prefix/name split at each boundary, pax `path` records
// whose length crosses a digit), long symlink targets (pax `linkpath`), modes and sizes, and the
// archive's length (whole 10,240-byte records, two zero blocks at least).
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TAR_RECORD, tarEntryHeader, tarGlobalHeader, tarPadding, tarTrailer, type TarEntry } from "../../../src/services/git/archive-tar.ts";

const OID = "0123456789abcdef0123456789abcdef01234567";

/** A tar of `entries` (files hold `size` bytes of 'a'), as the archive service lays it out. */
function tarOf(entries: TarEntry[]): Uint8Array {
  const parts: Uint8Array[] = [tarGlobalHeader(OID, 1_700_000_000)];
  for (const e of entries) {
    parts.push(tarEntryHeader(e, 1_700_000_000));
    if (e.kind === "file") parts.push(new Uint8Array(e.size).fill(0x61), tarPadding(e.size));
  }
  const written = parts.reduce((n, p) => n + p.length, 0);
  parts.push(tarTrailer(written));
  return Buffer.concat(parts);
}

/** `tar -tv` of the bytes: one line per entry. */
async function list(bytes: Uint8Array): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "svc-tar-"));
  try {
    const file = join(dir, "a.tar");
    writeFileSync(file, bytes);
    const p = Bun.spawn(["tar", "--numeric-owner", "-tvf", file], { stdout: "pipe", stderr: "pipe", env: { ...process.env, TZ: "UTC", LC_ALL: "C" } });
    const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
    if (code !== 0) throw new Error(`tar: ${err}`);
    return out.trim().split("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A path of exactly `n` bytes: directories of 10 characters, then a file name. */
function pathOf(n: number, seg = 10): string {
  const parts: string[] = [];
  let left = n;
  while (left > seg + 1) {
    parts.push("d".repeat(seg));
    left -= seg + 1;
  }
  parts.push("f".repeat(left));
  return parts.join("/");
}

describe("tar encoder", () => {
  test("every path length from 1 to 400 bytes is read back whole", async () => {
    const entries: TarEntry[] = [];
    for (let n = 1; n <= 400; n++) entries.push({ path: `${n}/${pathOf(n)}`, kind: "file", size: n % 7, oid: OID });
    // One long segment: no `/` to split at, so a pax path record.
    entries.push({ path: `${"z".repeat(230)}.txt`, kind: "file", size: 1, oid: OID });
    const lines = await list(tarOf(entries));
    const names = lines.map((l) => l.split(/\s+/).slice(5).join(" "));
    expect(names).toEqual(entries.map((e) => e.path));
  });

  test("modes, types, sizes and a long symlink target", async () => {
    const target = new TextEncoder().encode(`../${"t".repeat(200)}`);
    const lines = await list(
      tarOf([
        { path: "p/", kind: "dir", size: 0, oid: OID },
        { path: "p/run.sh", kind: "file", executable: true, size: 5, oid: OID },
        { path: "p/a.txt", kind: "file", size: 513, oid: OID },
        { path: "p/link", kind: "symlink", size: 0, linkname: new TextEncoder().encode("a.txt"), oid: OID },
        { path: "p/far", kind: "symlink", size: 0, linkname: target, oid: OID },
      ]),
    );
    const cols = lines.map((l) => l.split(/\s+/));
    expect(cols.map((c) => [c[0], c[1], c[2]])).toEqual([
      ["drwxrwxr-x", "0/0", "0"],
      ["-rwxrwxr-x", "0/0", "5"],
      ["-rw-rw-r--", "0/0", "513"],
      ["lrwxrwxrwx", "0/0", "0"],
      ["lrwxrwxrwx", "0/0", "0"],
    ]);
    expect(lines[3]).toEndWith("p/link -> a.txt");
    expect(lines[4]).toEndWith(`p/far -> ../${"t".repeat(200)}`);
    expect(lines[0]).toContain("2023-11-14 22:13");
  });

  test("the archive is whole records with at least two zero blocks at the end", () => {
    for (const size of [0, 1, 511, 512, 9000, 9216, 9217]) {
      const bytes = tarOf([{ path: "f", kind: "file", size, oid: OID }]);
      expect(bytes.length % TAR_RECORD).toBe(0);
      expect(bytes.subarray(bytes.length - 1024).every((b) => b === 0)).toBe(true);
    }
  });
});
