// Organizations, members and the provider-less billing view (SPEC §2.12, §2.13, §4.4, §5.2, §7;
// DECISIONS §1–§3).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, mintToken, startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError, person, type Person as User } from "../../helpers/api.ts";

let server: RunningServer;
/** acme: owner, admin, member, viewer; elsewhere: an outsider. */
let owner: User, admin: User, member: User, viewer: User, outsider: User;

beforeAll(async () => {
  server = await startServer();
  // Sequential for acme so each user-create sees the org the previous one made.
  owner = await person(server, "acme", "olga@example.com", "owner");
  [admin, member, viewer, outsider] = await Promise.all([
    person(server, "acme", "adam@example.com", "admin"),
    person(server, "acme", "mona@example.com", "member"),
    person(server, "acme", "vic@example.com", "viewer"),
    person(server, "elsewhere", "otto@example.com", "owner"),
  ]);
}, 30_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** A caller as a same-site browser: its cookie and our own Origin (passes the CSRF rule for DELETE). */
const as = (u?: User) => caller(server, u);

describe("POST /v1/orgs", () => {
  test("201 { id, name, plan: free, billable_seats, detail }; the creator owns it", async () => {
    const r = await as(owner).post("/v1/orgs", { name: "newco" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.any(String), name: "newco", plan: "free", billable_seats: 1, detail: expect.any(String) });
    expect(r.body.detail.length).toBeGreaterThan(0);
    const me = await as(owner).get("/v1/auth/me");
    expect(me.body.orgs).toContainEqual({ id: r.body.id, name: "newco", role: "owner" });
    const members = await as(owner).get("/v1/orgs/newco/members");
    expect(members.body.members).toEqual([expect.objectContaining({ user_id: owner.id, role: "owner" })]);
  });

  test("names at the limits: 1 and 39 characters, digits, single hyphens", async () => {
    for (const name of ["q", "z".repeat(39), "9lives", "a-b-c"]) {
      const r = await as(owner).post("/v1/orgs", { name });
      expect({ name, status: r.status }).toEqual({ name, status: 201 });
      expect(r.body.name).toBe(name);
    }
  });

  test("400 for an invalid name", async () => {
    const bad: unknown[] = [
      "",
      "-lead",
      "trail-",
      "dou--ble",
      "under_score",
      "dot.ted",
      "sp ace",
      "slash/y",
      "ümlaut",
      "y".repeat(40),
      42,
      null,
      true,
      ["acme2"],
      { n: 1 },
    ];
    for (const name of bad) {
      const r = await as(owner).post("/v1/orgs", { name });
      expect({ name, status: r.status }).toEqual({ name, status: 400 });
      expectError(r, 400);
    }
  });

  test("409 when the name is taken, case-insensitively", async () => {
    expect((await as(owner).post("/v1/orgs", { name: "taken-co" })).status).toBe(201);
    expectError(await as(admin).post("/v1/orgs", { name: "taken-co" }), 409);
    expectError(await as(admin).post("/v1/orgs", { name: "TAKEN-CO" }), 409);
    expectError(await as(admin).post("/v1/orgs", { name: "ACME" }), 409);
  });

  test("409 for a reserved name", async () => {
    for (const name of ["admin", "v1", "api", "webhooks", "login", "svc", "git", "runners", "Settings"]) {
      const r = await as(owner).post("/v1/orgs", { name });
      expect({ name, status: r.status }).toEqual({ name, status: 409 });
      expectError(r, 409);
    }
  });

  test("409 for a person's handle (one namespace)", async () => {
    expectError(await as(owner).post("/v1/orgs", { name: member.handle }), 409);
    expectError(await as(owner).post("/v1/orgs", { name: member.handle.toUpperCase() }), 409);
  });

  test("401 anonymous", async () => {
    expectError(await as().post("/v1/orgs", { name: "anon-co" }), 401);
  });

  test("403 for a service token", async () => {
    const token = await mintToken(server, owner.cookie, "acme", { kind: "service", scopes: ["org:admin"], label: "svc" });
    expectError(await client(server, { token }).post("/v1/orgs", { name: "svc-co" }), 403);
  });

  test("400 for a malformed or incomplete body", async () => {
    expectError(await as(owner).post("/v1/orgs", "{not json", { "content-type": "application/json" }), 400);
    expectError(await as(owner).post("/v1/orgs", {}), 400);
    expectError(await as(owner).post("/v1/orgs", { label: "x" }), 400);
    expectError(await as(owner).post("/v1/orgs", "[]", { "content-type": "application/json" }), 400);
  });
});

describe("members (DECISIONS §3)", () => {
  /** peopleco: its own people, so role changes here disturb nothing else. Tests run in order. */
  let boss: User, second: User, plain: User, watcher: User, leaver: User;
  beforeAll(async () => {
    boss = await person(server, "peopleco", "boss@peopleco.example", "owner");
    [second, plain, watcher, leaver] = await Promise.all([
      person(server, "peopleco", "second@peopleco.example", "admin"),
      person(server, "peopleco", "plain@peopleco.example", "member"),
      person(server, "peopleco", "watcher@peopleco.example", "viewer"),
      person(server, "peopleco", "leaver@peopleco.example", "member"),
    ]);
  }, 30_000);
  const roleOf = async (id: string) => (await as(boss).get("/v1/orgs/peopleco/members")).body.members.find((m: any) => m.user_id === id)?.role;

  test("listing: every member; addresses for admins only", async () => {
    const r = await as(owner).get("/v1/orgs/acme/members");
    expect(r.status).toBe(200);
    const byId = Object.fromEntries(r.body.members.map((m: any) => [m.user_id, m]));
    expect(byId[owner.id]).toEqual({ user_id: owner.id, handle: owner.handle, name: expect.any(String), role: "owner", email: owner.email });
    expect(byId[viewer.id]).toMatchObject({ role: "viewer", email: viewer.email });
    expect(Object.keys(byId).sort()).toEqual([owner.id, admin.id, member.id, viewer.id].sort());
    const asMember = await as(member).get("/v1/orgs/acme/members");
    expect(asMember.status).toBe(200);
    for (const m of asMember.body.members) expect(Object.keys(m).sort()).toEqual(["handle", "name", "role", "user_id"]);
  });

  test("listing pages by handle: limit and cursor, next_cursor null at the end (DECISIONS §1)", async () => {
    const all = (await as(owner).get("/v1/orgs/acme/members?limit=100")).body;
    expect(all.next_cursor).toBeNull();
    const handles = all.members.map((m: any) => m.handle);
    expect(handles).toEqual([...handles].sort((a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    for (const limit of [1, 3]) {
      const seen: any[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const r: any = await as(owner).get(`/v1/orgs/acme/members?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
        expect(r.status).toBe(200);
        expect(r.body.members.length).toBeLessThanOrEqual(limit);
        seen.push(...r.body.members);
        cursor = r.body.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).toEqual(all.members);
      expect(pages).toBe(Math.ceil(all.members.length / limit));
    }
    // Addresses stay an admin's view on every page; a member's pages carry none.
    const page = await as(member).get("/v1/orgs/acme/members?limit=2");
    expect(page.body.next_cursor).toEqual(expect.any(String));
    for (const m of page.body.members) expect(m.email).toBeUndefined();
  });

  test("listing: 400 for a bad limit or a cursor this service did not make", async () => {
    for (const q of [
      "limit=0",
      "limit=101",
      "limit=abc",
      "limit=2.5",
      "cursor=%25%25",
      "cursor=bm90LWpzb24",
      `cursor=${Buffer.from("5").toString("base64url")}`,
    ]) {
      expectError(await as(owner).get(`/v1/orgs/acme/members?${q}`), 400);
    }
  });

  test("listing: 404 for an outsider, 401 anonymous, 404 for an unknown org", async () => {
    expectError(await as(outsider).get("/v1/orgs/acme/members"), 404);
    expectError(await as().get("/v1/orgs/acme/members"), 401);
    expectError(await as(owner).get("/v1/orgs/no-such-org/members"), 404);
  });

  test("role change by id or by handle", async () => {
    const up = await as(boss).put(`/v1/orgs/peopleco/members/${plain.id}`, { role: "admin" });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ user_id: plain.id, role: "admin" });
    const down = await as(boss).put(`/v1/orgs/peopleco/members/${plain.handle}`, { role: "viewer" });
    expect(down.status).toBe(200);
    expect(down.body.role).toBe("viewer");
    expect(await roleOf(plain.id)).toBe("viewer");
  });

  test("an admin manages people", async () => {
    expect((await as(second).put(`/v1/orgs/peopleco/members/${watcher.id}`, { role: "member" })).status).toBe(200);
    expect(await roleOf(watcher.id)).toBe("member");
    expect((await as(second).delete(`/v1/orgs/peopleco/members/${watcher.id}`)).status).toBe(204);
    expect(await roleOf(watcher.id)).toBeUndefined();
  });

  test("removal: the removed person loses access at once", async () => {
    expect((await as(leaver).get("/v1/orgs/peopleco/members")).status).toBe(200);
    expect((await as(boss).delete(`/v1/orgs/peopleco/members/${leaver.id}`)).status).toBe(204);
    expectError(await as(leaver).get("/v1/orgs/peopleco/members"), 404);
    expectError(await as(boss).delete(`/v1/orgs/peopleco/members/${leaver.id}`), 404);
  });

  test("the last owner can be neither demoted nor removed (409)", async () => {
    expectError(await as(boss).put(`/v1/orgs/peopleco/members/${boss.id}`, { role: "admin" }), 409);
    expectError(await as(boss).delete(`/v1/orgs/peopleco/members/${boss.id}`), 409);
    // An admin removing or demoting the last owner is refused too (409, or 403 where only owners touch owners).
    for (const r of [
      await as(second).delete(`/v1/orgs/peopleco/members/${boss.id}`),
      await as(second).put(`/v1/orgs/peopleco/members/${boss.id}`, { role: "member" }),
    ]) {
      expect([403, 409]).toContain(r.status);
      expectError(r, r.status);
    }
    expect(await roleOf(boss.id)).toBe("owner");
    // With a second owner the first may step down; then the second is the last one.
    expect((await as(boss).put(`/v1/orgs/peopleco/members/${second.id}`, { role: "owner" })).status).toBe(200);
    expect((await as(boss).put(`/v1/orgs/peopleco/members/${boss.id}`, { role: "member" })).status).toBe(200);
    expectError(await as(second).put(`/v1/orgs/peopleco/members/${second.id}`, { role: "viewer" }), 409);
    expectError(await as(second).delete(`/v1/orgs/peopleco/members/${second.id}`), 409);
    expect(await roleOf(second.id)).toBe("owner");
  });

  test("unknown member: 404 on change and removal", async () => {
    expectError(await as(owner).put("/v1/orgs/acme/members/nobody-here", { role: "member" }), 404);
    expectError(await as(owner).delete("/v1/orgs/acme/members/nobody-here"), 404);
    // A real person who is not a member of this org.
    expectError(await as(owner).put(`/v1/orgs/acme/members/${outsider.id}`, { role: "member" }), 404);
    expectError(await as(owner).delete(`/v1/orgs/acme/members/${outsider.id}`), 404);
  });

  test("a role outside the enumeration: 422", async () => {
    expectError(await as(owner).put(`/v1/orgs/acme/members/${viewer.id}`, { role: "emperor" }), 422);
  });

  test("non-admins cannot manage people: 403 for members and viewers, 404 for outsiders", async () => {
    expectError(await as(member).put(`/v1/orgs/acme/members/${viewer.id}`, { role: "member" }), 403);
    expectError(await as(viewer).put(`/v1/orgs/acme/members/${viewer.id}`, { role: "admin" }), 403);
    expectError(await as(member).delete(`/v1/orgs/acme/members/${viewer.id}`), 403);
    expectError(await as(outsider).put(`/v1/orgs/acme/members/${viewer.id}`, { role: "member" }), 404);
    expectError(await as(outsider).delete(`/v1/orgs/acme/members/${viewer.id}`), 404);
    expectError(await as().put(`/v1/orgs/acme/members/${viewer.id}`, { role: "member" }), 401);
    const still = await as(owner).get("/v1/orgs/acme/members");
    expect(still.body.members.find((m: any) => m.user_id === viewer.id).role).toBe("viewer");
  });
});

describe("GET /v1/orgs/{org}/billing without a payment provider (SPEC §2.12)", () => {
  test("the provider-less shape: everything allowed, minutes unlimited, counts real", async () => {
    for (const [name, pub] of [
      ["bill-p1", false],
      ["bill-p2", false],
      ["bill-open", true],
    ] as const) {
      expect((await as(owner).post("/v1/orgs/acme/repos", { name, public: pub })).status).toBe(201);
    }
    const r = await as(owner).get("/v1/orgs/acme/billing");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      org: "acme",
      plan: "free",
      billable_seats: 4,
      paid_seats: expect.any(Number),
      status: null,
      current_period_end: null,
      may_create_public: true,
      may_create_private: true,
      may_add_people: true,
      price_per_seat_cents: null,
      paid_minutes_per_seat: null,
      free_minutes: null,
      ci_minutes_limit: null,
      ci_minutes_used: 0,
      ci_minutes_remaining: null,
      ci_suspended_reason: null,
      ci_suspended_at: null,
      private_repos: 2,
    });
  });

  test("an admin reads it; members, viewers and outsiders get 404; anonymous 401", async () => {
    expect((await as(owner).get("/v1/orgs/acme/billing")).status).toBe(200);
    expect((await as(admin).get("/v1/orgs/acme/billing")).status).toBe(200);
    expectError(await as(member).get("/v1/orgs/acme/billing"), 404);
    expectError(await as(viewer).get("/v1/orgs/acme/billing"), 404);
    expectError(await as(outsider).get("/v1/orgs/acme/billing"), 404);
    expectError(await as(owner).get("/v1/orgs/no-such-org/billing"), 404);
    expectError(await as().get("/v1/orgs/acme/billing"), 401);
  });

  test("a member's 404 is the same as an unknown org's", async () => {
    const mine = await as(member).get("/v1/orgs/acme/billing");
    const none = await as(member).get("/v1/orgs/no-such-org/billing");
    expect(mine.body).toEqual(none.body);
  });

  test("a personal namespace bills one seat and allows everything", async () => {
    const r = await as(owner).get(`/v1/orgs/${owner.handle}/billing`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      org: owner.handle,
      plan: "free",
      billable_seats: 1,
      may_create_public: true,
      may_create_private: true,
      may_add_people: true,
      private_repos: 0,
    });
    expectError(await as(member).get(`/v1/orgs/${owner.handle}/billing`), 404);
  });
});
