// Explore's order in-process (issue 33), on SQLite and PostgreSQL (SVC_TEST_DATABASE): a
// repository is active when it is made and whenever a write moves one of its refs (publish, which
// pushes, landings, mirror syncs and web commits all go through); explore lists public ones only,
// most recently active first, a page at a time, through the (public, active_at) index.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { x } from "../../../src/db/dialect.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { ANONYMOUS } from "../../../src/services/access/principal.ts";
import { exploreRepos } from "../../../src/services/discovery/explore.ts";
import { countRepos } from "../../../src/services/discovery/search.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo, patchRepo } from "../../../src/services/repos/repos.ts";
import { openTestContext, TEST_DATABASE } from "../../helpers/context.ts";

const root = mkdtempSync(join(tmpdir(), "svc-explore-"));
let ctx: Ctx & { close(): void };
let ada: Principal;

const names = async (who: Principal = ANONYMOUS, q: { limit?: number; cursor?: string } = {}) => {
  const r = await exploreRepos(ctx, who, q);
  return { names: r.repos.map((x) => x.name), next: r.next_cursor };
};

/** Resolves once the clock has moved past the millisecond it was called in (no fixed sleep). */
async function nextMillisecond(): Promise<void> {
  const t = Date.now();
  while (Date.now() <= t) await new Promise((r) => setImmediate(r));
}

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  const user = await createUserWithOrg(ctx, {
    org: "acme",
    email: "ada@example.com",
    name: "Ada",
    password: "a long enough password",
    role: "owner",
    handle: "ada",
  });
  ada = { kind: "session", user, sessionId: "test" };
  for (const [name, isPublic] of [
    ["one", true],
    ["two", true],
    ["hush", false],
    ["three", true],
  ] as const) {
    await createRepo(ctx, ada, "acme", { name, public: isPublic, description: `the ${name} widget` });
    // Distinct creation times: explore's order is the order of activity, to the millisecond.
    await nextMillisecond();
  }
});
afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

test("newest first; a commit moves a repository to the top; private never listed, even to its owner", async () => {
  expect((await names()).names).toEqual(["three", "two", "one"]);
  await createCommit(ctx, await openRepo(ctx, ada, "acme", "one"), { message: "x", operations: [{ op: "put", path: "a.txt", content: "1\n" }] });
  await nextMillisecond();
  await createCommit(ctx, await openRepo(ctx, ada, "acme", "hush"), { message: "x", operations: [{ op: "put", path: "a.txt", content: "1\n" }] });
  expect((await names()).names).toEqual(["one", "three", "two"]);
  expect((await names(ada)).names).toEqual(["one", "three", "two"]);
  // Made public, it shows where its activity places it.
  await patchRepo(ctx, await openRepo(ctx, ada, "acme", "hush"), { public: true });
  expect((await names()).names).toEqual(["hush", "one", "three", "two"]);
  await patchRepo(ctx, await openRepo(ctx, ada, "acme", "hush"), { public: false });
});

test("pages by cursor, each repository once", async () => {
  const first = await names(ANONYMOUS, { limit: 2 });
  expect(first.names).toEqual(["one", "three"]);
  const second = await names(ANONYMOUS, { limit: 2, cursor: first.next! });
  expect(second).toEqual({ names: ["two"], next: null });
});

test("the search count has the search's visibility", async () => {
  expect(await countRepos(ctx, ANONYMOUS, { q: "widget" })).toBe(3);
  expect(await countRepos(ctx, ada, { q: "widget" })).toBe(4);
  expect(await countRepos(ctx, ada, { q: "thr" })).toBe(1);
});

test("explore reads the (public, active_at) index", async () => {
  const query = sql`SELECT r.id FROM repos r WHERE r.public = TRUE AND r.active_at IS NOT NULL ORDER BY r.active_at DESC, r.id DESC LIMIT 31`;
  if (TEST_DATABASE === "sqlite") {
    const plan = await x(ctx.db.read).rows<{ detail: string }>(sql`EXPLAIN QUERY PLAN ${query}`);
    expect(plan.map((p) => p.detail).join("\n")).toContain("repos_public_active_idx");
  } else {
    // A handful of rows: the planner would rightly scan; with scans priced out it must be able to use the index.
    const plan = await ctx.db.transaction(async (tx) => {
      await x(tx).run(sql`SET LOCAL enable_seqscan = off`);
      return x(tx).rows<Record<string, string>>(sql`EXPLAIN ${query}`);
    });
    expect(plan.map((p) => Object.values(p)[0]).join("\n")).toContain("repos_public_active_idx");
  }
});
