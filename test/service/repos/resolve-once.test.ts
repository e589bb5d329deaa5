// Resolve once (issue 26): a repository page resolves its target once, decides each action once,
// and reads the ref list once. In-process with the real context and application; the counts come
// from spies on the functions that do each thing, so they hold whatever the fact cache holds.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../src/http/app.ts";
import { openTestContext } from "../../helpers/context.ts";
import type { Ctx } from "../../../src/services/context.ts";
import * as access from "../../../src/services/access/access.ts";
import * as gitStore from "../../../src/services/git/store.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";

const PASSWORD = "a long enough password";
const BASE = "http://svc.test";
const root = mkdtempSync(join(tmpdir(), "svc-resolve-once-"));
let ctx: Ctx & { close(): void };
let app: ReturnType<typeof buildApp>;
let owner = "";

async function call(method: string, path: string, cookie: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { cookie, origin: BASE };
  if (body !== undefined) headers["content-type"] = "application/json";
  return app.handle(new Request(`${BASE}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
}

/** Runs `fn` and counts target resolutions, `decide` calls and ref-list reads while it runs. */
async function counted(fn: () => Promise<Response>): Promise<{ status: number; resolutions: number; decides: string[]; refLists: number }> {
  ctx.facts.fresh();
  let resolutions = 0;
  const getPair = ctx.facts.getPair.bind(ctx.facts);
  ctx.facts.getPair = ((kind: string, a: string, b: string, load: () => unknown) => {
    if (kind === "repo-target") resolutions++;
    return getPair(kind as never, a, b, load as never);
  }) as typeof ctx.facts.getPair;
  const decide = spyOn(access, "decide");
  const snapshots = spyOn(gitStore, "snapshotRows");
  const refLists = spyOn(gitStore, "readRefs");
  try {
    const res = await fn();
    await res.arrayBuffer();
    return {
      status: res.status,
      resolutions,
      decides: decide.mock.calls.map(([, action]) => (typeof action === "string" ? action : action.kind)),
      refLists: snapshots.mock.calls.length + refLists.mock.calls.length,
    };
  } finally {
    ctx.facts.getPair = getPair;
    decide.mockRestore();
    snapshots.mockRestore();
    refLists.mockRestore();
  }
}

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: BASE, SVC_LOG: "error" });
  app = buildApp(ctx);
  await createUserWithOrg(ctx, { org: "acme", email: "o@acme.example", name: "Owner", password: PASSWORD, role: "owner" });
  const login = await app.handle(
    new Request(`${BASE}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "o@acme.example", password: PASSWORD }),
    }),
  );
  owner = login.headers.get("set-cookie")!.split(";")[0]!;
  expect((await call("POST", "/v1/orgs/acme/repos", owner, { name: "app" })).status).toBe(201);
  const put = await call("POST", "/v1/orgs/acme/repos/app/commits", owner, {
    branch: "main",
    message: "first",
    operations: [{ op: "put", path: "src/app.ts", content: "export const x = 1;\n" }],
  });
  expect(put.status).toBe(201);
});

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("a file page resolves once", () => {
  test("GET /:org/:repo/blob/main/src/app.ts: 1 resolution, read + the viewer's admin and write, 1 ref list", async () => {
    const c = await counted(() => call("GET", "/acme/app/blob/main/src/app.ts", owner));
    expect(c.status).toBe(200);
    expect({ resolutions: c.resolutions, decides: c.decides.sort(), refLists: c.refLists }).toEqual({
      resolutions: 1,
      decides: ["repo:admin", "repo:read", "repo:write"],
      refLists: 1,
    });
  });
});
