// Issues in process, on either database (SVC_TEST_DATABASE=pg for PostgreSQL): numbers shared with
// changes stay unique under concurrent creators (the counter row), text search (FTS5 / tsvector)
// matches word prefixes in title and body and follows edits, filters combine, each issue appears
// once across pages while issues change, and the rate limit counts issues and comments together.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { User } from "../../../src/db/schema/index.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createChange } from "../../../src/services/changes/changes.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { postIssueComment } from "../../../src/services/issues/comments.ts";
import { createIssue, listIssues, patchIssue, searchWords } from "../../../src/services/issues/issues.ts";
import { createLabel } from "../../../src/services/issues/labels.ts";
import { referencesIn } from "../../../src/services/issues/xref.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { openTestContext } from "../../helpers/context.ts";

const root = mkdtempSync(join(tmpdir(), "svc-issues-"));
let ctx: Ctx & { close(): void };
let owner: Principal;

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });
const t = (repo: string) => (ctx.facts.fresh(), openRepo(ctx, owner, "acme", repo));

beforeAll(async () => {
  ctx = await openTestContext({
    SVC_DATA_DIR: join(root, "data"),
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_BASE_URL: "http://svc.test",
    SVC_LOG: "error",
    SVC_ISSUE_RATE_LIMIT: "1000",
  });
  const olga = await createUserWithOrg(ctx, { org: "acme", email: "olga@example.com", name: "Olga", password: "a long enough password", role: "owner" });
  owner = session(olga);
});

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("numbers", () => {
  test("issues and changes opened concurrently take distinct consecutive numbers", async () => {
    await createRepo(ctx, owner, "acme", { name: "race" });
    await createCommit(ctx, await t("race"), { message: "base", operations: [{ op: "put", path: "a.txt", content: "a\n" }] });
    for (let i = 0; i < 5; i++)
      await createCommit(ctx, await t("race"), { branch: `b${i}`, message: `b${i}`, operations: [{ op: "put", path: `b${i}.txt`, content: "b\n" }] });
    const target = await t("race");
    const made = await Promise.all([
      ...Array.from({ length: 15 }, (_, i) => createIssue(ctx, target, { title: `issue ${i}` }).then((x) => x.number)),
      ...Array.from({ length: 5 }, (_, i) => createChange(ctx, target, { title: `change ${i}`, branch: `b${i}` }).then((x) => x.number)),
    ]);
    expect([...made].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});

describe("search and filters", () => {
  test("words match prefixes in title or body, all of them; edits are searched", async () => {
    await createRepo(ctx, owner, "acme", { name: "search" });
    const repo = await t("search");
    await createLabel(ctx, repo, { name: "bug", color: "ff0000" });
    const a = await createIssue(ctx, repo, { title: "Crash when uploading", body: "Stack trace attached", labels: ["bug"] });
    const b = await createIssue(ctx, repo, { title: "Upload is slow", body: "Café crashes too" });
    const c = await createIssue(ctx, repo, { title: "Unrelated" });
    const find = async (q: Record<string, string>) => (await listIssues(ctx, await t("search"), { state: "all", ...q })).issues.map((i) => i.number);
    expect(await find({ q: "crash" })).toEqual([b.number, a.number]);
    expect(await find({ q: "upload crash" })).toEqual([b.number, a.number]);
    expect(await find({ q: "upload trace" })).toEqual([a.number]);
    expect(await find({ q: "CAFÉ" })).toEqual([b.number]);
    expect(await find({ q: "crash", label: "bug" })).toEqual([a.number]);
    expect(await find({ q: "zzz" })).toEqual([]);
    await patchIssue(ctx, repo, c.number, { title: "Crash in the unrelated part" });
    expect(await find({ q: "crash" })).toEqual([c.number, b.number, a.number]);
    await patchIssue(ctx, repo, c.number, { title: "Renamed", body: "nothing here" });
    expect(await find({ q: "crash" })).toEqual([b.number, a.number]);
    // Operators and quotes are words, not syntax.
    expect(await find({ q: '"crash" OR NOT * -upload' })).toEqual([]);
    expect(await find({ q: "_ __x 9 ::" })).toEqual([]);
    // `_` separates words in both text indexes: "crash_" is the word "crash".
    expect(await find({ q: "crash_" })).toEqual([b.number, a.number]);
    expect(searchWords('a"b OR c*_d')).toEqual(["a", "b", "or", "c", "d"]);
  });

  test("paging by updated: each issue once while the issues change between pages", async () => {
    await createRepo(ctx, owner, "acme", { name: "paging" });
    const all: number[] = [];
    for (let i = 0; i < 12; i++) all.push((await createIssue(ctx, await t("paging"), { title: `p${i}` })).number);
    for (const sort of ["updated", "comments"]) {
      const seen: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await listIssues(ctx, await t("paging"), { sort, limit: "5", ...(cursor ? { cursor } : {}) });
        seen.push(...page.issues.map((i) => i.number));
        cursor = page.next_cursor ?? undefined;
        const unseen = all.filter((n) => !seen.includes(n));
        for (const n of [seen[0]!, ...unseen.slice(-1)]) await postIssueComment(ctx, await t("paging"), n, { body: "bump" });
        await createIssue(ctx, await t("paging"), { title: "late" });
      } while (cursor);
      expect(seen.filter((n) => all.includes(n)).sort((a, b) => a - b)).toEqual([...all].sort((a, b) => a - b));
      expect(new Set(seen).size).toBe(seen.length);
      all.push(...(await listIssues(ctx, await t("paging"), { state: "all", limit: "100" })).issues.map((i) => i.number).filter((n) => !all.includes(n)));
    }
  });
});

describe("references", () => {
  test("#N and the closing keywords in commit and change text", () => {
    expect(referencesIn("Fixes #12, see #3 and org/repo#4; closes: #5 resolved #6 fixed #7 &#8 x#9")).toEqual({
      mentioned: [12, 3, 5, 6, 7],
      closes: [12, 5, 6, 7],
    });
    expect(referencesIn("prefix #1 suffixed#2 #3a")).toEqual({ mentioned: [1], closes: [] });
  });
});
