// Invitations: create, list, revoke, preview (does not spend), accept (new and existing accounts),
// single use, and every dead shape answering alike (SPEC §2.13, §3.2, §4.3, §4.5, §5.7, §7).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { login, startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError, person, type Person as User } from "../../helpers/api.ts";

let server: RunningServer;
let owner: User, admin: User, member: User, outsider: User;

const as = (who?: User) => caller(server, who);

async function invite(email: string, role = "member", by: User = admin) {
  const r = await as(by).post("/v1/orgs/inv/invites", { email, role });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 201, error: undefined });
  return r.body;
}

const PASSWORD = "a long enough password";

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "inv", "own@example.com", "owner");
  [admin, member, outsider] = await Promise.all([
    person(server, "inv", "adm@example.com", "admin"),
    person(server, "inv", "mem@example.com", "member"),
    person(server, "other", "out@example.com", "owner"),
  ]);
});

afterAll(async () => {
  await server.stop();
});

describe("creating invitations", () => {
  test("the record carries the svcinv_ link, its expiry and the mail result (null transport: not sent, no error)", async () => {
    const before = Date.now();
    const body = await invite("new.person@example.com", "viewer");
    expect(body).toEqual({
      id: expect.any(String),
      email: "new.person@example.com",
      role: "viewer",
      expires_at: expect.any(Number),
      invite_link: expect.stringMatching(/^svcinv_[a-z2-7]{32}$/),
      invite_url: `${server.url}/invite?token=${body.invite_link}`,
      mail: { sent: false },
    });
    const week = 7 * 24 * 3600 * 1000;
    expect(body.expires_at).toBeGreaterThanOrEqual(before + week);
    expect(body.expires_at).toBeLessThanOrEqual(Date.now() + week);
    const list = await as(admin).get("/v1/orgs/inv/invites");
    expect(list.body.invites).toContainEqual({
      id: body.id,
      email: body.email,
      role: "viewer",
      expires_at: body.expires_at,
      created_at: expect.any(Number),
      state: "pending",
    });
    expect(JSON.stringify(list.body)).not.toContain("svcinv_");
  });

  test("rejections", async () => {
    expectError(await as(admin).post("/v1/orgs/inv/invites", { email: "not-an-address", role: "member" }), 400);
    expectError(await as(admin).post("/v1/orgs/inv/invites", { role: "member" }), 400);
    expectError(await as(admin).post("/v1/orgs/inv/invites", { email: "x@example.com", role: "boss" }), 422);
    expectError(await as(admin).post("/v1/orgs/inv/invites", { email: member.email, role: "member" }), 409, /already a member/);
    expectError(await as(admin).post("/v1/orgs/inv/invites", { email: "x@example.com", role: "owner" }), 403, /owner/);
    expectError(await as(member).post("/v1/orgs/inv/invites", { email: "x@example.com", role: "member" }), 403);
    expectError(await as(outsider).post("/v1/orgs/inv/invites", { email: "x@example.com", role: "member" }), 404);
    expectError(await as().post("/v1/orgs/inv/invites", { email: "x@example.com", role: "member" }), 401);
    expectError(await as(member).get("/v1/orgs/inv/invites"), 403);
    // A personal namespace has nobody to invite.
    expectError(await as(owner).post(`/v1/orgs/${owner.handle}/invites`, { email: "x@example.com", role: "member" }), 400);
    expect((await as(admin).get("/v1/orgs/inv/invites")).body.invites.some((i: any) => i.email === "x@example.com")).toBe(false);
    // An owner may invite an owner.
    expect((await as(owner).post("/v1/orgs/inv/invites", { email: "co-owner@example.com", role: "owner" })).status).toBe(201);
  });
});

