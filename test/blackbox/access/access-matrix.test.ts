// Who may do what on a repository and an organization, black-box over HTTP: org roles × per-repo
// grants × team grants × visibility × credential kinds (SPEC §2.13, §4.5, §4.6, §5.2–§5.5, §7;
// DECISIONS §2–§3; the people routes' contract for teams, grants and the access listing).
// One server for the file; each describe block works in its own organization or its own
// repositories, so the grants of one block never change the answers of another.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError, person, type Person as User, type Who } from "../../helpers/api.ts";

type Role = "viewer" | "member" | "admin" | "owner";
type Res = { status: number; body: any };

let server: RunningServer;
/** acme: owner, admin, member, viewer (the matrix's people); outsider: owner of `elsewhere` only. */
let owner: User, admin: User, member: User, viewer: User, outsider: User;
/** An unbound org:admin service token of acme, used to manage grants without being a person. */
let acmeAdmin: string;

const as = (who: Who) => caller(server, who);

/** Asserts a status, showing the body when it differs. */
function expectStatus(r: Res, status: number) {
  expect({ status: r.status, body: r.status === status ? "…" : r.body }).toEqual({ status, body: "…" });
  return r.body;
}

let seq = 0;
const repoPath = (org: string, repo: string) => `/v1/orgs/${org}/repos/${repo}`;

/** The representative routes, each answering only a status. */
const route = {
  getRepo: async (who: Who, org: string, repo: string) => (await as(who).get(repoPath(org, repo))).status,
  refs: async (who: Who, org: string, repo: string) => (await as(who).get(`${repoPath(org, repo)}/refs`)).status,
  commit: async (who: Who, org: string, repo: string) =>
    (
      await as(who).post(`${repoPath(org, repo)}/commits`, {
        message: `change ${++seq}`,
        operations: [{ op: "put", path: `f-${seq}.txt`, content: `${seq}\n` }],
      })
    ).status,
  patch: async (who: Who, org: string, repo: string) => (await as(who).patch(repoPath(org, repo), { description: `patched ${++seq}` })).status,
  grants: async (who: Who, org: string, repo: string) => (await as(who).get(`${repoPath(org, repo)}/grants`)).status,
  members: async (who: Who, org: string) => (await as(who).get(`/v1/orgs/${org}/members`)).status,
  createTeam: async (who: Who, org: string) => (await as(who).post(`/v1/orgs/${org}/teams`, { name: `team-${++seq}` })).status,
};

async function createRepo(org: string, name: string, pub = false, who: Who = owner) {
  return expectStatus(await as(who).post(`/v1/orgs/${org}/repos`, { name, public: pub }), 201);
}

async function createTeam(org: string, name: string, who: Who = owner): Promise<{ id: string; name: string }> {
  return expectStatus(await as(who).post(`/v1/orgs/${org}/teams`, { name }), 201);
}

async function addToTeam(org: string, team: string, user: User, who: Who = owner) {
  expectStatus(await as(who).put(`/v1/orgs/${org}/teams/${team}/members/${user.id}`), 204);
}

async function grant(org: string, repo: string, body: { user_ids: string[]; role: string } | { team_id: string; role: string }, who: Who = owner) {
  return expectStatus(await as(who).post(`${repoPath(org, repo)}/grants`, body), 200);
}

/** Mints with a session or a token; asserts 201 and returns the secret. */
async function mint(who: Who, body: Record<string, unknown>, org = "acme"): Promise<string> {
  return expectStatus(await as(who).post(`/v1/orgs/${org}/tokens`, body), 201).token;
}

const WRITE_REFUSAL = (repo: string) => new RegExp(`${repo.replace("/", "\\/")}.*(fork|write access)`, "is");

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "acme", "olga@acme.example", "owner");
  [admin, member, viewer, outsider] = await Promise.all([
    person(server, "acme", "adam@acme.example", "admin"),
    person(server, "acme", "mona@acme.example", "member"),
    person(server, "acme", "vic@acme.example", "viewer"),
    person(server, "elsewhere", "oz@elsewhere.example", "owner"),
  ]);
  acmeAdmin = await mint(owner, { kind: "service", scopes: ["org:admin"], label: "people admin" });
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

