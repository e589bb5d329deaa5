// src/git/fsck.ts against C git's `fsck --strict` (the oracle, fsck-oracle.ts): named cases for
// every message id svc refuses with, the .gitmodules rules, and a seeded differential run over
// generated objects where svc must refuse exactly what git refuses, naming one of git's ids.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  FSCK_RULES,
  FsckError,
  FsckSession,
  FsckWarnings,
  fsckObject,
  fsckObjects,
  readGitmodules,
  submoduleNameOk,
  submoduleUrlOk,
  type FsckMsgId,
} from "../../../src/git/fsck.ts";
import { BLOB, BLOB_OID, COMMIT, COMMIT_OID, DIFFERENTIAL_CASES, differential, judge, ours, SUBTREE, SUBTREE_OID, tree } from "../../fuzz/fsck-differential.ts";
import { validateObject } from "../../../src/git/object.ts";
import { hashObject } from "../../../src/git/oid.ts";
import type { ObjectReader, ObjectType, Oid, RawObject } from "../../../src/git/types.ts";
import { tempDir } from "./fixture.ts";
import { FsckOracle, type GitVerdict } from "./fsck-oracle.ts";

const enc = (s: string) => new TextEncoder().encode(s);

/** A reader over a map of objects. */
function readerOf(objects: Map<Oid, RawObject>): ObjectReader {
  return {
    has: async (oid) => objects.has(oid),
    read: async (oid) => objects.get(oid) ?? null,
    readHeader: async (oid) => {
      const o = objects.get(oid);
      return o ? { type: o.type, size: o.data.length } : null;
    },
  };
}

let dir: { path: string; cleanup(): Promise<void> };
let oracle: FsckOracle;
beforeAll(async () => {
  dir = await tempDir();
  oracle = FsckOracle.create(dir.path);
});
afterAll(() => dir.cleanup());

const ident = (s: string) => enc(`tree ${SUBTREE_OID}\nauthor ${s}\ncommitter C <c@example.com> 1 +0000\n\nm\n`);

