import { describe, expect, test } from "bun:test";
import { bytesToHex, hashObject, hexToBytes, isOid, sha1Hex } from "../../../src/git/oid.ts";
import { git, tempDir } from "./fixture.ts";

describe("oid", () => {
  test("hashObject matches git hash-object for each type of content", async () => {
    const tmp = await tempDir();
    try {
      for (const content of ["", "hello\n", "x".repeat(10000)]) {
        const expected = git(tmp.path, ["hash-object", "--stdin"], content);
        expect(hashObject("blob", Buffer.from(content))).toBe(expected);
      }
    } finally {
      await tmp.cleanup();
    }
  });

  test("sha1Hex of known vectors", () => {
    expect(sha1Hex(new Uint8Array(0))).toBe("da39a3ee5e6b4b0d3255bfef95601890afd80709");
    expect(sha1Hex(Buffer.from("abc"))).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
  });

  test("hex conversion round trips and rejects garbage", () => {
    const hex = "00ff10a9993e364706816aba3e25717850c26c9c";
    const bytes = hexToBytes(hex);
    expect(bytes.length).toBe(20);
    expect(bytesToHex(bytes)).toBe(hex);
    expect(bytesToHex(bytes, 1, 2)).toBe("ff10");
    expect(bytesToHex(bytes, 18)).toBe("6c9c");
    expect(() => hexToBytes("zz")).toThrow();
    expect(() => hexToBytes("abc")).toThrow();
  });

  test("isOid accepts only 40 lowercase hex characters", () => {
    expect(isOid("a9993e364706816aba3e25717850c26c9cd0d89d")).toBe(true);
    expect(isOid("A9993E364706816ABA3E25717850C26C9CD0D89D")).toBe(false);
    expect(isOid("a9993e36")).toBe(false);
    expect(isOid(42)).toBe(false);
  });
});
