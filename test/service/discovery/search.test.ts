// Repository search in-process, on SQLite and PostgreSQL (SVC_TEST_DATABASE): the same answers on
// both — the exact name, names starting with the query, names whose words match, then
// description-only matches (document order), each repository once across pages and tiers — and a
// result count equal to what paging through the search yields (a repository matching by name and
// by description counted once).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { x } from "../../../src/db/dialect.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { ANONYMOUS } from "../../../src/services/access/principal.ts";
import { countRepos, searchRepos } from "../../../src/services/discovery/search.ts";
import { inWordView } from "../../../src/services/discovery/store.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { openTestContext, TEST_DATABASE } from "../../helpers/context.ts";

const root = mkdtempSync(join(tmpdir(), "svc-search-"));
let ctx: Ctx & { close(): void };
let ada: Principal;

/** Every hit for `q`, `limit` at a time, following the cursor to the end. */
async function pageThrough(who: Principal, q: string, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const r = await searchRepos(ctx, who, { q, limit, cursor });
    seen.push(...r.hits.map((h) => h.name));
    cursor = r.next_cursor ?? undefined;
  } while (cursor && seen.length < 50);
  return seen;
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
  // Made in this order (the word tiers' order); description-only matches first, so document order alone would put them first.
  for (const [name, isPublic, description] of [
    ["notes", true, "Notes about the parser and its grammar"],
    ["docs", true, "PARSER documentation"],
    ["lib-parser", true, "a library"],
    ["hidden-parser", false, "private"],
    ["Parser-Tools", true, "tools for the parser"],
    ["parser", true, "the parser itself"],
    ["parsers", true, "more than one"],
    ["unrelated", true, "nothing to see"],
    ["pars", true, "a shorter name"],
  ] as const) {
    await createRepo(ctx, ada, "acme", { name, public: isPublic, description });
  }
});
afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

test("tiers in order, whatever the case; private repositories only for their org's members", async () => {
  const anonymous = ["parser", "Parser-Tools", "parsers", "lib-parser", "notes", "docs"];
  expect((await searchRepos(ctx, ANONYMOUS, { q: "Parser" })).hits.map((h) => h.name)).toEqual(anonymous);
  expect((await searchRepos(ctx, ada, { q: "parser" })).hits.map((h) => h.name)).toEqual([
    "parser",
    "Parser-Tools",
    "parsers",
    "lib-parser",
    "hidden-parser",
    "notes",
    "docs",
  ]);
});

test("paging one or two at a time crosses every tier, each repository once", async () => {
  const all = await pageThrough(ada, "parser", 100);
  expect(all).toHaveLength(7);
  expect(await pageThrough(ada, "parser", 1)).toEqual(all);
  expect(await pageThrough(ada, "parser", 2)).toEqual(all);
  expect(await pageThrough(ANONYMOUS, "pars", 1)).toEqual(["pars", "parser", "Parser-Tools", "parsers", "lib-parser", "notes", "docs"]);
});

test("the count is what paging yields: a name and description match counted once", async () => {
  for (const [who, q] of [
    [ANONYMOUS, "parser"],
    [ada, "parser"],
    [ada, "pars"],
    [ANONYMOUS, "the parser"],
    [ada, "lib parser"],
    [ada, "nothing-here"],
    [ANONYMOUS, "notes"],
  ] as const) {
    expect({ q, n: await countRepos(ctx, who, { q }) }).toEqual({ q, n: (await pageThrough(who, q, 100)).length });
  }
  expect(await countRepos(ctx, ANONYMOUS, { q: "parser" })).toBe(6);
});

test("PostgreSQL: the search indexes write straight into their trees (no pending list for every search to read)", async () => {
  if (TEST_DATABASE !== "pg") return;
  const rows = await x(ctx.db.read).rows<{ name: string; options: string[] | null }>(
    sql`SELECT relname AS name, reloptions AS options FROM pg_class WHERE relname IN ('repos_search_tsv_idx', 'repos_name_tsv_idx') ORDER BY relname`,
  );
  expect(rows).toEqual([
    { name: "repos_name_tsv_idx", options: ["fastupdate=off"] },
    { name: "repos_search_tsv_idx", options: ["fastupdate=off"] },
  ]);
});

test("PostgreSQL: the word tiers are planned for their own words, in their view only (not a generic plan; the pooled connection keeps its setting)", async () => {
  if (TEST_DATABASE !== "pg") return;
  const mode = async (q: Parameters<typeof x>[0]) => (await x(q).rows<{ plan_cache_mode: string }>(sql`SHOW plan_cache_mode`))[0]!.plan_cache_mode;
  expect(await inWordView(ctx.db, mode)).toBe("force_custom_plan");
  for (let i = 0; i < 5; i++) expect(await mode(ctx.db.read)).toBe("auto");
});
