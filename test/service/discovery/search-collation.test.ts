// Repository search on a PostgreSQL database made with a libc locale, en_US.UTF-8: what most
// installed clusters default to (the tests' own clusters are C.UTF-8). Under it U+FFFF sorts
// before the letters and punctuation is skipped at first, so a name tier compared in the
// database's collation found only the exact name for a prefix and ordered names unlike SQLite.
// The tiers compare in byte order whatever the database's collation. The locale is compiled by
// the test (localedef, into a directory the server is given as LOCPATH), so nothing is asked of
// the machine's installed locales. Always on PostgreSQL (its own server), whatever SVC_TEST_DATABASE.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { x } from "../../../src/db/dialect.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { ANONYMOUS } from "../../../src/services/access/principal.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { countRepos, searchRepos } from "../../../src/services/discovery/search.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo } from "../../../src/services/repos/repos.ts";
import { openTestContext } from "../../helpers/context.ts";
import { type PostgresServer, startPostgres } from "../../helpers/postgres.ts";

const root = mkdtempSync(join(tmpdir(), "svc-search-collation-"));
let server: PostgresServer;
let ctx: Ctx & { close(): void };
let ada: Principal;

beforeAll(async () => {
  const locales = join(root, "locales");
  mkdirSync(locales);
  const made = Bun.spawnSync(["localedef", "-i", "en_US", "-f", "UTF-8", join(locales, "en_US.UTF-8")], { stderr: "pipe" });
  if (made.exitCode !== 0) throw new Error(`localedef could not compile en_US.UTF-8: ${made.stderr.toString()}`);
  // The server runs as an unprivileged user when the tests run as root: it must read the locale.
  chmodSync(root, 0o755);
  Bun.spawnSync(["chmod", "-R", "a+rX", locales]);
  server = await startPostgres({ env: { LOCPATH: locales } });
  const db = await server.createDatabase({ locale: "en_US.UTF-8" });
  ctx = await openTestContext({
    SVC_DATA_DIR: join(root, "data"),
    SVC_DATABASE_URL: db.url,
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_BASE_URL: "http://svc.test",
    SVC_LOG: "error",
  });
  const user = await createUserWithOrg(ctx, {
    org: "acme",
    email: "ada@example.com",
    name: "Ada",
    password: "a long enough password",
    role: "owner",
    handle: "ada",
  });
  ada = { kind: "session", user, sessionId: "test" };
  for (const name of ["abz", "a-b", "Ab.x", "ac", "abc", "ab-c", "ab", "a_b"])
    await createRepo(ctx, ada, "acme", { name, public: true, description: "a repository" });
}, 120_000);

afterAll(async () => {
  ctx?.close();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

test("the database collates as en_US.UTF-8 does (what would break a prefix range in its own collation)", async () => {
  const row = await x(ctx.db.read).row<{ collation: string; in_range: boolean }>(
    sql`SELECT datcollate AS collation, ('abc' < ('ab' || U&'\\FFFF')) AS in_range FROM pg_database WHERE datname = current_database()`,
  );
  expect(row).toEqual({ collation: "en_US.UTF-8", in_range: false });
});

test("a prefix finds every name that starts with it, in byte order as on SQLite; paging and the count agree", async () => {
  const want = ["ab", "ab-c", "Ab.x", "abc", "abz"];
  expect((await searchRepos(ctx, ANONYMOUS, { q: "ab" })).hits.map((h) => h.name)).toEqual(want);
  const paged: string[] = [];
  let cursor: string | undefined;
  do {
    const r = await searchRepos(ctx, ada, { q: "AB", limit: 1, cursor });
    paged.push(...r.hits.map((h) => h.name));
    cursor = r.next_cursor ?? undefined;
  } while (cursor && paged.length < 20);
  expect(paged).toEqual(want);
  expect(await countRepos(ctx, ANONYMOUS, { q: "ab" })).toBe(want.length);
  // Punctuation counts: the name tiers of "a-" hold a-b alone; then the word tier ("a"*: every
  // other name, in the order they were made).
  expect((await searchRepos(ctx, ANONYMOUS, { q: "a-" })).hits.map((h) => h.name)).toEqual(["a-b", "abz", "Ab.x", "ac", "abc", "ab-c", "ab", "a_b"]);
});
