// The runs list's "Run workflow" form (dispatchableWorkflows), in process with the real context
// and application: the parsed list is remembered per repository, ref and commit (a second view
// parses nothing: ctx.caches.dispatchable counts the hit), a broken or hostile workflow file does
// not break the page, and when parsing fails for a reason that may pass (a thread's time limit)
// the page still draws, says which files could not be read, and the answer is not remembered.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../../src/http/app.ts";
import { openTestContext } from "../../../helpers/context.ts";
import type { Ctx } from "../../../../src/services/context.ts";
import { createUserWithOrg } from "../../../../src/services/people/accounts.ts";
import { ThreadTaskError } from "../../../../src/util/thread-pool.ts";

const PASSWORD = "a long enough password";
const BASE = "http://svc.test";
const root = mkdtempSync(join(tmpdir(), "svc-dispatch-list-"));
let ctx: Ctx & { close(): void };
let app: ReturnType<typeof buildApp>;
let owner = "";

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

async function api(method: string, path: string, body?: unknown) {
  ctx.facts.fresh();
  const r = await app.handle(
    new Request(`${BASE}${path}`, {
      method,
      headers: { cookie: owner, origin: BASE, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return { status: r.status, body: r.status === 204 ? null : await r.json() };
}

async function commit(files: Record<string, string>, message = "ci") {
  const operations = Object.entries(files).map(([path, content]) => ({ op: "put", path, content }));
  const r = await api("POST", "/v1/orgs/acme/repos/app/commits", { branch: "main", message, operations });
  expect(r.status).toBe(201);
}

/** The runs list as the owner sees it. */
async function runsPage(): Promise<{ status: number; html: string }> {
  ctx.facts.fresh();
  const r = await app.handle(new Request(`${BASE}/acme/app/runs`, { headers: { cookie: owner } }));
  return { status: r.status, html: await r.text() };
}

const counts = () => ({ hits: ctx.caches.dispatchable.hits, misses: ctx.caches.dispatchable.misses });

const DEPLOY = `name: Deploy
on:
  workflow_dispatch:
    inputs:
      level: { type: choice, options: [low, high], default: low }
jobs:
  d:
    runs-on: self-hosted
    steps: [ { run: echo } ]
`;

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: BASE, SVC_LOG: "error" });
  app = buildApp(ctx);
  await createUserWithOrg(ctx, { org: "acme", email: "o@acme.example", name: "Owner", password: PASSWORD, role: "owner" });
  owner = await signIn("o@acme.example");
  expect((await api("POST", "/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  const chain = Array.from({ length: 300 }, (_, i) => `  j${i}: {${i ? `needs: j${i - 1},` : ""}runs-on: x, steps: [run: y]}\n`).join("");
  await commit({
    ".svc/workflows/deploy.yml": DEPLOY,
    ".svc/workflows/broken.yml": "on: [workflow_dispatch\njobs: {\n",
    ".svc/workflows/chain.yml": `on: workflow_dispatch\njobs:\n${chain}`,
  });
});

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the runs list's Run workflow form", () => {
  test("broken and hostile files are left out; the list is parsed once per commit (the second view is a cache hit)", async () => {
    const before = counts();
    const first = await runsPage();
    expect(first.status).toBe(200);
    expect(first.html).toContain("Run Deploy");
    expect(first.html).not.toContain("broken.yml");
    expect(first.html).not.toContain("chain.yml");
    expect(first.html).not.toContain("could not be read");
    expect(counts()).toEqual({ hits: before.hits, misses: before.misses + 1 });
    const second = await runsPage();
    expect(second.status).toBe(200);
    expect(second.html).toContain("Run Deploy");
    expect(counts()).toEqual({ hits: before.hits + 1, misses: before.misses + 1 });
  });

  test("a new commit of the default branch is parsed again", async () => {
    await commit({ ".svc/workflows/deploy.yml": DEPLOY.replace("name: Deploy", "name: Ship") }, "rename");
    const before = counts();
    const page = await runsPage();
    expect(page.html).toContain("Run Ship");
    expect(counts()).toEqual({ hits: before.hits, misses: before.misses + 1 });
  });

  for (const kind of ["time_limit", "busy"] as const)
    test(`parsing that fails for a reason that may pass (${kind}) still draws the page, names the files, and is not remembered`, async () => {
      await commit({ ".svc/workflows/deploy.yml": DEPLOY.replace("name: Deploy", `name: Deploy ${kind}`) }, kind);
      const threads = ctx.threads as unknown as { run: (...a: unknown[]) => Promise<unknown> };
      const real = threads.run.bind(threads);
      threads.run = (task: unknown, ...rest: unknown[]) =>
        task === "ci.parseWorkflow" ? Promise.reject(new ThreadTaskError(kind, "refused for the test")) : real(task, ...rest);
      let page: { status: number; html: string };
      try {
        page = await runsPage();
      } finally {
        delete (threads as { run?: unknown }).run;
      }
      expect(page.status).toBe(200);
      expect(page.html).toContain("could not be read just now");
      expect(page.html).toContain("<code>.svc/workflows/deploy.yml</code>");
      expect(page.html).not.toContain(`Run Deploy ${kind}`);
      // Not remembered: the next view parses again and offers the form, then the one after is a hit.
      const before = counts();
      const again = await runsPage();
      expect(again.html).toContain(`Run Deploy ${kind}`);
      expect(again.html).not.toContain("could not be read");
      expect(counts()).toEqual({ hits: before.hits, misses: before.misses + 1 });
      await runsPage();
      expect(counts()).toEqual({ hits: before.hits + 1, misses: before.misses + 1 });
    });
});
