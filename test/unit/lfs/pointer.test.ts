// Git LFS pointer files (git-lfs docs/spec.md) and the SSH commands of Git LFS: what parses, what
// does not, and random input that never throws.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { parseLfsCommand } from "../../../src/services/lfs/lfs.ts";
import { formatPointer, parsePointer } from "../../../src/services/lfs/pointer.ts";

const OID = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";
const enc = (s: string) => new TextEncoder().encode(s);

describe("parsePointer", () => {
  test("the pointer git lfs writes, and one with an extension line", () => {
    expect(parsePointer(enc(formatPointer({ oid: OID, size: 12345 })))).toEqual({ oid: OID, size: 12345 });
    const ext = `version https://git-lfs.github.com/spec/v1\next-0-foo sha256:${"0".repeat(64)}\noid sha256:${OID}\nsize 0\n`;
    expect(parsePointer(enc(ext))).toEqual({ oid: OID, size: 0 });
  });

  test("anything else is not a pointer", () => {
    for (const bad of [
      `version https://example.com/spec/v1\noid sha256:${OID}\nsize 1\n`,
      `version https://git-lfs.github.com/spec/v1\noid sha256:${OID}\nsize 1`,
      `version https://git-lfs.github.com/spec/v1\noid sha1:${OID.slice(0, 40)}\nsize 1\n`,
      `version https://git-lfs.github.com/spec/v1\noid sha256:${OID.toUpperCase()}\nsize 1\n`,
      `version https://git-lfs.github.com/spec/v1\noid sha256:${OID}\nsize -1\n`,
      `version https://git-lfs.github.com/spec/v1\noid sha256:${OID}\n`,
      `version https://git-lfs.github.com/spec/v1\noid sha256:${OID}\nsize 1\nfoo bar\n`,
      `version https://git-lfs.github.com/spec/v1\noid sha256:${OID}\nsize 99999999999999999\n`,
      `${formatPointer({ oid: OID, size: 1 })}${"x".repeat(1024)}\n`,
      "",
    ]) {
      expect({ bad, parsed: parsePointer(enc(bad)) }).toEqual({ bad, parsed: null });
    }
  });

  test("random bytes, and pointers with random bytes flipped, never throw", () => {
    const good = enc(formatPointer({ oid: OID, size: 7 }));
    for (let i = 0; i < 2000; i++) {
      parsePointer(new Uint8Array(randomBytes(i % 1100)));
      const flipped = good.slice();
      flipped[i % flipped.length] = randomBytes(1)[0]!;
      parsePointer(flipped);
    }
  });
});

describe("parseLfsCommand", () => {
  test("git-lfs-authenticate and git-lfs-transfer, with either path form", () => {
    expect(parseLfsCommand("git-lfs-authenticate acme/assets.git download")).toEqual({
      kind: "authenticate",
      org: "acme",
      repo: "assets",
      operation: "download",
    });
    expect(parseLfsCommand("git-lfs-authenticate '/acme/assets.git' upload")).toEqual({
      kind: "authenticate",
      org: "acme",
      repo: "assets",
      operation: "upload",
    });
    expect(parseLfsCommand("git-lfs-transfer /acme/assets upload")).toEqual({ kind: "transfer", org: "acme", repo: "assets", operation: "upload" });
  });

  test("other commands are not LFS's; malformed LFS commands get the usage", () => {
    expect(parseLfsCommand("git-upload-pack 'acme/assets.git'")).toBeNull();
    expect(parseLfsCommand("git-lfs-authenticatex acme/a.git download")).toBeNull();
    for (const bad of [
      "git-lfs-authenticate acme/a.git",
      "git-lfs-authenticate acme/a.git delete",
      "git-lfs-authenticate ../../etc download",
      "git-lfs-authenticate a/b/c.git upload",
    ]) {
      expect(parseLfsCommand(bad)).toMatchObject({ kind: "bad" });
    }
    for (let i = 0; i < 500; i++) parseLfsCommand(`git-lfs-authenticate ${randomBytes(i % 300).toString("latin1")}`);
  });
});