/** [name, type, bytes, the id git --strict reports (null: none); svc refuses or warns as FSCK_RULES says]. */
const CASES: [string, ObjectType, Uint8Array, FsckMsgId | null][] = [
  // trees
  [
    "a plain tree",
    "tree",
    tree([
      ["100644", "a", BLOB_OID],
      ["40000", "b", SUBTREE_OID],
      ["160000", "c", COMMIT_OID],
      ["120000", "d", BLOB_OID],
      ["100755", "e", BLOB_OID],
    ]),
    null,
  ],
  [".git", "tree", tree([["100644", ".git", BLOB_OID]]), "hasDotgit"],
  [".GIT (any case)", "tree", tree([["40000", ".GIT", SUBTREE_OID]]), "hasDotgit"],
  [".g<ZWNJ>it (HFS+ ignorable code point)", "tree", tree([["100644", ".g\u200cit", BLOB_OID]]), "hasDotgit"],
  [".git<BOM> (HFS+)", "tree", tree([["100644", ".git\ufeff", BLOB_OID]]), "hasDotgit"],
  ["git~1 (NTFS short name)", "tree", tree([["100644", "GIT~1", BLOB_OID]]), "hasDotgit"],
  ["<ZWNJ>.git (an ignorable code point before the dot)", "tree", tree([["100644", "\u200c.git", BLOB_OID]]), "hasDotgit"],
  ["<BOM>.Git (an ignorable code point before the dot)", "tree", tree([["100644", "\ufeff.Git", BLOB_OID]]), "hasDotgit"],
  [".git. . (NTFS trailing dots and spaces)", "tree", tree([["100644", ".git. . ", BLOB_OID]]), "hasDotgit"],
  [".git::$INDEX_ALLOCATION (NTFS stream)", "tree", tree([["100644", ".git::$INDEX_ALLOCATION", BLOB_OID]]), "hasDotgit"],
  ["a\\.git (after a backslash)", "tree", tree([["100644", "a\\.git", BLOB_OID]]), "hasDotgit"],
  [".gitx is fine", "tree", tree([["100644", ".gitx", BLOB_OID]]), null],
  ["git~2 is fine", "tree", tree([["100644", "git~2", BLOB_OID]]), null],
  [".", "tree", tree([["40000", ".", SUBTREE_OID]]), "hasDot"],
  ["..", "tree", tree([["40000", "..", SUBTREE_OID]]), "hasDotdot"],
  ["a/b", "tree", tree([["100644", "a/b", BLOB_OID]]), "fullPathname"],
  ["040000 (zero-padded)", "tree", tree([["040000", "d", SUBTREE_OID]]), "zeroPaddedFilemode"],
  ["0100644 (zero-padded)", "tree", tree([["0100644", "f", BLOB_OID]]), "zeroPaddedFilemode"],
  [
    "duplicate names",
    "tree",
    tree([
      ["100644", "a", BLOB_OID],
      ["100644", "a", BLOB_OID],
    ]),
    "duplicateEntries",
  ],
  [
    "a file and a directory of one name, apart",
    "tree",
    tree([
      ["100644", "a", BLOB_OID],
      ["100644", "a.b", BLOB_OID],
      ["40000", "a", SUBTREE_OID],
    ]),
    "duplicateEntries",
  ],
  [
    "unsorted",
    "tree",
    tree([
      ["100644", "b", BLOB_OID],
      ["100644", "a", BLOB_OID],
    ]),
    "treeNotSorted",
  ],
  [
    "a directory sorts as name/",
    "tree",
    tree([
      ["40000", "a", SUBTREE_OID],
      ["100644", "a.b", BLOB_OID],
    ]),
    "treeNotSorted",
  ],
  ["a null oid", "tree", tree([["100644", "a", "0".repeat(40)]]), "nullSha1"],
  [".gitmodules as a symlink", "tree", tree([["120000", ".gitmodules", BLOB_OID]]), "gitmodulesSymlink"],
  [".GITMODULES as a symlink", "tree", tree([["120000", ".GITMODULES", BLOB_OID]]), "gitmodulesSymlink"],
  ["gitmod~1 as a symlink (NTFS short name)", "tree", tree([["120000", "gitmod~1", BLOB_OID]]), "gitmodulesSymlink"],
  ["gi7eba~4 as a symlink (NTFS fallback short name)", "tree", tree([["120000", "gi7eba~4", BLOB_OID]]), "gitmodulesSymlink"],
  ["<ZWJ>.gitmodules as a symlink (HFS+)", "tree", tree([["120000", "\u200d.gitmodules", BLOB_OID]]), "gitmodulesSymlink"],
  ["~1234567 as a symlink (an NTFS short name of digits)", "tree", tree([["120000", "~1234567", BLOB_OID]]), "gitmodulesSymlink"],
  ["hgitmod~1 as a symlink (not a short name of .gitmodules)", "tree", tree([["120000", "hgitmod~1", BLOB_OID]]), null],
  ["an unparsable tree (no NUL)", "tree", enc("100644 a"), "badTree"],
  ["an unparsable tree (mode with an 8)", "tree", tree([["100648", "a", BLOB_OID]]), "badTree"],
  ["an unparsable tree (empty name)", "tree", tree([["100644", "", BLOB_OID]]), "badTree"],
  // commits
  ["a plain commit", "commit", COMMIT, null],
  [
    "a merge with an encoding header and a signature",
    "commit",
    enc(
      `tree ${SUBTREE_OID}\nparent ${COMMIT_OID}\nparent ${COMMIT_OID}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\nencoding ISO-8859-1\ngpgsig -----BEGIN-----\n abc\n -----END-----\n\nm\n`,
    ),
    null,
  ],
  ["no tree line", "commit", enc(`author A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`), "missingTree"],
  ["a short tree id", "commit", enc(`tree ${SUBTREE_OID.slice(1)}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`), "badTreeSha1"],
  ["a bad parent id", "commit", enc(`tree ${SUBTREE_OID}\nparent xyz\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`), "badParentSha1"],
  ["no author", "commit", enc(`tree ${SUBTREE_OID}\ncommitter C <c@d> 1 +0000\n\nm\n`), "missingAuthor"],
  ["two authors", "commit", enc(`tree ${SUBTREE_OID}\nauthor A <a@b> 1 +0000\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n`), "multipleAuthors"],
  ["no committer", "commit", enc(`tree ${SUBTREE_OID}\nauthor A <a@b> 1 +0000\n\nm\n`), "missingCommitter"],
  ["a NUL in the message", "commit", enc(`tree ${SUBTREE_OID}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\0x\n`), "nulInCommit"],
  ["a NUL in a header", "commit", enc(`tree ${SUBTREE_OID}\nauthor A <a@b> 1 +0000\0\ncommitter C <c@d> 1 +0000\n\nm\n`), "nulInHeader"],
  ["an unterminated header", "commit", enc(`tree ${SUBTREE_OID}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000`), "unterminatedHeader"],
  ["headers only, newline-terminated", "commit", enc(`tree ${SUBTREE_OID}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n`), null],
  ["ident: no name before the email", "commit", ident("<a@b> 1 +0000"), "missingNameBeforeEmail"],
  ["ident: no email", "commit", ident("A 1 +0000"), "missingEmail"],
  ["ident: > in the name", "commit", ident("A> <a@b> 1 +0000"), "badName"],
  ["ident: no space before the email", "commit", ident("A<a@b> 1 +0000"), "missingSpaceBeforeEmail"],
  ["ident: < in the email", "commit", ident("A <a<b> 1 +0000"), "badEmail"],
  ["ident: unterminated email", "commit", ident("A <a@b 1 +0000"), "badEmail"],
  ["ident: no space before the date", "commit", ident("A <a@b>1 +0000"), "missingSpaceBeforeDate"],
  ["ident: no date", "commit", ident("A <a@b> +0000"), "badDate"],
  ["ident: zero-padded date", "commit", ident("A <a@b> 0123 +0000"), "zeroPaddedDate"],
  ["ident: date 0 is fine", "commit", ident("A <a@b> 0 +0000"), null],
  ["ident: a date past 2^63", "commit", ident("A <a@b> 9223372036854775808 +0000"), "badDateOverflow"],
  ["ident: a date just under 2^63", "commit", ident("A <a@b> 9223372036854775807 +0000"), null],
  ["ident: a bad time zone", "commit", ident("A <a@b> 1 +00"), "badTimezone"],
  ["ident: no time zone sign", "commit", ident("A <a@b> 1 0000"), "badTimezone"],
  ["ident: trailing text", "commit", ident("A <a@b> 1 +0000 x"), "badTimezone"],
  ["ident: extra spaces before the date (git tolerates them)", "commit", ident("A <a@b>   1 +0000"), null],
  ["ident: an empty name", "commit", ident(" <a@b> 1 +0000"), null],
  // tags
  ["a plain tag", "tag", enc(`object ${COMMIT_OID}\ntype commit\ntag v1.0\ntagger T <t@x> 1 +0000\n\nrelease\n`), null],
  ["a tag without a tagger (very old git)", "tag", enc(`object ${COMMIT_OID}\ntype commit\ntag v1.0\n\nold\n`), "missingTaggerEntry"],
  ["a tag named like no ref (only info in git)", "tag", enc(`object ${COMMIT_OID}\ntype commit\ntag v..1\ntagger T <t@x> 1 +0000\n\nm\n`), "badTagName"],
  ["a tag without an object line", "tag", enc(`type commit\ntag v1\ntagger T <t@x> 1 +0000\n\nm\n`), "missingObject"],
  ["a tag with a bad object id", "tag", enc(`object 12345\ntype commit\ntag v1\ntagger T <t@x> 1 +0000\n\nm\n`), "badObjectSha1"],
  ["a tag without a type line", "tag", enc(`object ${COMMIT_OID}\ntag v1\ntagger T <t@x> 1 +0000\n\nm\n`), "missingTypeEntry"],
  ["a tag without a tag line", "tag", enc(`object ${COMMIT_OID}\ntype commit\ntagger T <t@x> 1 +0000\n\nm\n`), "missingTagEntry"],
  ["a tag with a bad tagger", "tag", enc(`object ${COMMIT_OID}\ntype commit\ntag v1\ntagger T <t@x> 1 +00\n\nm\n`), "badTimezone"],
];

