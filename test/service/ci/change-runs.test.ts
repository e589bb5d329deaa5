// POST …/changes/{number}/runs is idempotent per head and limited per person (issue 29 follow-up):
// a call while the head's `ci.trigger` is pending folds into it, a call once the head has runs
// enqueues nothing, and past SVC_CHANGE_RUNS_LIMIT_PER_PERSON calls an hour the next one is
// answered 429 with Retry-After (the doubling wait of people/throttle.ts). In process: the real
// context, the HTTP app and the job engine run by hand (runDue), on the test run's database.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { buildApp } from "../../../src/http/app.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { CI_TRIGGER } from "../../../src/services/ci/trigger.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { openTestContext, testTables } from "../../helpers/context.ts";

const { jobs, runs } = testTables;
const PASSWORD = "a long enough password";
const BASE = "http://svc.test";
const LIMIT = 6;
const root = mkdtempSync(join(tmpdir(), "svc-change-runs-"));
let ctx: Ctx & { close(): void };
let app: ReturnType<typeof buildApp>;

async function signIn(email: string): Promise<string> {
  const r = await app.handle(
    new Request(`${BASE}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    }),
  );
  return r.headers.get("set-cookie")!.split(";")[0]!;
}

async function call(cookie: string, method: string, path: string, body?: unknown): Promise<Response> {
  ctx.facts.fresh();
  return app.handle(
    new Request(`${BASE}${path}`, {
      method,
      headers: { cookie, origin: BASE, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

const WORKFLOW = `on: change
jobs:
  test:
    runs-on: self-hosted
    steps: [ { run: echo } ]
`;

/** The `ci.trigger` rows of change `number` at `head`: pending and done. */
async function triggers(number: number, head: string): Promise<{ pending: number; done: number }> {
  const rows = await ctx.db.read.select().from(jobs).where(eq(jobs.kind, CI_TRIGGER.name));
  const mine = rows.filter((r) => {
    const p = (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as { event: string; commit: string; change?: { number: number } };
    return p.event === "change" && p.commit === head && p.change?.number === number;
  });
  return { pending: mine.filter((r) => r.doneAt === null).length, done: mine.filter((r) => r.doneAt !== null).length };
}

beforeAll(async () => {
  ctx = await openTestContext({
    SVC_DATA_DIR: join(root, "data"),
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_BASE_URL: BASE,
    SVC_LOG: "error",
    SVC_CHANGE_RUNS_LIMIT_PER_PERSON: String(LIMIT),
  });
  app = buildApp(ctx);
});

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

test("a second call for the same head enqueues nothing (pending, then done); past the allowance 429 with Retry-After, per person", async () => {
  await createUserWithOrg(ctx, { org: "acme", email: "o@acme.test", name: "Owner", password: PASSWORD, role: "owner" });
  await createUserWithOrg(ctx, { org: "other", email: "w@other.test", name: "Writer", password: PASSWORD, role: "owner" });
  const owner = await signIn("o@acme.test");
  expect((await call(owner, "POST", "/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  const commit = async (branch: string, files: Record<string, string>) => {
    const operations = Object.entries(files).map(([path, content]) => ({ op: "put", path, content }));
    const r = await call(owner, "POST", "/v1/orgs/acme/repos/app/commits", { branch, message: branch, operations });
    expect(r.status).toBe(201);
    return ((await r.json()) as { commit: string }).commit;
  };
  await commit("main", { "README.md": "base\n" });
  const head = await commit("feature", { ".svc/workflows/ci.yml": WORKFLOW });
  const opened = await call(owner, "POST", "/v1/orgs/acme/repos/app/changes", { title: "a change", branch: "feature" });
  expect(opened.status).toBe(201);
  const number = ((await opened.json()) as { number: number }).number;
  const start = () => call(owner, "POST", `/v1/orgs/acme/repos/app/changes/${number}/runs`, {});

  // Opening the change (a writer's) enqueued its trigger; the call folds into it.
  expect(await triggers(number, head)).toEqual({ pending: 1, done: 0 });
  expect((await start()).status).toBe(202);
  expect((await start()).status).toBe(202);
  expect(await triggers(number, head)).toEqual({ pending: 1, done: 0 });

  // Done: the head has its run; another call enqueues nothing either.
  while ((await ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
  const made = await ctx.db.read
    .select()
    .from(runs)
    .where(and(eq(runs.commit, head), eq(runs.event, "change")));
  expect(made.length).toBe(1);
  expect(await triggers(number, head)).toEqual({ pending: 0, done: 1 });
  expect((await start()).status).toBe(202);
  expect(await triggers(number, head)).toEqual({ pending: 0, done: 1 });

  // A new head (a push to the change's branch) is triggered again: the fold is per head.
  const next = await commit("feature", { "b.txt": "b\n" });
  expect(await triggers(number, next)).toEqual({ pending: 1, done: 0 });
  expect((await start()).status).toBe(202);
  expect(await triggers(number, next)).toEqual({ pending: 1, done: 0 });

  // LIMIT calls made (4 above and these two); the next must wait: 429 with Retry-After, and nothing enqueued.
  expect((await start()).status).toBe(202);
  expect((await start()).status).toBe(202);
  const refused = await start();
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(((await refused.json()) as { error: string }).error).toContain("too many requests to start a change's runs");
  expect(await triggers(number, head)).toEqual({ pending: 0, done: 1 });
  expect(await triggers(number, next)).toEqual({ pending: 1, done: 0 });

  // Per person: someone else is not held back by the owner's calls (403 here: they may not write, but not 429).
  const writer = await signIn("w@other.test");
  expect((await call(writer, "POST", `/v1/orgs/acme/repos/app/changes/${number}/runs`, {})).status).not.toBe(429);
});
