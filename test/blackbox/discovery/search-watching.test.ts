// Repository search and watching over real HTTP (SPEC §2.1 watcher_count, §2.2; DECISIONS §3).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { mintToken, startServer, type RunningServer } from "../../helpers/server.ts";

const T = 60_000;
let server: RunningServer;
let ada: Person;
let bob: Person;
let cy: Person;
let serviceToken: string;
let boundToken: string;

beforeAll(async () => {
  server = await startServer();
  ada = await person(server, "acme", "ada@example.com", "owner", { handle: "ada" });
  bob = await person(server, "acme", "bob@example.com", "viewer", { handle: "bob" });
  cy = await person(server, "beta", "cy@example.com", "owner", { handle: "cy" });
  const a = caller(server, ada);
  const c = caller(server, cy);
  const make = async (who: ReturnType<typeof caller>, org: string, name: string, pub: boolean, description?: string) =>
    expect((await who.post(`/v1/orgs/${org}/repos`, { name, public: pub, description })).status).toBe(201);
  await make(a, "acme", "widget", true, "The original widget");
  await make(a, "acme", "widget-api", true, "HTTP interface for widgets");
  await make(a, "acme", "widgets-private", false, "internal widget tooling");
  await make(a, "acme", "gears", true, "Gear trains and widget couplings");
  await make(a, "acme", "secret-plans", false, "widget roadmap");
  await make(c, "beta", "widget", true, "Beta's widget");
  await make(c, "beta", "widgetry", false, "private widgetry");
  serviceToken = await mintToken(server, ada.cookie, "acme", { scopes: ["repo:read"], label: "svc", kind: "service" });
  boundToken = await mintToken(server, ada.cookie, "acme", { scopes: ["repo:read"], label: "bound", repo: "secret-plans" });
}, T);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** Hit names; repositories of one name in several orgs (a tie, ordered by id) are sorted here. */
const names = (r: { body: any }) => {
  const out: string[] = r.body.hits.map((h: any) => `${h.org}/${h.name}`);
  const tie = (i: number) => i + 1 < out.length && out[i]!.split("/")[1] === out[i + 1]!.split("/")[1];
  for (let i = 0; i < out.length; i++) if (tie(i) && out[i]! > out[i + 1]!) [out[i], out[i + 1]] = [out[i + 1]!, out[i]!];
  return out;
};
const search = (who: Person | string | undefined, q: string, extra = "") => caller(server, who).get(`/v1/search/repos?q=${encodeURIComponent(q)}${extra}`);