// ---------------------------------------------------------------------------------------------
describe("effective role: org role × direct grant × team grants (SPEC §5.2, §5.3.1)", () => {
  /**
   * Each case gets its own repository. `grant` names the person; `teams` are the grants of the
   * two teams every matrix person belongs to (alpha, beta). `expect` is the effective role.
   */
  interface Case {
    name: string;
    org: Role;
    grant?: Exclude<Role, "owner">;
    teams?: [Exclude<Role, "owner">?, Exclude<Role, "owner">?];
    pub?: boolean;
    expect: Role;
  }
  const cases: Case[] = [
    { name: "viewer, nothing else", org: "viewer", expect: "viewer" },
    { name: "member, nothing else", org: "member", expect: "member" },
    { name: "admin, nothing else", org: "admin", expect: "admin" },
    { name: "owner, nothing else", org: "owner", expect: "owner" },
    { name: "viewer granted admin (grant up)", org: "viewer", grant: "admin", expect: "admin" },
    { name: "viewer granted member (grant up)", org: "viewer", grant: "member", expect: "member" },
    { name: "member granted admin (grant up)", org: "member", grant: "admin", expect: "admin" },
    { name: "admin granted viewer (grant down)", org: "admin", grant: "viewer", expect: "viewer" },
    { name: "admin granted member (grant down)", org: "admin", grant: "member", expect: "member" },
    { name: "owner granted viewer (grant down)", org: "owner", grant: "viewer", expect: "viewer" },
    { name: "member granted viewer beats an admin team grant", org: "member", grant: "viewer", teams: ["admin"], expect: "viewer" },
    { name: "viewer granted member beats an admin team grant", org: "viewer", grant: "member", teams: [undefined, "admin"], expect: "member" },
    { name: "viewer, one team grant member (raises)", org: "viewer", teams: ["member"], expect: "member" },
    { name: "viewer, one team grant admin (raises)", org: "viewer", teams: [undefined, "admin"], expect: "admin" },
    { name: "viewer, two teams member and admin: the higher", org: "viewer", teams: ["member", "admin"], expect: "admin" },
    { name: "viewer, two teams admin and viewer: the higher", org: "viewer", teams: ["admin", "viewer"], expect: "admin" },
    { name: "member, two teams viewer and viewer: never lowers", org: "member", teams: ["viewer", "viewer"], expect: "member" },
    { name: "admin, team grant viewer: never lowers", org: "admin", teams: ["viewer"], expect: "admin" },
    { name: "owner, team grants viewer and member: never lowers", org: "owner", teams: ["viewer", "member"], expect: "owner" },
    { name: "member, team grant admin (raises)", org: "member", teams: ["admin"], expect: "admin" },
    { name: "public: admin granted viewer", org: "admin", grant: "viewer", pub: true, expect: "viewer" },
    { name: "public: viewer, team grant member", org: "viewer", teams: ["member"], pub: true, expect: "member" },
    { name: "public: viewer granted admin", org: "viewer", grant: "admin", pub: true, expect: "admin" },
  ];
  const people = (): Record<Role, User> => ({ viewer, member, admin, owner });
  const repoOf = (i: number) => `matrix-${String(i).padStart(2, "0")}`;
  /** Personal tokens of each matrix person: read-only and read-write. */
  const tokens: Record<Role, { ro: string; rw: string }> = {} as never;

  beforeAll(async () => {
    const alpha = await createTeam("acme", "Alpha");
    const beta = await createTeam("acme", "Beta");
    for (const who of Object.values(people())) {
      await addToTeam("acme", alpha.name, who);
      await addToTeam("acme", beta.id, who); // by id as well as by name
    }
    for (const [i, c] of cases.entries()) {
      const repo = repoOf(i);
      await createRepo("acme", repo, c.pub ?? false);
      if (c.grant) await grant("acme", repo, { user_ids: [people()[c.org].id], role: c.grant }, acmeAdmin);
      const [a, b] = c.teams ?? [];
      if (a) await grant("acme", repo, { team_id: alpha.id, role: a }, acmeAdmin);
      if (b) await grant("acme", repo, { team_id: beta.id, role: b }, acmeAdmin);
    }
    // Minted after the grants: the viewer may mint repo:write only because of them (SPEC §5.3.2).
    for (const [role, who] of Object.entries(people()) as [Role, User][]) {
      tokens[role] = {
        ro: await mint(who, { scopes: ["repo:read"], label: `${role} ro` }),
        rw: await mint(who, { scopes: ["repo:write"], label: `${role} rw` }),
      };
    }
  }, 60_000);

  const rank = { viewer: 1, member: 2, admin: 3, owner: 4 } as const;
  /** What a role allows: read (GET refs), write (POST commits), administer (PATCH repo). */
  const allowed = (role: Role, scopes: "all" | "rw" | "ro") => ({
    read: 200,
    write: rank[role] >= rank.member && scopes !== "ro" ? 201 : 403,
    admin: rank[role] >= rank.admin && scopes !== "ro" ? 200 : 403,
  });

  test("session, repo:write token and repo:read token, per case", async () => {
    const actual = [];
    const expected = [];
    for (const [i, c] of cases.entries()) {
      const repo = repoOf(i);
      const who = people()[c.org];
      const row = async (cred: Who) => ({
        read: await route.refs(cred, "acme", repo),
        write: await route.commit(cred, "acme", repo),
        admin: await route.patch(cred, "acme", repo),
      });
      const got = await as(who).get(repoPath("acme", repo));
      actual.push({
        case: c.name,
        session: await row(who),
        rw: await row(tokens[c.org].rw),
        ro: await row(tokens[c.org].ro),
        body: { status: got.status, viewer_write: got.body?.viewer_write, viewer_admin: got.body?.viewer_admin },
      });
      expected.push({
        case: c.name,
        session: allowed(c.expect, "all"),
        rw: allowed(c.expect, "rw"),
        ro: allowed(c.expect, "ro"),
        body: { status: 200, viewer_write: rank[c.expect] >= rank.member, viewer_admin: rank[c.expect] >= rank.admin },
      });
    }
    expect(actual).toEqual(expected);
  }, 60_000);

  test("a refused write names the repository and advises a fork or asking for access (SPEC §5.5.4)", async () => {
    const i = cases.findIndex((c) => c.name === "admin granted viewer (grant down)");
    const r = await as(admin).post(`${repoPath("acme", repoOf(i))}/commits`, { message: "x", operations: [{ op: "put", path: "x", content: "x" }] });
    expectError(r, 403, WRITE_REFUSAL(`acme/${repoOf(i)}`));
  });

  test("the grants listing shows what was granted (contract shape)", async () => {
    const i = cases.findIndex((c) => c.name === "member granted viewer beats an admin team grant");
    const r = await as(acmeAdmin).get(`${repoPath("acme", repoOf(i))}/grants`);
    const body = expectStatus(r, 200);
    const sorted = [...body.grants].sort((a: any, b: any) => (a.user_id ? 0 : 1) - (b.user_id ? 0 : 1));
    expect(sorted).toEqual([
      { user_id: member.id, handle: member.handle, role: "viewer" },
      { team_id: expect.any(String), team_name: "Alpha", role: "admin" },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
describe("callers × routes on a private and a public repository (SPEC §5.1, §5.3, §5.5)", () => {
  /** Statuses of [GET repo, GET refs, POST commits, PATCH repo, GET grants]. */
  type RepoRow = [number, number, number, number, number] | [number, number, number, number];
  interface Row {
    who: string;
    cred: () => Who;
    priv: RepoRow;
    pub: RepoRow;
    /** Another private repository of acme (repo-bound tokens). */
    other?: RepoRow;
    /** GET /v1/orgs/acme/members (org:read), POST /v1/orgs/acme/teams (org admin). */
    org: [number, number];
  }
  const creds: Record<string, string> = {};

  beforeAll(async () => {
    await createRepo("acme", "priv");
    await createRepo("acme", "pub", true);
    await createRepo("acme", "priv2");
    const svc = (scopes: string[], repo?: string) =>
      mint(owner, { kind: "service", scopes, label: `svc ${scopes.join(" ")} ${repo ?? ""}`, ...(repo ? { repo } : {}) });
    Object.assign(creds, {
      adminRw: await mint(admin, { scopes: ["repo:write"], label: "admin rw" }),
      adminOrgAdmin: await mint(admin, { scopes: ["org:admin"], label: "admin org:admin" }),
      memberRw: await mint(member, { scopes: ["repo:write", "org:read"], label: "member rw" }),
      viewerRo: await mint(viewer, { scopes: ["repo:read"], label: "viewer ro" }),
      viewerRoOrg: await mint(viewer, { scopes: ["repo:read", "org:read"], label: "viewer ro org" }),
      svcRead: await svc(["repo:read"]),
      svcWrite: await svc(["repo:write"]),
      svcAdmin: await svc(["org:admin"]),
      boundWrite: await svc(["repo:write"], "priv"),
      boundAdmin: await svc(["org:admin"], "priv"),
      outsiderPersonal: await mint(outsider, { scopes: ["repo:write"], label: "outsider rw" }, "elsewhere"),
      foreignService: await mint(outsider, { kind: "service", scopes: ["org:admin"], label: "foreign admin" }, "elsewhere"),
    });
  }, 60_000);

  //                                         GET  refs commit patch grants
  const rows: Row[] = [
    { who: "anonymous", cred: () => undefined, priv: [401, 401, 401, 401, 401], pub: [200, 200, 401, 401, 401], org: [401, 401] },
    { who: "outsider session", cred: () => outsider, priv: [404, 404, 404, 404, 404], pub: [200, 200, 403, 403, 404], org: [404, 404] },
    {
      who: "outsider's personal token (own org)",
      cred: () => creds.outsiderPersonal,
      priv: [404, 404, 404, 404, 404],
      pub: [200, 200, 403, 403, 404],
      org: [404, 404],
    },
    {
      who: "another org's org:admin service token",
      cred: () => creds.foreignService,
      priv: [404, 404, 404, 404, 404],
      pub: [200, 200, 403, 403, 404],
      org: [404, 404],
    },
    { who: "viewer session", cred: () => viewer, priv: [200, 200, 403, 403, 403], pub: [200, 200, 403, 403, 403], org: [200, 403] },
    { who: "viewer token repo:read", cred: () => creds.viewerRo, priv: [200, 200, 403, 403, 403], pub: [200, 200, 403, 403, 403], org: [403, 403] },
    { who: "viewer token repo:read org:read", cred: () => creds.viewerRoOrg, priv: [200, 200, 403, 403, 403], pub: [200, 200, 403, 403, 403], org: [200, 403] },
    { who: "member session", cred: () => member, priv: [200, 200, 201, 403, 403], pub: [200, 200, 201, 403, 403], org: [200, 403] },
    { who: "member token repo:write org:read", cred: () => creds.memberRw, priv: [200, 200, 201, 403, 403], pub: [200, 200, 201, 403, 403], org: [200, 403] },
    { who: "admin session", cred: () => admin, priv: [200, 200, 201, 200, 200], pub: [200, 200, 201, 200, 200], org: [200, 201] },
    { who: "owner session", cred: () => owner, priv: [200, 200, 201, 200, 200], pub: [200, 200, 201, 200, 200], org: [200, 201] },
    {
      who: "admin token repo:write (no org scopes)",
      cred: () => creds.adminRw,
      priv: [200, 200, 201, 200, 403],
      pub: [200, 200, 201, 200, 403],
      org: [403, 403],
    },
    { who: "admin token org:admin", cred: () => creds.adminOrgAdmin, priv: [200, 200, 201, 200, 200], pub: [200, 200, 201, 200, 200], org: [200, 201] },
    { who: "service token repo:read", cred: () => creds.svcRead, priv: [200, 200, 403, 403, 403], pub: [200, 200, 403, 403, 403], org: [403, 403] },
    { who: "service token repo:write", cred: () => creds.svcWrite, priv: [200, 200, 201, 403, 403], pub: [200, 200, 201, 403, 403], org: [403, 403] },
    { who: "service token org:admin", cred: () => creds.svcAdmin, priv: [200, 200, 201, 200, 200], pub: [200, 200, 201, 200, 200], org: [200, 201] },
    // Repo-bound tokens: their repo per scopes; another repo 404; org-level 403 (SPEC §4.6, §5.1).
    {
      who: "service token repo:write bound to priv",
      cred: () => creds.boundWrite,
      priv: [200, 200, 201, 403],
      pub: [200, 200, 403, 403],
      other: [404, 404, 404, 404],
      org: [403, 403],
    },
    {
      who: "service token org:admin bound to priv",
      cred: () => creds.boundAdmin,
      priv: [200, 200, 201, 200],
      pub: [200, 200, 403, 403],
      other: [404, 404, 404, 404],
      org: [403, 403],
    },
  ];

  const repoRow = async (who: Who, repo: string, n: number) => {
    const out = [
      await route.getRepo(who, "acme", repo),
      await route.refs(who, "acme", repo),
      await route.commit(who, "acme", repo),
      await route.patch(who, "acme", repo),
    ];
    if (n === 5) out.push(await route.grants(who, "acme", repo));
    return out;
  };

  test("allow / 401 / 403 / 404 per caller and route", async () => {
    const actual = [];
    for (const r of rows) {
      const who = r.cred();
      actual.push({
        who: r.who,
        priv: await repoRow(who, "priv", r.priv.length),
        pub: await repoRow(who, "pub", r.pub.length),
        ...(r.other ? { other: await repoRow(who, "priv2", r.other.length) } : {}),
        org: [await route.members(who, "acme"), await route.createTeam(who, "acme")],
      });
    }
    expect(actual).toEqual(rows.map(({ cred: _c, ...r }) => r));
  }, 60_000);

  test("a person with no role in the org reads a public repo as themself and is refused a write naming it", async () => {
    const got = expectStatus(await as(outsider).get(repoPath("acme", "pub")), 200);
    expect(got).toMatchObject({ name: "pub", public: true, viewer_write: false, viewer_admin: false });
    // As themself: a person's refusal (403 naming the repo), not the anonymous 401.
    const commit = { message: "x", operations: [{ op: "put", path: "x", content: "x" }] };
    expectError(await as(outsider).post(`${repoPath("acme", "pub")}/commits`, commit), 403, WRITE_REFUSAL("acme/pub"));
    expectError(await as(creds.outsiderPersonal).post(`${repoPath("acme", "pub")}/commits`, commit), 403, WRITE_REFUSAL("acme/pub"));
    expectError(await as(undefined).post(`${repoPath("acme", "pub")}/commits`, commit), 401);
  });

  test("refusals carry the error body; 404 does not reveal a private repo exists", async () => {
    const unknown = await as(outsider).get(repoPath("acme", "no-such-repo"));
    const hidden = await as(outsider).get(repoPath("acme", "priv"));
    expectError(unknown, 404);
    expectError(hidden, 404);
    expect(hidden.body).toEqual(unknown.body);
    expectError(await as(undefined).get(repoPath("acme", "priv")), 401);
    expectError(await as(undefined).get(repoPath("acme", "no-such-repo")), 401);
  });

  test("service tokens: minting needs org:admin", async () => {
    expectError(await as(member).post("/v1/orgs/acme/tokens", { kind: "service", scopes: ["repo:read"], label: "x" }), 403);
    expectError(await as(viewer).post("/v1/orgs/acme/tokens", { kind: "service", scopes: ["repo:read"], label: "x" }), 403);
    // An admin's token without org:admin may not mint one either.
    expectError(await as(creds.adminRw).post("/v1/orgs/acme/tokens", { kind: "service", scopes: ["repo:read"], label: "x" }), 403);
    expect(await mint(admin, { kind: "service", scopes: ["repo:read"], label: "by admin" })).toStartWith("svc_");
    expect(await mint(creds.svcAdmin, { scopes: ["repo:read"], label: "by service" })).toStartWith("svc_");
    expectError(await as(outsider).post("/v1/orgs/acme/tokens", { kind: "service", scopes: ["repo:read"], label: "x" }), 404);
  });
});

// ---------------------------------------------------------------------------------------------
describe("every request re-evaluates the person's authority (SPEC §5.2, §5.3.1)", () => {
  let dana: User;
  let token: string;
  const commit = (who: Who) => route.commit(who, "acme", "live");
  const patch = (who: Who) => route.patch(who, "acme", "live");
  /** Both credentials of the person at once: [session, token]. */
  const both = async (f: (w: Who) => Promise<number>) => [await f(dana), await f(token)];

  beforeAll(async () => {
    dana = await person(server, "acme", "dana@acme.example", "member");
    await createRepo("acme", "live");
    await createRepo("acme", "live-pub", true);
    token = await mint(dana, { scopes: ["repo:write"], label: "dana rw" });
  }, 30_000);

  test("grant down, grant up, grant removed, role changed, teams added and deleted, membership removed", async () => {
    const steps: { step: string; act: () => Promise<unknown>; expect: { write: number[]; admin: number[] } }[] = [
      { step: "member, no grants", act: async () => {}, expect: { write: [201, 201], admin: [403, 403] } },
      {
        step: "granted viewer",
        act: () => grant("acme", "live", { user_ids: [dana.id], role: "viewer" }),
        expect: { write: [403, 403], admin: [403, 403] },
      },
      {
        step: "re-granted admin (replaces)",
        act: () => grant("acme", "live", { user_ids: [dana.id], role: "admin" }),
        expect: { write: [201, 201], admin: [200, 200] },
      },
      {
        step: "grant removed",
        act: async () => expectStatus(await as(owner).delete(`${repoPath("acme", "live")}/grants/users/${dana.id}`), 204),
        expect: { write: [201, 201], admin: [403, 403] },
      },
      {
        step: "org role lowered to viewer",
        act: async () => expectStatus(await as(owner).put(`/v1/orgs/acme/members/${dana.id}`, { role: "viewer" }), 200),
        expect: { write: [403, 403], admin: [403, 403] },
      },
      {
        step: "in team Live with a member grant",
        act: async () => {
          const t = await createTeam("acme", "Live");
          await addToTeam("acme", t.id, dana);
          await grant("acme", "live", { team_id: t.id, role: "member" });
        },
        expect: { write: [201, 201], admin: [403, 403] },
      },
      {
        step: "also in team Live-Admins with an admin grant",
        act: async () => {
          const t = await createTeam("acme", "Live-Admins");
          await addToTeam("acme", "live-admins", dana); // team names are case-insensitive
          await grant("acme", "live", { team_id: t.id, role: "admin" });
        },
        expect: { write: [201, 201], admin: [200, 200] },
      },
      {
        step: "team Live-Admins deleted",
        act: async () => expectStatus(await as(owner).delete("/v1/orgs/acme/teams/Live-Admins"), 204),
        expect: { write: [201, 201], admin: [403, 403] },
      },
      {
        step: "removed from team Live",
        act: async () => expectStatus(await as(owner).delete(`/v1/orgs/acme/teams/live/members/${dana.id}`), 204),
        expect: { write: [403, 403], admin: [403, 403] },
      },
      {
        step: "org role raised to admin",
        act: async () => expectStatus(await as(owner).put(`/v1/orgs/acme/members/${dana.handle}`, { role: "admin" }), 200),
        expect: { write: [201, 201], admin: [200, 200] },
      },
    ];
    const actual = [];
    for (const s of steps) {
      await s.act();
      actual.push({ step: s.step, write: await both(commit), admin: await both(patch) });
    }
    expect(actual).toEqual(steps.map((s) => ({ step: s.step, ...s.expect })));
  }, 60_000);

  test("a deleted team's grants are gone from the grants listing", async () => {
    const body = expectStatus(await as(owner).get(`${repoPath("acme", "live")}/grants`), 200);
    expect(body.grants.map((g: any) => g.team_name ?? g.handle).sort()).toEqual(["Live"]);
  });

  test("membership removed: no access whatever the grants say; public repos stay readable", async () => {
    await grant("acme", "live", { user_ids: [dana.id], role: "admin" });
    expect(await both((w) => route.getRepo(w, "acme", "live"))).toEqual([200, 200]);
    expectStatus(await as(owner).delete(`/v1/orgs/acme/members/${dana.id}`), 204);
    expect({
      read: await both((w) => route.getRepo(w, "acme", "live")),
      write: await both(commit),
      admin: await both(patch),
      pubRead: await both((w) => route.getRepo(w, "acme", "live-pub")),
      pubWrite: await both((w) => route.commit(w, "acme", "live-pub")),
      members: await both((w) => route.members(w, "acme")),
    }).toEqual({ read: [404, 404], write: [404, 404], admin: [404, 404], pubRead: [200, 200], pubWrite: [403, 403], members: [404, 404] });
  });
});

// ---------------------------------------------------------------------------------------------
describe("membership is required for grants and teams (SPEC §4.5, §5.2.3)", () => {
  let ella: User, finn: User;

  beforeAll(async () => {
    [ella, finn] = await Promise.all([person(server, "acme", "ella@acme.example", "viewer"), person(server, "acme", "finn@acme.example", "viewer")]);
    await createRepo("acme", "guarded");
  }, 30_000);

  test("grants are all-or-nothing: one non-member id → 422 and nothing granted", async () => {
    const before = expectStatus(await as(owner).get(`${repoPath("acme", "guarded")}/grants`), 200);
    expect(before).toEqual({ grants: [] });
    expectError(await as(owner).post(`${repoPath("acme", "guarded")}/grants`, { user_ids: [ella.id, outsider.id], role: "admin" }), 422);
    expectError(await as(owner).post(`${repoPath("acme", "guarded")}/grants`, { user_ids: [ella.id, "no-such-user"], role: "admin" }), 422);
    expect(expectStatus(await as(owner).get(`${repoPath("acme", "guarded")}/grants`), 200)).toEqual({ grants: [] });
    expect(await route.patch(ella, "acme", "guarded")).toBe(403);
    // The same batch without the outsider goes through, for both.
    const ok = await grant("acme", "guarded", { user_ids: [ella.id, finn.id], role: "admin" });
    expect(ok.grants.map((g: any) => g.user_id).sort()).toEqual([ella.id, finn.id].sort());
    expect([await route.patch(ella, "acme", "guarded"), await route.patch(finn, "acme", "guarded")]).toEqual([200, 200]);
  });

  test("a grant role outside viewer|member|admin → 422", async () => {
    for (const role of ["owner", "superuser", ""]) {
      expectError(await as(owner).post(`${repoPath("acme", "guarded")}/grants`, { user_ids: [ella.id], role }), 422);
    }
  });

  test("grants management needs org admin", async () => {
    const body = { user_ids: [member.id], role: "admin" };
    expectError(await as(member).post(`${repoPath("acme", "guarded")}/grants`, body), 403);
    expectError(await as(viewer).post(`${repoPath("acme", "guarded")}/grants`, body), 403);
    expectError(await as(outsider).post(`${repoPath("acme", "guarded")}/grants`, body), 404);
    expectError(await as(undefined).post(`${repoPath("acme", "guarded")}/grants`, body), 401);
    expectError(await as(member).delete(`${repoPath("acme", "guarded")}/grants/users/${ella.id}`), 403);
    expect(await route.patch(member, "acme", "guarded")).toBe(403);
  });

  test("a team member must be an org member (422); team management needs org admin", async () => {
    const t = await createTeam("acme", "Guards");
    expectError(await as(owner).put(`/v1/orgs/acme/teams/${t.id}/members/${outsider.id}`), 422);
    expectError(await as(owner).put(`/v1/orgs/acme/teams/${t.id}/members/no-such-user`), 404);
    expectError(await as(owner).put(`/v1/orgs/acme/teams/no-such-team/members/${ella.id}`), 404);
    expectError(await as(member).put(`/v1/orgs/acme/teams/${t.id}/members/${member.id}`), 403);
    expectError(await as(outsider).put(`/v1/orgs/acme/teams/${t.id}/members/${outsider.id}`), 404);
    expectError(await as(member).delete(`/v1/orgs/acme/teams/${t.id}`), 403);
    const members = expectStatus(await as(owner).get(`/v1/orgs/acme/teams/${t.id}/members`), 200);
    expect(members).toEqual({ members: [], next_cursor: null });
  });

  test("removing a member makes their direct and team grants stop working", async () => {
    const t = await createTeam("acme", "Finners");
    await addToTeam("acme", t.id, finn);
    await createRepo("acme", "guarded-2");
    await grant("acme", "guarded-2", { team_id: t.id, role: "admin" });
    expect([await route.patch(ella, "acme", "guarded"), await route.patch(finn, "acme", "guarded-2")]).toEqual([200, 200]);
    expectStatus(await as(owner).delete(`/v1/orgs/acme/members/${ella.id}`), 204);
    expectStatus(await as(owner).delete(`/v1/orgs/acme/members/${finn.id}`), 204);
    expect({
      ellaDirect: [await route.getRepo(ella, "acme", "guarded"), await route.patch(ella, "acme", "guarded")],
      finnDirect: [await route.getRepo(finn, "acme", "guarded"), await route.patch(finn, "acme", "guarded")],
      finnTeam: [await route.getRepo(finn, "acme", "guarded-2"), await route.commit(finn, "acme", "guarded-2")],
    }).toEqual({ ellaDirect: [404, 404], finnDirect: [404, 404], finnTeam: [404, 404] });
  });
});

// ---------------------------------------------------------------------------------------------
describe("token mint: scopes the person can exercise somewhere in the org (SPEC §5.3.2)", () => {
  let gwen: User, hugo: User;

  beforeAll(async () => {
    [gwen, hugo] = await Promise.all([person(server, "acme", "gwen@acme.example", "viewer"), person(server, "acme", "hugo@acme.example", "viewer")]);
    await createRepo("acme", "mintable");
    await createRepo("acme", "unmintable");
  }, 30_000);

  test("a viewer with no write anywhere: repo:write and org:admin refused, repo:read and org:read minted", async () => {
    expectError(await as(gwen).post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "x" }), 403);
    expectError(await as(gwen).post("/v1/orgs/acme/tokens", { scopes: ["repo:read", "repo:write"], label: "x" }), 403);
    expectError(await as(gwen).post("/v1/orgs/acme/tokens", { scopes: ["org:admin"], label: "x" }), 403);
    expect(await mint(gwen, { scopes: ["repo:read", "org:read"], label: "ro" })).toStartWith("svc_");
  });

  test("a viewer grant does not open repo:write; a member grant on one repo does, and the token writes only there", async () => {
    await grant("acme", "mintable", { user_ids: [gwen.id], role: "viewer" });
    expectError(await as(gwen).post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "x" }), 403);
    await grant("acme", "mintable", { user_ids: [gwen.id], role: "member" });
    const t = await mint(gwen, { scopes: ["repo:write"], label: "rw" });
    expect({
      there: await route.commit(t, "acme", "mintable"),
      elsewhere: await route.commit(t, "acme", "unmintable"),
      read: await route.getRepo(t, "acme", "unmintable"),
    }).toEqual({
      there: 201,
      elsewhere: 403,
      read: 200,
    });
    // An admin grant makes org:admin exercisable on that repo, so it may be minted; the token's
    // authority is still capped by her roles: that repo's administration, nothing org-level.
    await grant("acme", "mintable", { user_ids: [gwen.id], role: "admin" });
    const adm = await mint(gwen, { scopes: ["org:admin"], label: "adm" });
    expect({
      patchThere: await route.patch(adm, "acme", "mintable"),
      patchElsewhere: await route.patch(adm, "acme", "unmintable"),
      grantsThere: await route.grants(adm, "acme", "mintable"),
      createTeam: await route.createTeam(adm, "acme"),
      serviceMint: (await as(adm).post("/v1/orgs/acme/tokens", { kind: "service", scopes: ["repo:read"], label: "x" })).status,
    }).toEqual({ patchThere: 200, patchElsewhere: 403, grantsThere: 403, createTeam: 403, serviceMint: 403 });
  });

  test("a team grant of member opens repo:write too", async () => {
    expectError(await as(hugo).post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "x" }), 403);
    const t = await createTeam("acme", "Minters");
    await addToTeam("acme", t.id, hugo);
    await grant("acme", "mintable", { team_id: t.id, role: "member" });
    const tok = await mint(hugo, { scopes: ["repo:write"], label: "rw" });
    expect(await route.commit(tok, "acme", "mintable")).toBe(201);
    // Team deleted: the token's authority follows on the next request.
    expectStatus(await as(owner).delete(`/v1/orgs/acme/teams/${t.id}`), 204);
    expect(await route.commit(tok, "acme", "mintable")).toBe(403);
  });
});

