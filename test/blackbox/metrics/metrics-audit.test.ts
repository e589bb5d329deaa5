// Metrics, usage and the audit log over real HTTP (SPEC §2.4, §5.1 org:read; DECISIONS §3).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { gitSandbox, initRepo, commitFiles, repoUrl, clone, type GitSandbox } from "../../helpers/git.ts";
import { mintToken, startServer, type RunningServer } from "../../helpers/server.ts";

const T = 60_000;
let server: RunningServer;
let g: GitSandbox;
let ada: Person;
let bob: Person;
let cy: Person;
let adaToken: string;
let readOnly: string;

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox();
  ada = await person(server, "acme", "ada@example.com", "owner", { handle: "ada" });
  bob = await person(server, "acme", "bob@example.com", "viewer", { handle: "bob" });
  cy = await person(server, "beta", "cy@example.com", "owner", { handle: "cy" });
  adaToken = await mintToken(server, ada.cookie, "acme", { scopes: ["repo:write"], label: "git" });
  readOnly = await mintToken(server, ada.cookie, "acme", { scopes: ["repo:read"], label: "reader" });
}, T);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

describe("metrics and usage", () => {
  test("git and API operations are summarized per kind with percentiles; empty kinds have null percentiles", async () => {
    const a = caller(server, ada);
    const since = Date.now() - 1;
    expect((await a.post("/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
    const dir = await initRepo(g, "app");
    await commitFiles(g, dir, { "a.txt": "hello\n".repeat(1000) });
    await g.ok(["push", "-q", repoUrl(server, "acme", "app", adaToken), "main"], { cwd: dir });
    await clone(g, repoUrl(server, "acme", "app", adaToken));
    expect((await a.post("/v1/orgs/acme/repos/app/commits", { message: "api", operations: [{ op: "put", path: "b.txt", content: "b" }] })).status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await a.get("/v1/orgs/acme/repos/app")).status).toBe(200);
    const r = await caller(server, bob).get(`/v1/orgs/acme/metrics?from=${since}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.kinds).sort()).toEqual([
      "api.commit",
      "api.read",
      "git.clone",
      "git.fetch",
      "git.push",
      "mirror.freshness",
      "mirror.sync",
      "webhook.delivery",
    ]);
    const k = r.body.kinds;
    expect(k["git.push"]).toMatchObject({ count: 1 });
    expect(k["git.push"].bytes).toBeGreaterThan(0);
    expect(k["git.clone"].count).toBe(1);
    expect(k["api.commit"].count).toBe(1);
    expect(k["api.read"].count).toBeGreaterThanOrEqual(3);
    for (const name of ["git.push", "git.clone", "api.commit", "api.read"]) {
      expect(Number.isInteger(k[name].p50_ms)).toBe(true);
      expect(k[name].p99_ms).toBeGreaterThanOrEqual(k[name].p50_ms);
    }
    expect(k["mirror.sync"]).toEqual({ count: 0, bytes: 0, ms_sum: 0, p50_ms: null, p99_ms: null });
    // A window before anything happened is empty.
    const before = await caller(server, bob).get(`/v1/orgs/acme/metrics?from=0&to=${since - 120_000}`);
    expect(before.body.kinds["git.push"]).toEqual({ count: 0, bytes: 0, ms_sum: 0, p50_ms: null, p99_ms: null });
    // Another org's metrics are its own.
    expect((await caller(server, cy).get("/v1/orgs/beta/metrics")).body.kinds["git.push"].count).toBe(0);

    const u = await caller(server, bob).get("/v1/orgs/acme/usage");
    expect(u.status).toBe(200);
    expect(u.body.repos).toEqual([{ name: "app", bytes: expect.any(Number) }]);
    expect(u.body.storage_bytes).toBe(u.body.repos[0].bytes);
    expect(u.body.storage_bytes).toBeGreaterThan(0);
    expect(u.body.transfer_bytes).toBeGreaterThan(0);
    expect(u.body.ci_minutes_used).toBe(0);
  });

  test("refusals: 400 bad window, 401 anonymous, 403 a token without org:read, 404 outsider and unknown org", async () => {
    for (const path of ["metrics", "usage"]) {
      expectError(await caller(server, ada).get(`/v1/orgs/acme/${path}?from=yesterday`), 400);
      expectError(await caller(server, ada).get(`/v1/orgs/acme/${path}?from=10&to=5`), 400);
      expectError(await caller(server).get(`/v1/orgs/acme/${path}`), 401);
      expectError(await caller(server, readOnly).get(`/v1/orgs/acme/${path}`), 403);
      expectError(await caller(server, cy).get(`/v1/orgs/acme/${path}`), 404);
      expectError(await caller(server, cy).get(`/v1/orgs/no-such-org/${path}`), 404);
    }
  });
});

describe("audit log", () => {
  test("admin actions are recorded with their actor, newest first, filtered and paged", async () => {
    const a = caller(server, ada);
    const since = Date.now() - 1;
    expect((await a.post("/v1/orgs/acme/teams", { name: "core" })).status).toBe(201);
    expect((await a.put("/v1/orgs/acme/teams/core/members/bob")).status).toBe(204);
    expect((await a.put("/v1/orgs/acme/members/bob", { role: "member" })).status).toBe(200);
    expect((await a.post("/v1/orgs/acme/repos", { name: "lib" })).status).toBe(201);
    expect((await a.post("/v1/orgs/acme/repos/lib/grants", { team_id: "core", role: "admin" })).status).toBe(200);
    expect((await a.put("/v1/orgs/acme/repos/lib/protections/main", { allow_force_push: false })).status).toBe(200);
    expect((await a.patch("/v1/orgs/acme/repos/lib", { public: true })).status).toBe(200);
    const tok = await a.post("/v1/orgs/acme/tokens", { scopes: ["repo:read"], label: "ci", kind: "service" });
    expect((await a.delete(`/v1/orgs/acme/tokens/${tok.body.id}`)).status).toBe(204);
    expect((await a.post("/v1/orgs/acme/invites", { email: "new@example.com", role: "member" })).status).toBe(201);
    expect((await a.delete("/v1/orgs/acme/repos/lib")).status).toBe(204);

    const r = await caller(server, bob).get(`/v1/orgs/acme/audit?from=${since}&limit=100`);
    expect(r.status).toBe(200);
    expect(r.body.events.map((e: any) => e.action)).toEqual([
      "repo.deleted",
      "invite.created",
      "token.revoked",
      "token.created",
      "repo.visibility_changed",
      "protection.updated",
      "grant.created",
      "repo.created",
      "member.role_changed",
      "team.member_added",
      "team.created",
    ]);
    const role = r.body.events.find((e: any) => e.action === "member.role_changed");
    expect(role).toEqual({
      id: expect.any(String),
      action: "member.role_changed",
      actor: { kind: "user", id: ada.id, name: "ada" },
      target: "bob",
      data: { user_id: bob.id, from: "viewer", to: "member" },
      created_at: expect.any(Number),
    });

    const only = await caller(server, bob).get(`/v1/orgs/acme/audit?action=repo.created&from=${since}`);
    expect(only.body.events.map((e: any) => e.target)).toEqual(["lib"]);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const p: any = await caller(server, bob).get(`/v1/orgs/acme/audit?from=${since}&limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      paged.push(...p.body.events.map((e: any) => e.id));
      cursor = p.body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(r.body.events.map((e: any) => e.id));
    expect((await caller(server, bob).get(`/v1/orgs/acme/audit?to=${since}&action=repo.deleted`)).body.events).toEqual([]);
  });

  test("a refused action records nothing", async () => {
    const since = Date.now() - 1;
    expectError(await caller(server, bob).post("/v1/orgs/acme/teams", { name: "rogue" }), 403);
    expectError(await caller(server, ada).put("/v1/orgs/acme/members/ada", { role: "viewer" }), 409);
    expect((await caller(server, ada).get(`/v1/orgs/acme/audit?from=${since}`)).body.events).toEqual([]);
  });

  test("refusals: 400 bad filters, 401, 403 without org:read, 404 outsider", async () => {
    expectError(await caller(server, ada).get("/v1/orgs/acme/audit?from=abc"), 400);
    expectError(await caller(server, ada).get("/v1/orgs/acme/audit?from=10&to=5"), 400);
    expectError(await caller(server, ada).get("/v1/orgs/acme/audit?cursor=zzz"), 400);
    expectError(await caller(server, ada).get("/v1/orgs/acme/audit?limit=500"), 400);
    expectError(await caller(server).get("/v1/orgs/acme/audit"), 401);
    expectError(await caller(server, readOnly).get("/v1/orgs/acme/audit"), 403);
    expectError(await caller(server, cy).get("/v1/orgs/acme/audit"), 404);
  });
});
