// Rename redirects (issue 33) at the service and store: a rename records the old name in the same
// transaction; renaming twice leads every old name to the current one; creating or renaming a
// repository to an old name removes its redirect; a change of case records nothing; deleting the
// repository removes its redirects (cascade); and a private repository's old name leads nowhere for
// a caller who may not read it (the web answers as for a missing repository).
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc } from "drizzle-orm";
import type { User } from "../../../src/db/schema/index.ts";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo, deleteRepo, movedRepo, openRepo, patchRepo } from "../../../src/services/repos/repos.ts";
import { createFork } from "../../../src/services/repos/forks.ts";

const { repoRedirects } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-redirects-"));
let ctx: Ctx & { close(): void };
let owner: Principal;
let outsider: Principal;
const anonymous: Principal = { kind: "anonymous" };

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });
const rename = async (from: string, to: string) => patchRepo(ctx, await openRepo(ctx, owner, "acme", from), { name: to });
/** Every redirect row as `old → current name`, by old name. */
async function rows(): Promise<string[]> {
  const all = await ctx.db.read.select().from(repoRedirects).orderBy(asc(repoRedirects.name));
  const out: string[] = [];
  for (const r of all) out.push(`${r.name} → ${(await movedRepo(ctx, owner, "acme", r.name))?.name ?? "?"}`);
  return out;
}

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  owner = session(await createUserWithOrg(ctx, { org: "acme", email: "olga@example.com", name: "olga", password: "a long enough password", role: "owner" }));
  outsider = session(
    await createUserWithOrg(ctx, { org: "rival", email: "rita@example.com", name: "rita", password: "a long enough password", role: "owner" }),
  );
});
beforeEach(() => ctx.facts.fresh());
afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

test("renaming twice leads both old names to the current one; the API's lookup does not follow", async () => {
  await createRepo(ctx, owner, "acme", { name: "alpha", public: true });
  await rename("alpha", "beta");
  await rename("beta", "gamma");
  expect(await movedRepo(ctx, owner, "acme", "alpha")).toEqual({ org: "acme", name: "gamma" });
  expect(await movedRepo(ctx, owner, "acme", "BETA")).toEqual({ org: "acme", name: "gamma" });
  expect(await movedRepo(ctx, anonymous, "acme", "beta")).toEqual({ org: "acme", name: "gamma" });
  expect(await movedRepo(ctx, owner, "acme", "gamma")).toBeNull();
  expect(await movedRepo(ctx, owner, "nowhere", "alpha")).toBeNull();
  await expect(openRepo(ctx, owner, "acme", "alpha")).rejects.toMatchObject({ code: "not_found" });
});

test("a repository created or renamed to an old name removes that redirect; renaming back removes it too", async () => {
  await createRepo(ctx, owner, "acme", { name: "one", public: true });
  await rename("one", "two");
  await rename("two", "three");
  // Created at an old name: that name is the new repository's, the other old name still leads on.
  await createRepo(ctx, owner, "acme", { name: "One", public: true });
  expect(await movedRepo(ctx, owner, "acme", "one")).toBeNull();
  expect(await movedRepo(ctx, owner, "acme", "two")).toEqual({ org: "acme", name: "three" });
  // Renamed back to its own old name: that redirect goes, and the name it leaves leads to it.
  await rename("three", "two");
  expect(await movedRepo(ctx, owner, "acme", "two")).toBeNull();
  expect(await movedRepo(ctx, owner, "acme", "three")).toEqual({ org: "acme", name: "two" });
  // A fork made at an old name takes it as well.
  await createFork(ctx, await openRepo(ctx, owner, "acme", "two"), { org: "acme", name: "three" });
  expect(await movedRepo(ctx, owner, "acme", "three")).toBeNull();
});

test("a change of case records no redirect", async () => {
  await createRepo(ctx, owner, "acme", { name: "casey", public: true });
  await rename("casey", "Casey");
  expect((await rows()).filter((r) => r.toLowerCase().startsWith("casey"))).toEqual([]);
});

test("deleting the repository removes its redirects", async () => {
  await createRepo(ctx, owner, "acme", { name: "temp", public: true });
  await rename("temp", "temp2");
  expect(await movedRepo(ctx, owner, "acme", "temp")).toEqual({ org: "acme", name: "temp2" });
  await deleteRepo(ctx, await openRepo(ctx, owner, "acme", "temp2"));
  expect(await movedRepo(ctx, owner, "acme", "temp")).toBeNull();
  expect((await rows()).filter((r) => r.startsWith("temp"))).toEqual([]);
});

test("a private repository's old name leads nowhere for whoever may not read it", async () => {
  await createRepo(ctx, owner, "acme", { name: "secret", public: false });
  await rename("secret", "covert");
  expect(await movedRepo(ctx, owner, "acme", "secret")).toEqual({ org: "acme", name: "covert" });
  expect(await movedRepo(ctx, outsider, "acme", "secret")).toBeNull();
  expect(await movedRepo(ctx, anonymous, "acme", "secret")).toBeNull();
  // Made public, the old name leads there for everyone.
  await patchRepo(ctx, await openRepo(ctx, owner, "acme", "covert"), { public: true });
  ctx.facts.fresh();
  expect(await movedRepo(ctx, anonymous, "acme", "secret")).toEqual({ org: "acme", name: "covert" });
});
