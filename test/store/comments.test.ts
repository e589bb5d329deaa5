// The comment queries of issue 28 (services/changes/store-comments.ts) on both databases: paging
// by (created_at, id), the path filter that brings a thread's replies along, drafts seen by their
// author only, the reply count, handles matched case-insensitively, and the re-anchor watermark.
import { expect, test } from "bun:test";
import { tables } from "../../src/db/tables.ts";
import * as cstore from "../../src/services/changes/store-comments.ts";
import type { CommentRow } from "../../src/services/changes/store-comments.ts";
import { describeBoth } from "../helpers/db.ts";

const row = (o: Partial<CommentRow> & { id: string; createdAt: number }): CommentRow => ({
  changeId: "c1",
  repoId: "r1",
  authorUserId: "u1",
  state: "published",
  body: o.id,
  bodyHtml: `<p>${o.id}</p>`,
  renderVersion: 1,
  threadId: o.id,
  inReplyTo: null,
  reviewId: null,
  patchset: 1,
  path: null,
  side: null,
  line: null,
  startLine: null,
  commitOid: null,
  blobOid: null,
  anchorText: null,
  contextText: null,
  outdated: false,
  anchoredPatchset: 1,
  curLine: null,
  curStartLine: null,
  suggestion: null,
  appliedCommit: null,
  resolved: false,
  resolvedByUserId: null,
  resolvedAt: null,
  updatedAt: o.createdAt,
  editedAt: null,
  ...o,
});

describeBoth("comment store", (_dialect, open) => {
  test("lists, filters, pages, counts and re-anchors", async () => {
    const { db } = await open();
    await db.transaction(async (tx) => {
      const { orgs, repos, users, changes } = tables(tx);
      await tx.insert(orgs).values({ id: "o1", name: "acme", kind: "org", createdAt: 1 });
      await tx.insert(repos).values({ id: "r1", orgId: "o1", name: "app", public: false, createdAt: 1 });
      await tx.insert(users).values([
        { id: "u1", handle: "Ada", email: "ada@example.com", name: "Ada", passwordHash: "x", createdAt: 1 },
        { id: "u2", handle: "bo", email: "bo@example.com", name: "Bo", passwordHash: "x", createdAt: 1 },
      ]);
      await tx.insert(changes).values(
        [1, 2].map((n) => ({
          id: `c${n}`,
          repoId: "r1",
          number: n,
          title: "t",
          state: "open",
          branch: `b${n}`,
          target: "main",
          patchset: 2,
          createdAt: 1,
          updatedAt: 1,
        })),
      );
      await cstore.insertComments(tx, [
        row({ id: "a", createdAt: 10 }),
        row({ id: "b", createdAt: 20, path: "f.txt", side: "new", line: 3, curLine: 3 }),
        row({ id: "c", createdAt: 20, threadId: "b", inReplyTo: "b" }),
        row({ id: "d", createdAt: 30, state: "draft", authorUserId: "u2", path: "g.txt", side: "new", line: 1 }),
        row({ id: "e", createdAt: 40, patchset: 2, anchoredPatchset: 2, path: "g.txt", side: "new", line: 2 }),
        row({ id: "x", createdAt: 5, changeId: "c2" }),
      ]);
    });
    const ids = (rows: CommentRow[]) => rows.map((r) => r.id);
    expect(ids(await cstore.listComments(db.read, "c1", {}, 10))).toEqual(["a", "b", "c", "e"]);
    expect(ids(await cstore.listComments(db.read, "c1", { viewerUserId: "u2" }, 10))).toEqual(["a", "b", "c", "d", "e"]);
    expect(ids(await cstore.listComments(db.read, "c1", { after: [20, "b"] }, 10))).toEqual(["c", "e"]);
    expect(ids(await cstore.listComments(db.read, "c1", { path: "f.txt" }, 10))).toEqual(["b", "c"]);
    expect(ids(await cstore.listComments(db.read, "c1", { patchset: 2 }, 10))).toEqual(["e"]);
    expect(await cstore.repliesOf(db.read, "b")).toBe(1);
    expect(await cstore.repliesOf(db.read, "a")).toBe(0);
    expect((await cstore.usersByHandles(db.read, ["ada", "BO", "nobody"])).map((u) => u.handle).sort()).toEqual(["Ada", "bo"]);
    expect([...(await cstore.existingChangeNumbers(db.read, "r1", [1, 2, 3]))].sort()).toEqual([1, 2]);
    expect(await cstore.commentById(db.read, "c2", "a")).toBeNull();
    expect(ids(await cstore.behindComments(db.read, "c1", 2, 10))).toEqual(["b"]);
    await db.transaction(async (tx) => {
      await cstore.writeAnchor(tx, "b", 2, { outdated: false, curLine: 5, curStartLine: null });
      // A late write for an older patchset changes nothing.
      await cstore.writeAnchor(tx, "b", 1, { outdated: true, curLine: null, curStartLine: null });
    });
    expect(await cstore.commentById(db.read, "c1", "b")).toMatchObject({ anchoredPatchset: 2, curLine: 5, outdated: false });
    expect(ids(await cstore.behindComments(db.read, "c1", 2, 10))).toEqual([]);
    expect((await cstore.changeById(db.read, "c2"))?.number).toBe(2);
  });
});
