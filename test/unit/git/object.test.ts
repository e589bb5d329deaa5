import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  parseCommit,
  parseSignature,
  parseTag,
  parseTree,
  serializeCommit,
  serializeTag,
  serializeTree,
  validateObject,
  type Commit,
} from "../../../src/git/object.ts";
import { FsckWarnings } from "../../../src/git/fsck.ts";
import { hashObject } from "../../../src/git/oid.ts";
import { decodeText, encodeText } from "../../../src/git/text.ts";
import { GitError, type ObjectType } from "../../../src/git/types.ts";
import { catAllObjects, git, makeFixtureRepo, type FixtureRepo } from "./fixture.ts";

let repo: FixtureRepo;
let objects: Map<string, { type: string; data: Uint8Array }>;
beforeAll(async () => {
  repo = await makeFixtureRepo(12);
  objects = catAllObjects(repo.dir);
});
afterAll(() => repo.cleanup());

const OID = "a9993e364706816aba3e25717850c26c9cd0d89d";
const enc = (s: string) => new TextEncoder().encode(s);

describe("object codec on real objects", () => {
  test("every commit, tree and tag round trips byte for byte and validates", () => {
    const seen = new Set<string>();
    for (const [oid, { type, data }] of objects) {
      validateObject(type as ObjectType, data);
      let again: Uint8Array;
      if (type === "commit") again = serializeCommit(parseCommit(data));
      else if (type === "tree") again = serializeTree(parseTree(data));
      else if (type === "tag") again = serializeTag(parseTag(data));
      else continue;
      seen.add(type);
      expect(hashObject(type as ObjectType, again)).toBe(oid);
    }
    expect([...seen].sort()).toEqual(["commit", "tag", "tree"]);
  });

  test("parseCommit reads headers, extra headers and a non-UTF-8 message losslessly", () => {
    const signed = git(repo.dir, ["rev-parse", "signed"]);
    const c = parseCommit(objects.get(signed)!.data);
    expect(c).toEqual({
      tree: git(repo.dir, ["rev-parse", "main^{tree}"]),
      parents: [git(repo.dir, ["rev-parse", "main"])],
      author: { name: "A U Thor", email: "author@example.com", timestamp: 1700000000, timezone: "+0000" },
      committer: { name: "C O Mitter", email: "committer@example.com", timestamp: 1700000000, timezone: "+0000" },
      extraHeaders: [
        ["encoding", "ISO-8859-1"],
        ["gpgsig", "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----"],
      ],
      message: "signed commit\n",
    });
    const latin = parseCommit(objects.get(repo.commits[5]!)!.data);
    expect(latin.parents).toEqual([repo.commits[4]!]);
    expect(encodeText(latin.message)).toEqual(Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0xff, 0x0a]));
  });

  test("parseTree reads modes, names and oids", () => {
    const entries = parseTree(objects.get(git(repo.dir, ["rev-parse", "main^{tree}"]))!.data);
    const modes = Object.fromEntries(entries.map((e) => [e.name, e.mode]));
    expect(modes).toEqual({ "binary.bin": "100644", dir0: "40000", dir1: "40000", dir2: "40000", link: "120000", sub: "160000" });
    expect(entries.find((e) => e.name === "sub")!.oid).toBe("0123456789abcdef0123456789abcdef01234567");
  });

  test("parseTag reads the annotated tag", () => {
    const oid = git(repo.dir, ["rev-parse", "v1.0"]);
    expect(parseTag(objects.get(oid)!.data)).toEqual({
      object: repo.commits[9]!,
      type: "commit",
      tag: "v1.0",
      tagger: { name: "T Agger", email: "tagger@example.com", timestamp: 1600050000, timezone: "+0000" },
      message: "release 1.0\nbody.\n",
    });
  });
});