/**
 * Problems git's object parser already refuses before fsck runs ("object could not be parsed",
 * "bogus commit object"): git refuses them without a message id; svc names fsck.c's id.
 */
const PARSER_LEVEL = new Set<FsckMsgId>([
  "missingTree",
  "badTreeSha1",
  "badParentSha1",
  "missingObject",
  "badObjectSha1",
  "missingTypeEntry",
  "missingType",
  "badType",
  "missingTagEntry",
  "missingTag",
]);

describe("one object at a time, as git fsck --strict sees it", () => {
  let verdicts: Map<string, GitVerdict>;
  beforeAll(() => {
    oracle.write("blob", BLOB);
    oracle.write("tree", SUBTREE);
    oracle.write("commit", COMMIT);
    for (const [, type, data] of CASES) oracle.write(type, data);
    verdicts = oracle.fsck();
  });

  for (const [name, type, data, expected] of CASES) {
    const verdict = expected === null ? "accepted" : FSCK_RULES[expected] === "refuse" ? `refused (${expected})` : `accepted with a warning (${expected})`;
    test(`${type}: ${name} → ${verdict}`, () => {
      const git = verdicts.get(hashObject(type, data));
      const found = [...(git?.errors ?? []), ...(git?.warnings ?? [])];
      // The oracle agrees with the table (so the id is git's, not our guess) …
      if (expected) expect(found).toContain(PARSER_LEVEL.has(expected) && git?.errors.has("unparsable") ? "unparsable" : expected);
      else expect(found).toEqual([]);
      // … and svc refuses it or warns about it as FSCK_RULES says.
      const mine = judge(type, data);
      if (expected && FSCK_RULES[expected] === "refuse") expect(mine.refused).toBe(expected);
      else {
        expect(mine.refused).toBeNull();
        expect([...mine.warned]).toEqual(expected ? [expected] : []);
      }
    });
  }

  test("every message id has a verdict, and the refused ones are the corrupt and the dangerous", () => {
    const refused = Object.entries(FSCK_RULES)
      .filter(([, v]) => v === "refuse")
      .map(([k]) => k);
    for (const id of [
      "hasDot",
      "hasDotdot",
      "hasDotgit",
      "fullPathname",
      "gitmodulesName",
      "gitmodulesUrl",
      "gitmodulesSymlink",
      "gitattributesLineLength",
      "badTree",
      "nulInHeader",
    ])
      expect(refused).toContain(id);
    for (const id of ["zeroPaddedFilemode", "badFilemode", "missingTaggerEntry", "badTimezone", "badDate", "missingSpaceBeforeDate"])
      expect(FSCK_RULES[id as FsckMsgId]).toBe("warn");
  });

  test("the refusal reads like git's: object <oid>: <id>: <what>", () => {
    const data = tree([["100644", ".git", BLOB_OID]]);
    expect(() => fsckObject("tree", data)).toThrow(`object ${hashObject("tree", data)}: hasDotgit: contains '.git'`);
  });

  test("a refusal wins over the warnings of the same tree; the warnings read like git's", () => {
    expect(ours("tree", tree([["040000", ".git", SUBTREE_OID]]))).toBe("hasDotgit");
    const warnings = new FsckWarnings(2);
    for (const name of ["a", "b", "c"]) fsckObject("tree", tree([["040000", name, SUBTREE_OID]]), null, warnings);
    fsckObject("tag", enc(`object ${COMMIT_OID}\ntype commit\ntag v1.0\n\nold\n`), null, warnings);
    expect(warnings.counts).toEqual(
      new Map<FsckMsgId, number>([
        ["zeroPaddedFilemode", 3],
        ["missingTaggerEntry", 1],
      ]),
    );
    const lines = warnings.lines();
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe(`warning: object ${hashObject("tree", tree([["040000", "a", SUBTREE_OID]]))}: zeroPaddedFilemode: contains zero-padded file modes`);
    expect(lines[2]).toContain("zeroPaddedFilemode ×3, missingTaggerEntry ×1");
  });

  test("validateObject (what the indexer runs on every object) refuses with git's id first", () => {
    expect(() =>
      validateObject(
        "tree",
        tree([
          ["100644", "a", BLOB_OID],
          ["100644", "a", BLOB_OID],
        ]),
      ),
    ).toThrow(/duplicateEntries/);
    expect(() => validateObject("tree", tree([["100644", "a/b", BLOB_OID]]))).toThrow(/fullPathname/);
    expect(() => validateObject("tree", tree([["040000", "d", SUBTREE_OID]]))).not.toThrow();
    expect(() => validateObject("commit", ident("A 1 +0000"))).not.toThrow();
  });

  test("modes: git's historical 100664 is accepted silently; any other odd mode with badFilemode (info in git)", () => {
    expect(judge("tree", tree([["100664", "a", BLOB_OID]]))).toEqual({ refused: null, warned: new Set() });
    expect(judge("tree", tree([["100600", "a", BLOB_OID]]))).toEqual({ refused: null, warned: new Set(["badFilemode"]) });
    oracle.write("tree", tree([["100600", "a", BLOB_OID]]));
    const git = oracle.fsck().get(hashObject("tree", tree([["100600", "a", BLOB_OID]])));
    expect([...(git?.warnings ?? [])]).toEqual(["badFilemode"]);
  });
});

