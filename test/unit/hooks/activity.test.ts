// The activity feed's pieces (issue 33): the bounded walk that counts a push's new commits (right
// with commits made in the same second), and the folding of a landing's rows into one entry.
import { describe, expect, test } from "bun:test";
import { CommitCache } from "../../../src/git/revision.ts";
import type { ObjectReader, RawObject } from "../../../src/git/types.ts";
import { newCommits } from "../../../src/services/hooks/activity-summary.ts";
import { entriesOf } from "../../../src/services/hooks/activity.ts";
import type { ActivityRow } from "../../../src/services/hooks/store-activity.ts";

const TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** An in-memory history: commits by name with parents and a committer time. */
function history(spec: Record<string, { parents: string[]; time: number }>) {
  const oid = (name: string) => name.padEnd(40, "0").replace(/[^0-9a-f]/g, "a");
  const objects = new Map<string, RawObject>();
  for (const [name, c] of Object.entries(spec)) {
    const text = `tree ${TREE}\n${c.parents.map((p) => `parent ${oid(p)}\n`).join("")}author A <a@x> ${c.time} +0000\ncommitter A <a@x> ${c.time} +0000\n\n${name}\n`;
    objects.set(oid(name), { type: "commit", data: new TextEncoder().encode(text) } as RawObject);
  }
  const reader: ObjectReader = {
    has: async (o) => objects.has(o),
    read: async (o) => objects.get(o) ?? null,
    readHeader: async (o) => (objects.has(o) ? { type: "commit", size: objects.get(o)!.data.length } : null),
  };
  const names = new Map([...Object.keys(spec)].map((n) => [oid(n), n]));
  return { cache: () => new CommitCache(reader), oid, nameOf: (o: string) => names.get(o)! };
}

describe("newCommits", () => {
  test("a fast-forward: the commits after the old tip, newest first", async () => {
    const h = history({ a1: { parents: [], time: 1 }, b2: { parents: ["a1"], time: 2 }, c3: { parents: ["b2"], time: 3 }, d4: { parents: ["c3"], time: 4 } });
    expect((await newCommits(h.cache(), h.oid("d4"), [h.oid("b2")], 100)).map((c) => h.nameOf(c.oid))).toEqual(["d4", "c3"]);
  });

  test("a merge made in the same second as everything else counts only what the merged branch brought", async () => {
    // main: a1 ← b1 ← c1; feature: a1 ← f1; merge m1 (c1, f1). All at time 1.
    const h = history({
      a1: { parents: [], time: 1 },
      b1: { parents: ["a1"], time: 1 },
      c1: { parents: ["b1"], time: 1 },
      f1: { parents: ["a1"], time: 1 },
      e1: { parents: ["c1", "f1"], time: 1 },
    });
    expect((await newCommits(h.cache(), h.oid("e1"), [h.oid("c1")], 100)).map((c) => h.nameOf(c.oid)).sort()).toEqual(["e1", "f1"]);
  });

  test("the count stops past the cap; a tip already known brings nothing", async () => {
    const spec: Record<string, { parents: string[]; time: number }> = {};
    for (let i = 0; i < 50; i++) spec[`c${i}`] = { parents: i ? [`c${i - 1}`] : [], time: i };
    const h = history(spec);
    expect((await newCommits(h.cache(), h.oid("c49"), [], 10)).length).toBe(11);
    expect(await newCommits(h.cache(), h.oid("c20"), [h.oid("c49")], 10)).toEqual([]);
  });

  test("one budget bounds the walks of a push: spent, the next ref's walk visits nothing", async () => {
    const spec: Record<string, { parents: string[]; time: number }> = {};
    for (let i = 0; i < 50; i++) spec[`c${i}`] = { parents: i ? [`c${i - 1}`] : [], time: i };
    const h = history(spec);
    const budget = { left: 30 };
    expect((await newCommits(h.cache(), h.oid("c49"), [], 100, budget)).length).toBe(30);
    expect(budget.left).toBe(0);
    expect(await newCommits(h.cache(), h.oid("c40"), [], 100, budget)).toEqual([]);
  });
});

const row = (id: string, kind: string, payload: Record<string, unknown>, t: number): ActivityRow => ({
  id,
  kind,
  payload,
  org: "o",
  repo: "r",
  actor: "ada",
  createdAt: t,
});

describe("entriesOf", () => {
  test("a landing's push and its change.landed rows (a stack of three) are one entry, the top first", () => {
    const entries = entriesOf([
      row("4", "change.landed", { change: 7, commit: "c", branch: "main", patchset: 2 }, 10),
      row("3", "change.landed", { change: 6, commit: "c", branch: "main", included_in: 7 }, 10),
      row("2", "change.landed", { change: 5, commit: "c", branch: "main", included_in: 7 }, 10),
      row(
        "1",
        "push",
        {
          via: "lander",
          commit: "c",
          branch: "main",
          change: 7,
          refs_total: 1,
          refs: [{ ref: "refs/heads/main", action: "updated", sha: "c", commits: 2, more: false, head: [] }],
        },
        10,
      ),
      row("0", "push", { via: "git" }, 5),
    ]);
    expect(entries.map((e) => [e.kind, e.landed, e.branch, e.refs?.[0]?.commits ?? null])).toEqual([
      ["landing", [7, 5, 6], "main", 2],
      ["push", [], null, null],
    ]);
  });

  test("a landing that moved nothing is one entry from its change.landed rows; unknown kinds and bad summaries are skipped", () => {
    const entries = entriesOf([
      row("2", "change.landed", { change: 3, commit: "x", branch: "main", patchset: 1 }, 9),
      row("1", "something.new", {}, 8),
      row("0", "push", { via: "git", refs: [{ ref: 5 }, "x", { ref: "refs/tags/v1", action: "created", sha: "s" }], refs_total: 3 }, 7),
    ]);
    expect(entries.map((e) => [e.kind, e.landed, e.refs])).toEqual([
      ["landing", [3], null],
      ["push", [], [{ ref: "refs/tags/v1", action: "created", sha: "s", commits: 0, more: false, head: [] }]],
    ]);
  });
});
