// Teams, grants and the access listing: the routes themselves, every rejection, and that nothing
// is written when a request is refused (SPEC §2.13, §4.5, §5.2; DECISIONS §2–§3).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError, person, type Person as User } from "../../helpers/api.ts";

let server: RunningServer;
let owner: User, admin: User, member: User, viewer: User, outsider: User;

const as = (who?: User | string) => caller(server, who);

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "tg", "owen@example.com", "owner");
  [admin, member, viewer, outsider] = await Promise.all([
    person(server, "tg", "ada@example.com", "admin"),
    person(server, "tg", "mo@example.com", "member"),
    person(server, "tg", "vi@example.com", "viewer"),
    person(server, "elsewhere", "out@example.com", "owner"),
  ]);
  for (const name of ["app", "lib"]) expect((await as(owner).post("/v1/orgs/tg/repos", { name })).status).toBe(201);
});

afterAll(async () => {
  await server.stop();
});

describe("teams", () => {
  test("create, list (case-folded names), members, delete", async () => {
    const created = await as(admin).post("/v1/orgs/tg/teams", { name: "Platform", description: "infra people" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: "Platform", description: "infra people", member_count: 0, created_at: expect.any(Number) });
    expectError(await as(admin).post("/v1/orgs/tg/teams", { name: "platform" }), 409, /already exists/);

    expect((await as(admin).put(`/v1/orgs/tg/teams/PLATFORM/members/${viewer.handle}`)).status).toBe(204);
    expect((await as(admin).put(`/v1/orgs/tg/teams/${created.body.id}/members/${member.id}`)).status).toBe(204);
    // Idempotent.
    expect((await as(admin).put(`/v1/orgs/tg/teams/platform/members/${member.id}`)).status).toBe(204);
    const members = await as(viewer).get("/v1/orgs/tg/teams/platform/members");
    expect(members.body.members.map((m: any) => m.handle).sort()).toEqual([member.handle, viewer.handle].sort());
    const list = await as(viewer).get("/v1/orgs/tg/teams");
    expect(list.body.teams.find((t: any) => t.name === "Platform").member_count).toBe(2);

    expect((await as(admin).delete(`/v1/orgs/tg/teams/platform/members/${member.handle}`)).status).toBe(204);
    expectError(await as(admin).delete(`/v1/orgs/tg/teams/platform/members/${member.handle}`), 404);
    expect((await as(admin).delete("/v1/orgs/tg/teams/platform")).status).toBe(204);
    expectError(await as(admin).get("/v1/orgs/tg/teams/platform/members"), 404, /team not found/);
  });

  test("rejections: bad names, non-admins, non-members, unknown people", async () => {
    for (const name of ["", "   ", "x".repeat(101), "tab\there", 7]) expectError(await as(admin).post("/v1/orgs/tg/teams", { name }), 400);
    expectError(await as(admin).post("/v1/orgs/tg/teams", {}), 400);
    expectError(await as(member).post("/v1/orgs/tg/teams", { name: "nope" }), 403);
    expectError(await as(outsider).post("/v1/orgs/tg/teams", { name: "nope" }), 404);
    expectError(await as().post("/v1/orgs/tg/teams", { name: "nope" }), 401);
    expectError(await as(outsider).get("/v1/orgs/tg/teams"), 404);
    expect((await as(admin).get("/v1/orgs/tg/teams")).body.teams.some((t: any) => t.name === "nope")).toBe(false);

    expect((await as(admin).post("/v1/orgs/tg/teams", { name: "ops" })).status).toBe(201);
    // Team membership requires org membership.
    expectError(await as(admin).put(`/v1/orgs/tg/teams/ops/members/${outsider.handle}`), 422, /not a member/);
    expectError(await as(admin).put("/v1/orgs/tg/teams/ops/members/no-such-user"), 404);
    expectError(await as(admin).put(`/v1/orgs/tg/teams/no-such-team/members/${member.handle}`), 404);
    expectError(await as(member).put(`/v1/orgs/tg/teams/ops/members/${member.handle}`), 403);
    expect((await as(admin).get("/v1/orgs/tg/teams/ops/members")).body.members).toEqual([]);
  });
});

