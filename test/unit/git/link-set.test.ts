// The self-contained-and-connected check the mirror sync uses instead of a walk: links gathered
// while indexing equal what C git says the objects point at; a complete pack passes; a pack
// missing one object (or one whose base repository lacks it) is refused naming that object.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkLinksPresent, LinkSet } from "../../../src/git/link-set.ts";
import { indexPack } from "../../../src/git/pack-indexer.ts";
import { openIndexedPack } from "../../../src/git/pack-overlay.ts";
import { PackSet } from "../../../src/git/pack-set.ts";
import { gitBytes } from "./fixture.ts";
import { git, makeFixtureRepo, removeDir } from "./repo-fixture.ts";

let repo: string;
let tmp: string;
beforeAll(async () => {
  repo = await makeFixtureRepo(300, 11);
  tmp = await mkdtemp(join(tmpdir(), "svc-links-"));
}, 60_000);
afterAll(async () => {
  await removeDir(repo);
  await removeDir(tmp);
});

/** Every object of every ref, as a pack made by git. */
const packOfAll = () => gitBytes(repo, ["pack-objects", "--revs", "--all", "--stdout", "-q"], "");

describe("LinkSet", () => {
  test("keeps each id once, through growth", () => {
    const set = new LinkSet(16);
    const ids = Array.from({ length: 5000 }, (_, i) => new Bun.CryptoHasher("sha1").update(String(i)).digest("hex"));
    for (const id of ids) set.addHex(id);
    for (const id of ids.slice(0, 100)) set.addHex(id);
    expect(set.size).toBe(5000);
    expect(new Set(set.toHex())).toEqual(new Set(ids));
  });
});

describe("links gathered while indexing", () => {
  test("are exactly the objects the pack's objects point at (gitlinks aside), and a complete pack passes", async () => {
    const pack = await indexPack([packOfAll()], { tmpDir: tmp, collectLinks: true });
    const expected = new Set<string>();
    for (const line of git(repo, ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"]).split("\n")) {
      const [oid, type] = line.split(" ");
      if (type === "commit") {
        const body = git(repo, ["cat-file", "commit", oid!]);
        for (const m of body.matchAll(/^(tree|parent) ([0-9a-f]{40})$/gm)) expected.add(m[2]!);
      } else if (type === "tag") expected.add(/^object ([0-9a-f]{40})$/m.exec(git(repo, ["cat-file", "tag", oid!]))![1]!);
      else if (type === "tree") {
        for (const entry of git(repo, ["ls-tree", oid!]).split("\n").filter(Boolean)) {
          const [mode, , id] = entry.split(/\s+/);
          if (mode !== "160000") expected.add(id!);
        }
      }
    }
    expect(new Set(pack.links!.toHex())).toEqual(expected);
    const opened = await openIndexedPack(pack);
    try {
      await checkLinksPresent(pack.links!, { pack: opened.pack.idx, existing: new PackSet([]) });
    } finally {
      await opened.close();
    }
  }, 60_000);

  test("a pack without one blob is refused naming it; with a base repository holding it, it passes", async () => {
    const blob = git(repo, ["rev-parse", "main:d0/s0/f0.txt"]);
    const all = git(repo, ["rev-list", "--objects", "main"]).split("\n").map((l) => l.split(" ")[0]!);
    const lacking = gitBytes(repo, ["pack-objects", "--stdout", "-q"], `${all.filter((o) => o !== blob).join("\n")}\n`);
    const pack = await indexPack([lacking], { tmpDir: tmp, collectLinks: true });
    const opened = await openIndexedPack(pack);
    const holder = await indexPack([gitBytes(repo, ["pack-objects", "--stdout", "-q"], `${blob}\n`)], { tmpDir: tmp });
    const base = await openIndexedPack(holder);
    try {
      const refused = await checkLinksPresent(pack.links!, { pack: opened.pack.idx, existing: new PackSet([]) }).catch((e) => e);
      expect({ code: refused.code, message: refused.message }).toEqual({ code: "missing", message: `missing necessary object ${blob}` });
      await checkLinksPresent(pack.links!, { pack: opened.pack.idx, existing: new PackSet([base.pack]) });
      // A reader that is not a pack set is asked by id.
      const reader = { has: async (oid: string) => oid === blob };
      await checkLinksPresent(pack.links!, { pack: opened.pack.idx, existing: reader });
    } finally {
      await opened.close();
      await base.close();
    }
  }, 60_000);
});