describe("listing invitations", () => {
  test("newest first, a page at a time (DECISIONS §1); only admins list", async () => {
    expect((await as(owner).post("/v1/orgs", { name: "inv-pages" })).status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await as(owner).post("/v1/orgs/inv-pages/invites", { email: `page${i}@example.com`, role: "viewer" });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const all = (await as(owner).get("/v1/orgs/inv-pages/invites?limit=100")).body;
    expect(all.next_cursor).toBeNull();
    expect(all.invites.map((i: any) => i.id).sort()).toEqual([...ids].sort());
    const times = all.invites.map((i: any) => i.created_at);
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
    // Walk it two at a time: the same invitations in the same order, none twice.
    const seen: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await as(owner).get(`/v1/orgs/inv-pages/invites?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.invites);
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.invites);
    // A revoked one leaves the list without disturbing the walk.
    expect((await as(owner).delete(`/v1/orgs/inv-pages/invites/${ids[0]}`)).status).toBe(204);
    expect((await as(owner).get("/v1/orgs/inv-pages/invites")).body.invites.map((i: any) => i.id)).not.toContain(ids[0]);
  });

  test("400 for a bad limit or a cursor of another shape", async () => {
    // A cursor of the members list (a handle) is no position in this one.
    const members = await as(admin).get("/v1/orgs/inv/members?limit=1");
    expect(members.body.next_cursor).toEqual(expect.any(String));
    for (const q of ["limit=0", "limit=1000", `cursor=${members.body.next_cursor}`, "cursor=%25"]) {
      expectError(await as(admin).get(`/v1/orgs/inv/invites?${q}`), 400);
    }
    expectError(await as(member).get("/v1/orgs/inv/invites"), 403);
    expectError(await as(outsider).get("/v1/orgs/inv/invites"), 404);
    expectError(await as().get("/v1/orgs/inv/invites"), 401);
  });
});

describe("preview and accept", () => {
  test("preview does not spend; accepting creates a confirmed account, joins the org and signs in; the link then dies", async () => {
    const inv = await invite("fresh@example.com", "member");
    // The mailed link opens a page with the acceptance form; opening it spends nothing.
    const page = await fetch(inv.invite_url);
    expect({
      status: page.status,
      type: page.headers.get("content-type"),
      referrer: page.headers.get("referrer-policy"),
      cache: page.headers.get("cache-control"),
    }).toEqual({
      status: 200,
      type: "text/html; charset=utf-8",
      referrer: "same-origin",
      cache: "no-store",
    });
    expect(await page.text()).toContain(`<form class="stack" method="post" action="/invite">`);
    const preview = await as().post("/v1/auth/invite/preview", { invite: inv.invite_link });
    expect(preview.body).toEqual({ org: "inv", role: "member", email: "fresh@example.com", expires_at: inv.expires_at });
    expect((await as().post("/v1/auth/invite/preview", { invite: inv.invite_link })).status).toBe(200);

    const res = await fetch(`${server.url}/v1/auth/accept-invite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ invite: inv.invite_link, name: "Fresh Person", password: PASSWORD, handle: "fresh" }),
    });
    expect(res.status).toBe(201);
    const account = await res.json();
    expect(account).toMatchObject({ email: "fresh@example.com", name: "Fresh Person", handle: "fresh" });
    expect(account.orgs.map((o: any) => [o.name, o.role])).toContainEqual(["inv", "member"]);
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const fresh = { cookie } as User;
    expect((await as(fresh).get("/v1/auth/me")).body.email).toBe("fresh@example.com");
    // Confirmed by the link: may create an organization.
    expect((await as(fresh).post("/v1/orgs", { name: "fresh-org" })).status).toBe(201);
    // The member list shows the new member; the invitation is no longer listed.
    expect((await as(admin).get("/v1/orgs/inv/members")).body.members.some((m: any) => m.handle === "fresh" && m.role === "member")).toBe(true);
    expect((await as(admin).get("/v1/orgs/inv/invites")).body.invites.some((i: any) => i.id === inv.id)).toBe(false);

    // Used: preview 404, accept 400.
    expectError(await as().post("/v1/auth/invite/preview", { invite: inv.invite_link }), 404);
    expectError(await as().post("/v1/auth/accept-invite", { invite: inv.invite_link, name: "Again", password: PASSWORD }), 400);
  });

  test("every dead shape answers the same: malformed, unknown, revoked, used", async () => {
    const revoked = await invite("revoked@example.com");
    expect((await as(admin).delete(`/v1/orgs/inv/invites/${revoked.id}`)).status).toBe(204);
    expectError(await as(admin).delete(`/v1/orgs/inv/invites/${revoked.id}`), 404);
    const shapes = ["nonsense", "svcinv_", `svcinv_${"a".repeat(32)}`, revoked.invite_link, "svcv_" + "a".repeat(32)];
    const previews = await Promise.all(shapes.map((s) => as().post("/v1/auth/invite/preview", { invite: s })));
    for (const p of previews) expect({ status: p.status, body: p.body }).toEqual({ status: 404, body: previews[0]!.body });
    const accepts = await Promise.all(shapes.map((s) => as().post("/v1/auth/accept-invite", { invite: s, name: "N", password: PASSWORD })));
    for (const a of accepts) expect({ status: a.status, body: a.body }).toEqual({ status: 400, body: accepts[0]!.body });
    // Missing or non-string links are dead links too.
    for (const body of [{}, { invite: 42 }, { invite: null }]) {
      const r = await as().post("/v1/auth/invite/preview", body);
      expect({ status: r.status, body: r.body }).toEqual({ status: 404, body: previews[0]!.body });
    }
  });

  test("a newer invitation for the same address replaces the pending one", async () => {
    const first = await invite("twice@example.com", "viewer");
    const second = await invite("twice@example.com", "admin");
    expectError(await as().post("/v1/auth/invite/preview", { invite: first.invite_link }), 404);
    expect((await as().post("/v1/auth/invite/preview", { invite: second.invite_link })).body.role).toBe("admin");
  });

  test("unusable name or password: 400 and the link is not spent", async () => {
    const inv = await invite("careful@example.com");
    expectError(await as().post("/v1/auth/accept-invite", { invite: inv.invite_link, name: "Careful", password: "short" }), 400, /12/);
    expectError(await as().post("/v1/auth/accept-invite", { invite: inv.invite_link, name: "", password: PASSWORD }), 400);
    expectError(await as().post("/v1/auth/accept-invite", { invite: inv.invite_link, name: "Careful", password: PASSWORD, handle: "-bad-" }), 400);
    expect((await as().post("/v1/auth/invite/preview", { invite: inv.invite_link })).status).toBe(200);
    expect((await as().post("/v1/auth/accept-invite", { invite: inv.invite_link, name: "Careful", password: PASSWORD })).status).toBe(201);
  });

  test("an existing account accepts with its own password and keeps it", async () => {
    const inv = await invite(outsider.email, "viewer");
    expectError(await as().post("/v1/auth/accept-invite", { invite: inv.invite_link, name: "Out", password: "the wrong password!" }), 400);
    const ok = await as().post("/v1/auth/accept-invite", { invite: inv.invite_link, name: "Ignored", password: outsider.password });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ id: outsider.id, email: outsider.email });
    expect(ok.body.orgs.map((o: any) => [o.name, o.role])).toContainEqual(["inv", "viewer"]);
    expect(await login(server, outsider.email, outsider.password)).toStartWith("svc_session=");
  });
});