describe("grants and the access listing", () => {
  test("a grant to a person wins outright, up or down; a team grant only raises", async () => {
    const team = (await as(admin).post("/v1/orgs/tg/teams", { name: "Writers" })).body;
    await as(admin).put(`/v1/orgs/tg/teams/writers/members/${viewer.handle}`);
    await as(admin).put(`/v1/orgs/tg/teams/writers/members/${member.handle}`);

    const g1 = await as(admin).post("/v1/orgs/tg/repos/app/grants", { team_id: team.id, role: "member" });
    expect(g1.status).toBe(200);
    expect(g1.body).toEqual({ grants: [{ team_id: team.id, team_name: "Writers", role: "member" }] });
    const g2 = await as(admin).post("/v1/orgs/tg/repos/app/grants", { user_ids: [member.id], role: "viewer" });
    expect(g2.body.grants).toEqual([
      { user_id: member.id, handle: member.handle, role: "viewer" },
      { team_id: team.id, team_name: "Writers", role: "member" },
    ]);

    const access = await as(admin).get("/v1/orgs/tg/repos/app/access");
    expect(access.status).toBe(200);
    const byHandle = Object.fromEntries(access.body.people.map((p: any) => [p.handle, p]));
    expect(byHandle[viewer.handle]).toEqual({
      user_id: viewer.id,
      handle: viewer.handle,
      email: viewer.email,
      role: "member",
      source: "team",
      team_name: "Writers",
    });
    expect(byHandle[member.handle]).toMatchObject({ role: "viewer", source: "grant", team_name: null });
    expect(byHandle[owner.handle]).toMatchObject({ role: "owner", source: "org", team_name: null });
    expect(byHandle[admin.handle]).toMatchObject({ role: "admin", source: "org" });
    expect(byHandle[outsider.handle]).toBeUndefined();
    expect(access.body.teams).toEqual([{ team_id: team.id, team_name: "Writers", role: "member", member_count: 2 }]);

    // The grants take effect on the very next request: the viewer (team member) may now write refs.
    const viewerToken = (await as(viewer).post("/v1/orgs/tg/tokens", { scopes: ["repo:write"], label: "w" })).body.token;
    expect(typeof viewerToken).toBe("string");
    const commit = { branch: "main", message: "first", operations: [{ op: "put", path: "a.txt", content: "a" }] };
    expect((await as(viewerToken).post("/v1/orgs/tg/repos/app/commits", commit)).status).toBe(201);
    // The member, granted viewer on app by name, may not.
    expectError(await as(member).post("/v1/orgs/tg/repos/app/commits", { ...commit, message: "second" }), 403, /tg\/app/);
    // Re-granting replaces the role.
    await as(admin).post("/v1/orgs/tg/repos/app/grants", { user_ids: [member.handle], role: "admin" });
    expect((await as(admin).get("/v1/orgs/tg/repos/app/grants")).body.grants[0]).toEqual({ user_id: member.id, handle: member.handle, role: "admin" });
    expect((await as(member).post("/v1/orgs/tg/repos/app/commits", { ...commit, message: "second" })).status).toBe(201);

    // Deleting the team removes its grants on the next request.
    expect((await as(admin).delete("/v1/orgs/tg/teams/writers")).status).toBe(204);
    expectError(await as(viewerToken).post("/v1/orgs/tg/repos/app/commits", { ...commit, message: "third" }), 403);
    expect((await as(admin).get("/v1/orgs/tg/repos/app/access")).body.teams).toEqual([]);

    expect((await as(admin).delete(`/v1/orgs/tg/repos/app/grants/users/${member.id}`)).status).toBe(204);
    expectError(await as(admin).delete(`/v1/orgs/tg/repos/app/grants/users/${member.id}`), 404);
    expect((await as(admin).get("/v1/orgs/tg/repos/app/grants")).body).toEqual({ grants: [] });
  });

  test("a batch is all-or-nothing: one non-member and nothing is granted", async () => {
    const r = await as(admin).post("/v1/orgs/tg/repos/lib/grants", { user_ids: [viewer.id, outsider.id], role: "admin" });
    expectError(r, 422, /not a member/);
    expectError(await as(admin).post("/v1/orgs/tg/repos/lib/grants", { user_ids: [viewer.id, "nobody-at-all"], role: "admin" }), 422);
    expect((await as(admin).get("/v1/orgs/tg/repos/lib/grants")).body).toEqual({ grants: [] });
  });

  test("rejections: bodies, roles, people, repos", async () => {
    const cases: [unknown, number][] = [
      [{ role: "member" }, 400],
      [{ user_ids: [viewer.id], team_id: "x", role: "member" }, 400],
      [{ user_ids: [], role: "member" }, 400],
      [{ user_ids: "someone", role: "member" }, 400],
      [{ user_ids: [viewer.id], role: "owner" }, 422],
      [{ user_ids: [viewer.id], role: "boss" }, 422],
      [{ user_ids: [viewer.id] }, 400],
      [{ team_id: "no-such-team", role: "viewer" }, 422],
    ];
    for (const [body, status] of cases) expectError(await as(admin).post("/v1/orgs/tg/repos/lib/grants", body), status);
    expectError(await as(member).post("/v1/orgs/tg/repos/lib/grants", { user_ids: [viewer.id], role: "admin" }), 403);
    expectError(await as(outsider).post("/v1/orgs/tg/repos/lib/grants", { user_ids: [viewer.id], role: "admin" }), 404);
    expectError(await as().post("/v1/orgs/tg/repos/lib/grants", { user_ids: [viewer.id], role: "admin" }), 401);
    expectError(await as(admin).post("/v1/orgs/tg/repos/missing/grants", { user_ids: [viewer.id], role: "admin" }), 404);
    expectError(await as(member).get("/v1/orgs/tg/repos/lib/access"), 403);
    expectError(await as(outsider).get("/v1/orgs/tg/repos/lib/access"), 404);
    expectError(await as(admin).delete("/v1/orgs/tg/repos/lib/grants/teams/no-such-team"), 404);
    expect((await as(admin).get("/v1/orgs/tg/repos/lib/grants")).body).toEqual({ grants: [] });
  });

  test("removing someone from the org ends their grants and team seats", async () => {
    const extra = await person(server, "tg", "temp@example.com", "viewer");
    await as(admin).post("/v1/orgs/tg/teams", { name: "temps" });
    await as(admin).put(`/v1/orgs/tg/teams/temps/members/${extra.handle}`);
    await as(admin).post("/v1/orgs/tg/repos/lib/grants", { user_ids: [extra.id], role: "admin" });
    expect((await as(extra).get("/v1/orgs/tg/repos/lib")).status).toBe(200);
    expect((await as(admin).delete(`/v1/orgs/tg/members/${extra.id}`)).status).toBe(204);
    // No org membership: no access, whatever the grants say.
    expectError(await as(extra).get("/v1/orgs/tg/repos/lib"), 404);
    expect((await as(admin).get("/v1/orgs/tg/teams/temps/members")).body.members).toEqual([]);
    expect((await as(admin).get("/v1/orgs/tg/repos/lib/access")).body.people.some((p: any) => p.user_id === extra.id)).toBe(false);
  });
});
