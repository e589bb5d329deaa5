// The repository layout's viewer facts in-process (issue 33), on SQLite and PostgreSQL
// (SVC_TEST_DATABASE): the caller's own watch level (null when not watching, undefined when not
// a signed-in person) follows Watch and Unwatch, and Sync now is offered only on a mirror, only to
// whoever the API's repo:sync rule allows.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Ctx } from "../../../src/services/context.ts";
import { ANONYMOUS, type Principal } from "../../../src/services/access/principal.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { viewerFacts } from "../../../src/services/web/chrome.ts";
import { watchFromForm } from "../../../src/services/web/repo-actions.ts";
import { repoChrome } from "../../../src/services/web/views.ts";
import { openTestContext } from "../../helpers/context.ts";

const root = mkdtempSync(join(tmpdir(), "svc-chrome-"));
let ctx: Ctx & { close(): void };
let ada: Principal;
let vi: Principal;

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  const a = await createUserWithOrg(ctx, {
    org: "acme",
    email: "ada@example.com",
    name: "Ada",
    password: "a long enough password",
    role: "owner",
    handle: "ada",
  });
  ada = { kind: "session", user: a, sessionId: "a" };
  const v = await createUserWithOrg(ctx, {
    org: "acme",
    email: "vi@example.com",
    name: "Vi",
    password: "a long enough password",
    role: "viewer",
    handle: "vi",
  });
  vi = { kind: "session", user: v, sessionId: "v" };
  await createRepo(ctx, ada, "acme", { name: "app", public: true });
});
afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

test("the watch level follows Watch and Unwatch; anonymous has none", async () => {
  expect(await viewerFacts(ctx, await openRepo(ctx, ada, "acme", "app"))).toEqual({ watching: null, canSync: false });
  expect((await viewerFacts(ctx, await openRepo(ctx, ANONYMOUS, "acme", "app"))).watching).toBeUndefined();
  await watchFromForm(ctx, vi, "acme", "app", true);
  // The next page is a new request: its first lookup re-reads the fact cache (as src/http/server.ts does).
  ctx.facts.fresh();
  expect((await viewerFacts(ctx, await openRepo(ctx, vi, "acme", "app"))).watching).toBe("all");
  // Another person's subscription is not ada's.
  expect((await viewerFacts(ctx, await openRepo(ctx, ada, "acme", "app"))).watching).toBeNull();
  const chrome = await repoChrome(ctx, await openRepo(ctx, vi, "acme", "app"));
  expect({ watching: chrome.watching, watchers: chrome.repo.watcher_count }).toEqual({ watching: "all", watchers: 1 });
  await watchFromForm(ctx, vi, "acme", "app", false);
  ctx.facts.fresh();
  expect((await viewerFacts(ctx, await openRepo(ctx, vi, "acme", "app"))).watching).toBeNull();
});