// ---------------------------------------------------------------------------------------------
describe("GET …/access: who can reach the repo, with what and why (SPEC §4.5)", () => {
  /** acc: its own people so the listing is exact. */
  let boss: User, adele: User, mark: User, vera: User, wade: User;
  let core: { id: string }, leads: { id: string }, readers: { id: string };

  beforeAll(async () => {
    boss = await person(server, "acc", "boss@acc.example", "owner");
    [adele, mark, vera, wade] = await Promise.all([
      person(server, "acc", "adele@acc.example", "admin"),
      person(server, "acc", "mark@acc.example", "member"),
      person(server, "acc", "vera@acc.example", "viewer"),
      person(server, "acc", "wade@acc.example", "viewer"),
    ]);
    await createRepo("acc", "lib", false, boss);
    await createRepo("acc", "other", false, boss);
    core = await createTeam("acc", "Core", boss);
    leads = await createTeam("acc", "Leads", boss);
    readers = await createTeam("acc", "Readers", boss);
    await createTeam("acc", "Idle", boss); // no grant on lib: not listed
    for (const u of [vera, wade, mark]) await addToTeam("acc", "core", u, boss);
    await addToTeam("acc", "leads", vera, boss);
    await addToTeam("acc", "readers", adele, boss);
    await grant("acc", "lib", { team_id: core.id, role: "member" }, boss);
    await grant("acc", "lib", { team_id: leads.id, role: "admin" }, boss);
    await grant("acc", "lib", { team_id: readers.id, role: "viewer" }, boss);
    await grant("acc", "lib", { user_ids: [mark.id], role: "viewer" }, boss); // beats Core's member
    await grant("acc", "other", { user_ids: [wade.id], role: "admin" }, boss); // another repo: irrelevant here
  }, 60_000);

  const entry = (u: User, role: Role, source: "org" | "grant" | "team", team_name: string | null) => ({
    user_id: u.id,
    handle: u.handle,
    email: u.email,
    role,
    source,
    team_name,
  });
  const byHandle = (a: any, b: any) => (a.handle < b.handle ? -1 : 1);
  const byTeam = (a: any, b: any) => (a.team_name < b.team_name ? -1 : 1);

  test("people with role and source (org, grant, team + team_name); teams with member_count", async () => {
    const body = expectStatus(await as(adele).get(`${repoPath("acc", "lib")}/access`), 200);
    expect(Object.keys(body).sort()).toEqual(["people", "teams"]);
    expect([...body.people].sort(byHandle)).toEqual(
      [
        entry(boss, "owner", "org", null),
        entry(adele, "admin", "org", null), // Readers' viewer grant does not lower her
        entry(mark, "viewer", "grant", null), // his own grant wins over Core
        entry(vera, "admin", "team", "Leads"), // two teams: the higher
        entry(wade, "member", "team", "Core"), // his admin grant is on another repo
      ].sort(byHandle),
    );
    expect([...body.teams].sort(byTeam)).toEqual([
      { team_id: core.id, team_name: "Core", role: "member", member_count: 3 },
      { team_id: leads.id, team_name: "Leads", role: "admin", member_count: 1 },
      { team_id: readers.id, team_name: "Readers", role: "viewer", member_count: 1 },
    ]);
  });

  test("the listing follows changes on the next request: team deleted, person removed", async () => {
    expectStatus(await as(boss).delete("/v1/orgs/acc/teams/leads"), 204);
    expectStatus(await as(boss).delete(`/v1/orgs/acc/members/${wade.id}`), 204);
    const body = expectStatus(await as(boss).get(`${repoPath("acc", "lib")}/access`), 200);
    const people = [...body.people].sort(byHandle);
    expect(people.find((p: any) => p.user_id === vera.id)).toEqual(entry(vera, "member", "team", "Core"));
    expect(people.map((p: any) => p.user_id)).not.toContain(wade.id);
    expect(people.length).toBe(4);
    expect([...body.teams].sort(byTeam)).toEqual([
      { team_id: core.id, team_name: "Core", role: "member", member_count: 2 },
      { team_id: readers.id, team_name: "Readers", role: "viewer", member_count: 1 },
    ]);
  });

  test("who may read the listing: org admins only", async () => {
    expect({
      owner: (await as(boss).get(`${repoPath("acc", "lib")}/access`)).status,
      admin: (await as(adele).get(`${repoPath("acc", "lib")}/access`)).status,
      member: (await as(mark).get(`${repoPath("acc", "lib")}/access`)).status,
      viewerInATeam: (await as(vera).get(`${repoPath("acc", "lib")}/access`)).status,
      outsider: (await as(outsider).get(`${repoPath("acc", "lib")}/access`)).status,
      anonymous: (await as(undefined).get(`${repoPath("acc", "lib")}/access`)).status,
    }).toEqual({ owner: 200, admin: 200, member: 403, viewerInATeam: 403, outsider: 404, anonymous: 401 });
  });
});