describe("object codec rules", () => {
  test("serializeTree sorts directories as name + '/'", () => {
    const tree = serializeTree([
      { mode: "100644", name: "a.b", oid: OID },
      { mode: "40000", name: "a", oid: OID },
      { mode: "100644", name: "a-", oid: OID },
      { mode: "100644", name: "a0", oid: OID },
    ]);
    expect(parseTree(tree).map((e) => e.name)).toEqual(["a-", "a.b", "a", "a0"]);
  });

  test("serializeTree rejects bad names, modes and duplicates", () => {
    for (const bad of [
      { mode: "100644", name: "", oid: OID },
      { mode: "100644", name: "a/b", oid: OID },
      { mode: "100644", name: "a\0b", oid: OID },
      { mode: "100644", name: ".git", oid: OID },
      { mode: "100600", name: "x", oid: OID },
      { mode: "100644", name: "x", oid: "nope" },
    ]) {
      expect(() => serializeTree([bad])).toThrow(GitError);
    }
    const dup = { mode: "100644", name: "x", oid: OID };
    expect(() => serializeTree([dup, dup])).toThrow(GitError);
  });

  test("validateObject rejects malformed commits, trees and tags", () => {
    const good = `tree ${OID}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nmsg\n`;
    validateObject("commit", enc(good));
    const badCommits = [
      `parent ${OID}\ntree ${OID}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\n`,
      `tree ${OID.slice(1)}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\n`,
      `tree ${OID}\nauthor A <a@b> 1 +0000\n\n`,
      `tree ${OID}\nauthor A <a@b> 1 +0000\ncommitter A <a@\0b> 1 +0000\n\n`,
      `tree ${OID}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000`,
    ];
    for (const c of badCommits) expect(() => validateObject("commit", enc(c))).toThrow(GitError);
    // Odd identity lines are accepted with a warning (git's own reader shows them).
    for (const c of [
      `tree ${OID}\nauthor A a@b 1 +0000\ncommitter A <a@b> 1 +0000\n\n`,
      `tree ${OID}\nauthor A <a@b> x +0000\ncommitter A <a@b> 1 +0000\n\n`,
    ]) {
      const warnings = new FsckWarnings();
      validateObject("commit", enc(c), undefined, undefined, undefined, warnings);
      expect(warnings.total).toBe(1);
    }

    const entry = (mode: string, name: string) => [...enc(`${mode} ${name}\0`), ...new Uint8Array(20).fill(1)];
    validateObject("tree", Uint8Array.from([...entry("100644", "a"), ...entry("40000", "b")]));
    const badTrees = [
      [...entry("100644", "b"), ...entry("100644", "a")],
      [...entry("100644", "a"), ...entry("100644", "a")],
      [...entry("100644", "a"), ...entry("40000", "a")],
      entry("100649", "a"),
      entry("100644", ".."),
      entry("100644", ".GIT"),
      entry("100644", "").slice(0, 20),
      [...enc("100644 a\0"), 1, 2, 3],
    ];
    for (const t of badTrees) expect(() => validateObject("tree", Uint8Array.from(t))).toThrow(GitError);

    validateObject("tag", enc(`object ${OID}\ntype commit\ntag v1\ntagger T <t@t> 1 +0000\n\nmsg\n`));
    for (const t of [`object ${OID}\ntype nope\ntag v1\n\n`, `type commit\nobject ${OID}\ntag v1\n\n`]) {
      expect(() => validateObject("tag", enc(t))).toThrow(GitError);
    }
    // An empty tag name, an odd tagger, an odd mode: accepted, with git's warnings.
    const warnings = new FsckWarnings();
    validateObject("tag", enc(`object ${OID}\ntype commit\ntag \n\n`), undefined, undefined, undefined, warnings);
    validateObject("tag", enc(`object ${OID}\ntype commit\ntag v1\ntagger bad\n\n`), undefined, undefined, undefined, warnings);
    validateObject("tree", Uint8Array.from(entry("100600", "a")), undefined, undefined, undefined, warnings);
    expect([...warnings.counts.keys()].sort()).toEqual(["badFilemode", "badTagName", "missingEmail", "missingTaggerEntry"]);
  });

  test("serializeCommit writes what git would hash", async () => {
    const c: Commit = {
      tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
      parents: [],
      author: { name: "Ünïcode Name", email: "u@example.com", timestamp: 1700000000, timezone: "+0100" },
      committer: { name: "Ünïcode Name", email: "u@example.com", timestamp: 1700000000, timezone: "+0100" },
      message: "hello ✓\n",
      extraHeaders: [],
    };
    const data = serializeCommit(c);
    expect(hashObject("commit", data)).toBe(git(repo.dir, ["hash-object", "-t", "commit", "--stdin"], data));
    expect(parseCommit(data)).toEqual(c);
  });

  test("parseSignature accepts odd but valid identities, and reads malformed ones as git does, keeping their bytes", () => {
    expect(parseSignature("<> 0 -0130")).toEqual({ name: "", email: "", timestamp: 0, timezone: "-0130" });
    expect(parseSignature("Name <e> 1")).toEqual({ name: "Name", email: "e", timestamp: 1, timezone: "+0000", raw: "Name <e> 1" });
    expect(parseSignature("Name e 1 +0100")).toEqual({ name: "Name e 1 +0100", email: "", timestamp: 0, timezone: "+0000", raw: "Name e 1 +0100" });
    expect(parseSignature("N <e>   0123 +051800")).toMatchObject({ name: "N", email: "e", timestamp: 123 });
    // A commit with such a line serializes back to its own bytes (its id does not change).
    const odd = enc(`tree ${OID}\nauthor A <a@b>1 +0000\ncommitter A <a@b> 99999999999999999999999 +0000\n\nm\n`);
    expect(serializeCommit(parseCommit(odd))).toEqual(odd);
  });

  test("text decoding is lossless for invalid UTF-8", () => {
    const bytes = Uint8Array.from([0x41, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0xe2, 0x82]);
    const s = decodeText(bytes);
    expect(s.startsWith("A")).toBe(true);
    expect(s.includes("😀")).toBe(true);
    expect(encodeText(s)).toEqual(bytes);
    expect(encodeText("plain ✓")).toEqual(new TextEncoder().encode("plain ✓"));
  });
});

describe("objects without a message (found by fuzzing, issue 11)", () => {
  test("a commit or tag of headers only (no blank line) round-trips byte for byte", () => {
    const commit = enc(`tree ${OID}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n`);
    validateObject("commit", commit);
    expect(serializeCommit(parseCommit(commit))).toEqual(commit);
    const tag = enc(`object ${OID}\ntype commit\ntag v1\ntagger T <t@x> 1 +0000\n`);
    validateObject("tag", tag);
    expect(serializeTag(parseTag(tag))).toEqual(tag);
    // With the blank line and an empty message, the blank line stays.
    const empty = enc(`tree ${OID}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\n`);
    expect(serializeCommit(parseCommit(empty))).toEqual(empty);
  });
});