describe("search", () => {
  test("exact name first, then name prefixes, then word matches; only what the caller may see", async () => {
    expect(names(await search(undefined, "widget"))).toEqual(["acme/widget", "beta/widget", "acme/widget-api", "acme/gears"]);
    expect(names(await search(ada, "widget"))).toEqual([
      "acme/widget",
      "beta/widget",
      "acme/widget-api",
      "acme/widgets-private",
      "acme/gears",
      "acme/secret-plans",
    ]);
    expect(names(await search(bob, "widget"))).toEqual(names(await search(ada, "widget")));
    expect(names(await search(cy, "widget"))).toEqual(["acme/widget", "beta/widget", "acme/widget-api", "beta/widgetry", "acme/gears"]);
    expect(names(await search(serviceToken, "widget"))).toEqual(names(await search(ada, "widget")));
    // A bound token sees its one private repository, no other.
    expect(names(await search(boundToken, "widget"))).toEqual(["acme/widget", "beta/widget", "acme/widget-api", "acme/gears", "acme/secret-plans"]);
  });

  test("hits have the RepoHit shape", async () => {
    const r = await search(undefined, "WIDGET-API");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      hits: [
        {
          id: expect.any(String),
          org_id: expect.any(String),
          org: "acme",
          name: "widget-api",
          description: "HTTP interface for widgets",
          public: true,
          kind: "native",
          created_at: expect.any(Number),
        },
      ],
      next_cursor: null,
    });
    expect(names(await search(undefined, "interface http"))).toEqual(["acme/widget-api"]);
    expect(names(await search(undefined, "nothing-matches-this"))).toEqual([]);
  });

  test("pages across tiers with the cursor, without repeats", async () => {
    const all = (await search(ada, "widget")).body.hits.map((h: any) => h.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const r = await search(ada, "widget", `&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.hits.map((h: any) => h.id));
      cursor = r.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(all);
  });

  test("follows renames, description changes and deletes in the same transaction", async () => {
    const a = caller(server, ada);
    expect((await a.patch("/v1/orgs/acme/repos/gears", { description: "nothing to see" })).status).toBe(200);
    expect(names(await search(undefined, "widget"))).not.toContain("acme/gears");
    expect((await a.patch("/v1/orgs/acme/repos/gears", { name: "sprockets", description: "sprocket widget" })).status).toBe(200);
    expect(names(await search(undefined, "sprockets"))).toEqual(["acme/sprockets"]);
    expect((await a.patch("/v1/orgs/acme/repos/sprockets", { public: false })).status).toBe(200);
    expect(names(await search(undefined, "sprockets"))).toEqual([]);
    expect((await a.delete("/v1/orgs/acme/repos/sprockets")).status).toBe(204);
    expect(names(await search(ada, "sprockets"))).toEqual([]);
  });

  test("bad queries are 400", async () => {
    expectError(await caller(server).get("/v1/search/repos"), 400, /q is required/);
    expectError(await search(undefined, "   "), 400, /q is required/);
    expectError(await search(undefined, "x".repeat(201)), 400, /200/);
    expectError(await search(undefined, "widget", "&limit=0"), 400);
    expectError(await search(undefined, "widget", "&limit=101"), 400);
    expectError(await search(undefined, "widget", "&cursor=garbage"), 400);
    // A word-tier cursor carries a document number; anything else there is refused.
    const cursor = (key: unknown) => `&cursor=${Buffer.from(JSON.stringify(key)).toString("base64url")}`;
    expectError(await search(undefined, "widget", cursor([2, "gears", "x"])), 400, /invalid cursor/);
    expect((await search(undefined, "widget", cursor([2, "0", ""]))).status).toBe(200);
    // FTS syntax in a query is only text.
    expect((await search(undefined, 'widget" OR name:*')).status).toBe(200);
    expect((await search(undefined, "NEAR(a b)")).status).toBe(200);
  });
});

describe("watching", () => {
  test("levels; watcher_count counts all only; DELETE stops watching; idempotent", async () => {
    const count = async () => (await caller(server, ada).get("/v1/orgs/acme/repos/widget")).body.watcher_count;
    expect(await count()).toBe(0);
    expect((await caller(server, ada).put("/v1/orgs/acme/repos/widget/subscription", { level: "all" })).body).toEqual({ level: "all", watcher_count: 1 });
    expect((await caller(server, cy).put("/v1/orgs/acme/repos/widget/subscription", { level: "all" })).body).toEqual({ level: "all", watcher_count: 2 });
    expect((await caller(server, bob).put("/v1/orgs/acme/repos/widget/subscription", { level: "participating" })).body).toEqual({
      level: "participating",
      watcher_count: 2,
    });
    expect((await caller(server, cy).put("/v1/orgs/acme/repos/widget/subscription", { level: "ignore" })).body).toEqual({ level: "ignore", watcher_count: 1 });
    expect(await count()).toBe(1);
    expect((await caller(server, ada).delete("/v1/orgs/acme/repos/widget/subscription")).status).toBe(204);
    expect((await caller(server, ada).delete("/v1/orgs/acme/repos/widget/subscription")).status).toBe(204);
    expect(await count()).toBe(0);
  });

  test("refusals change nothing: 422 level, 400 body, 401 anonymous and service token, 404 invisible or missing", async () => {
    expect((await caller(server, ada).put("/v1/orgs/acme/repos/widget-api/subscription", { level: "all" })).status).toBe(200);
    const count = async () => (await caller(server).get("/v1/orgs/acme/repos/widget-api")).body.watcher_count;
    expectError(await caller(server, bob).put("/v1/orgs/acme/repos/widget-api/subscription", { level: "everything" }), 422);
    expectError(await caller(server, bob).put("/v1/orgs/acme/repos/widget-api/subscription", {}), 400);
    expectError(await caller(server).put("/v1/orgs/acme/repos/widget-api/subscription", { level: "all" }), 401);
    expectError(await caller(server, serviceToken).put("/v1/orgs/acme/repos/widget-api/subscription", { level: "all" }), 401);
    expectError(await caller(server, cy).put("/v1/orgs/acme/repos/secret-plans/subscription", { level: "all" }), 404);
    expectError(await caller(server, cy).put("/v1/orgs/acme/repos/no-such/subscription", { level: "all" }), 404);
    expectError(await caller(server, cy).delete("/v1/orgs/acme/repos/secret-plans/subscription"), 404);
    expectError(await caller(server).put("/v1/orgs/acme/repos/secret-plans/subscription", { level: "all" }), 401);
    expect(await count()).toBe(1);
  });
});