describe(".gitmodules (git's submodule rules)", () => {
  test("names: no `..` component with / or \\ separators, not empty", () => {
    const table: [string, boolean][] = [
      ["lib", true],
      ["a/b", true],
      ["..foo", true],
      ["foo..", true],
      ["../../modules/evil", false],
      ["..", false],
      ["foo/..", false],
      ["foo/../bar", false],
      ["foo\\..\\bar", false],
      ["..\\evil", false],
      ["", false],
    ];
    expect(table.map(([n]) => [n, submoduleNameOk(n)])).toEqual(table);
  });

  test("URLs: no leading -, no newline once decoded, no ../ escaping the host", () => {
    const table: [string, boolean][] = [
      ["https://example.com/lib.git", true],
      ["git@example.com:lib.git", true],
      ["../lib.git", true],
      ["./lib", true],
      ["git://example.com/lib", true],
      ["-upload-pack=touch /tmp/pwned", false],
      ["./%0ahost=example.com", false],
      ["git://example.com/%0a", false],
      ["https://example.com/%0a", false],
      ["http::https://example.com/%0a", false],
      ["../../:example.com/lib", false],
      ["../..//example.com/lib", false],
      ["https://[bad", false],
    ];
    expect(table.map(([u]) => [u, submoduleUrlOk(u)])).toEqual(table);
  });

  test("the config reader: quoted subsections with escapes, the old dotted form, values with quotes and comments", () => {
    const text = [
      "# comment",
      '[submodule "a \\"b\\""]',
      "\tpath = p ; trailing comment",
      '\turl = "quoted ; not a comment"',
      "[submodule.Old]",
      "\tURL = x",
      "[core]",
      "\tbare = false",
      '[submodule "cont"]',
      "\tupdate = !echo \\",
      "  more",
      "\tflag",
    ].join("\n");
    expect(readGitmodules(text)).toEqual([
      { name: 'a "b"', key: "path", value: "p" },
      { name: 'a "b"', key: "url", value: "quoted ; not a comment" },
      { name: "old", key: "url", value: "x" },
      { name: "cont", key: "update", value: "!echo   more" },
      { name: "cont", key: "flag", value: null },
    ]);
  });

  /** A .gitmodules blob and a tree naming it; ours and git's verdicts on the blob. */
  const GITMODULES: [string, string, FsckMsgId | null][] = [
    ["fine", '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n', null],
    ["name ../../modules/evil", '[submodule "../../modules/evil"]\n\tpath = x\n\turl = ./x\n', "gitmodulesName"],
    ["url starting with -", '[submodule "x"]\n\tpath = x\n\turl = -upload-pack=evil\n', "gitmodulesUrl"],
    ["url with an encoded newline", '[submodule "x"]\n\turl = ./%0a\n', "gitmodulesUrl"],
    ["path starting with -", '[submodule "x"]\n\tpath = -x\n', "gitmodulesPath"],
    ["update running a command", '[submodule "x"]\n\tupdate = !rm -rf /\n', "gitmodulesUpdate"],
    ["name in the old dotted form", "[submodule.x]\n\turl = ./x\n", null],
    ["a syntax error after a good entry (git only notes it)", '[submodule "ok"]\n\turl = ./x\n[broken\n', null],
    ["a bad entry after a syntax error is never read", '[broken\n[submodule ".."]\n\turl = ./x\n', null],
  ];

  test("refused exactly where git refuses, by either spelling of the name", async () => {
    const seen: Record<string, [string, FsckMsgId | null, string[]]> = {};
    const blobs: [string, Oid, FsckMsgId | null][] = [];
    for (const [name, text, expected] of GITMODULES) {
      const data = enc(text);
      const blob = oracle.write("blob", data);
      oracle.write("tree", tree([["100644", ".gitmodules", blob]]));
      blobs.push([name, blob, expected]);
      let got: FsckMsgId | null = null;
      try {
        await fsckObjects(
          [
            { type: "tree", data: tree([["100644", ".gitmodules", blob]]) },
            { type: "blob", data },
          ],
          readerOf(new Map()),
        );
      } catch (e) {
        if (!(e instanceof FsckError)) throw e;
        got = e.problem.id;
        expect(e.problem.oid).toBe(blob);
      }
      seen[name] = [name, got, []];
    }
    const verdicts = oracle.fsck();
    for (const [name, blob] of blobs) seen[name]![2] = [...(verdicts.get(blob)?.errors ?? [])];
    expect(Object.values(seen)).toEqual(blobs.map(([name, , expected]) => [name, expected, expected ? [expected] : []]));
  });

  test("a session finds the blob before or after its tree, or in the repository; missing or not a blob is refused", async () => {
    const bad = enc('[submodule "../../modules/evil"]\n\tpath = x\n');
    const badOid = hashObject("blob", bad);
    const named = tree([["100644", ".gitmodules", badOid]]);
    // blob after the tree, in the same write
    let s = new FsckSession();
    s.inspect("tree", named, hashObject("tree", named));
    expect(() => s.inspect("blob", bad, badOid)).toThrow(/gitmodulesName/);
    // blob before the tree: read back at finish
    s = new FsckSession();
    s.inspect("blob", bad, badOid);
    s.inspect("tree", named, hashObject("tree", named));
    await expect(s.finish(readerOf(new Map([[badOid, { type: "blob", data: bad }]])))).rejects.toThrow(/gitmodulesName/);
    // stored before this write
    await expect(fsckObjects([{ type: "tree", data: named }], readerOf(new Map([[badOid, { type: "blob", data: bad }]])))).rejects.toThrow(/gitmodulesName/);
    // missing, and not a blob
    await expect(fsckObjects([{ type: "tree", data: named }], readerOf(new Map()))).rejects.toThrow(/gitmodulesMissing/);
    const asTree = tree([["100644", ".gitmodules", SUBTREE_OID]]);
    await expect(fsckObjects([{ type: "tree", data: asTree }], readerOf(new Map([[SUBTREE_OID, { type: "tree", data: SUBTREE }]])))).rejects.toThrow(
      /gitmodulesBlob/,
    );
    // the oid as raw bytes, as the indexer hands it
    s = new FsckSession();
    s.inspect("tree", named, Buffer.from(hashObject("tree", named), "hex"), 0);
    expect(() => s.inspect("blob", bad, Buffer.from(badOid, "hex"), 0)).toThrow(/gitmodulesName/);
  });

  test("every spelling git takes for .gitmodules is found by the indexer's tree pass and by inspect, as git finds it", async () => {
    // [name in the tree, whether git reads the blob it names as .gitmodules]
    const spellings: [string, boolean][] = [
      [".gitmodules", true],
      [".GitModules", true],
      [".gitmodules .", true],
      [".gitmodules:$DATA", true],
      ["gitmod~1", true],
      ["GITMOD~4", true],
      ["gi7eba~9", true],
      ["~1234567", true],
      ["\u200c.gitmodules", true],
      [".git\ufeffmodules", true],
      ["x\\.gitmodules", true],
      ["x\\y\\gitmod~2", true],
      ["gitmodules", false],
      ["gitmod~5", false],
      ["~123456", false],
      [".gitmodulesx", false],
    ];
    const ours: [string, boolean, boolean][] = [];
    const blobs: Oid[] = [];
    for (const [i, [name]] of spellings.entries()) {
      const bad = enc(`[submodule "../../evil${i}"]\n\tpath = x\n`);
      const badOid = oracle.write("blob", bad);
      const named = tree([["100644", name, badOid]]);
      oracle.write("tree", named);
      blobs.push(badOid);
      const indexer = new FsckSession();
      validateObject("tree", named, undefined, indexer.found);
      const viaIndexer = (() => {
        try {
          indexer.inspectBlob(bad, Buffer.from(badOid, "hex"), 0);
          return false;
        } catch (e) {
          return e instanceof FsckError && e.problem.id === "gitmodulesName";
        }
      })();
      const viaInspect = await fsckObjects(
        [
          { type: "tree", data: named },
          { type: "blob", data: bad },
        ],
        readerOf(new Map()),
      ).then(
        () => false,
        (e) => e instanceof FsckError && e.problem.id === "gitmodulesName",
      );
      ours.push([name, viaIndexer, viaInspect]);
    }
    const verdicts = oracle.fsck();
    expect(ours).toEqual(spellings.map(([name, isModules]) => [name, isModules, isModules]));
    expect(blobs.map((b) => verdicts.get(b)?.errors.has("gitmodulesName") ?? false)).toEqual(spellings.map(([, isModules]) => isModules));
  });

  test(".gitattributes: a line of 2048 bytes or more is refused (gitattributesLineLength)", async () => {
    const long = enc(`${"x".repeat(2048)} text\n`);
    const oid = hashObject("blob", long);
    await expect(
      fsckObjects(
        [
          { type: "tree", data: tree([["100644", ".gitattributes", oid]]) },
          { type: "blob", data: long },
        ],
        readerOf(new Map()),
      ),
    ).rejects.toThrow(/gitattributesLineLength/);
    const fine = enc("*.bin binary\n");
    await fsckObjects(
      [
        { type: "tree", data: tree([["100644", ".gitattributes", hashObject("blob", fine)]]) },
        { type: "blob", data: fine },
      ],
      readerOf(new Map()),
    );
  });
});

describe("differential fuzzing against git fsck --strict (seeded)", () => {
  test(`${DIFFERENTIAL_CASES} generated trees, commits and tags: the same verdicts, git's ids`, async () => {
    const d = await tempDir();
    try {
      const o = FsckOracle.create(d.path);
      expect(differential(o, 20260611, DIFFERENTIAL_CASES)).toEqual([]);
    } finally {
      await d.cleanup();
    }
  }, 120_000);
});
