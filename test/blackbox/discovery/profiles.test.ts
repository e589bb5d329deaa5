// Profiles, follows and pins over real HTTP (SPEC §2.8, §2.11, §4.2, §7, §8; DECISIONS §1 caps,
// §2 PATCH fields). Every refusal is checked to change nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { disableAccount } from "../../helpers/mail-capture.ts";
import { mintToken, startServer, type RunningServer } from "../../helpers/server.ts";

const T = 60_000;
let server: RunningServer;
let ada: Person;
let bob: Person;
let cy: Person;
let serviceToken: string;
let adaReadToken: string;

beforeAll(async () => {
  server = await startServer();
  ada = await person(server, "acme", "ada@example.com", "owner", { name: "Ada", handle: "ada" });
  bob = await person(server, "acme", "bob@example.com", "member", { name: "Bob", handle: "bob" });
  cy = await person(server, "cyorg", "cy@example.com", "owner", { name: "Cy", handle: "cy" });
  serviceToken = await mintToken(server, ada.cookie, "acme", { scopes: ["org:admin"], label: "svc", kind: "service" });
  adaReadToken = await mintToken(server, ada.cookie, "acme", { scopes: ["repo:read"], label: "read" });
  const a = caller(server, ada);
  for (const [org, name, pub] of [
    ["acme", "widgets", true],
    ["acme", "secret", false],
    ["ada", "ada", true],
    ["ada", "notes", false],
    ["acme", "gears", true],
  ] as const) {
    const r = await a.post(`/v1/orgs/${org}/repos`, { name, public: pub, description: `${name} repo` });
    expect(r.status).toBe(201);
  }
  const c = caller(server, cy);
  expect((await c.post("/v1/orgs/cyorg/repos", { name: "hidden", public: false })).status).toBe(201);
}, T);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

const anon = () => caller(server);
const profile = async (handle = "ada") => (await anon().get(`/v1/users/${handle}`)).body;

describe("user profile", () => {
  test("GET is anonymous, never shows an address or a private repository, and counts public repos the same for everyone", async () => {
    const r = await anon().get("/v1/users/ada");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      handle: "ada",
      name: "Ada",
      display_name: null,
      bio: null,
      location: null,
      company: null,
      pronouns: null,
      kind: "human",
      contrib_private_optin: false,
      profile_repo: null,
      created_at: expect.any(Number),
      links: [],
      public_repos: 1,
    });
    expect(JSON.stringify(r.body)).not.toContain("@");
    for (const who of [ada, bob, cy, serviceToken]) expect((await caller(server, who).get("/v1/users/ada")).body).toEqual(r.body);
    expect((await anon().get("/v1/users/ADA")).body.handle).toBe("ada");
  });

  test("unknown handle is 404", async () => {
    expectError(await anon().get("/v1/users/nobody-here"), 404);
  });

  test("PATCH by the person: absent keys untouched, null clears, links replace the list", async () => {
    const a = caller(server, ada);
    let r = await a.patch("/v1/users/ada", {
      display_name: "Ada L.",
      bio: "line one\nline two",
      location: "London",
      pronouns: "she/her",
      links: [
        { label: "blog", url: "https://ada.example.com" },
        { label: "code", url: "http://code.example.com/x" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ display_name: "Ada L.", bio: "line one\nline two", location: "London", pronouns: "she/her", company: null });
    expect(r.body.links).toHaveLength(2);
    r = await a.patch("/v1/users/ada", { company: "Engines", links: [{ label: "only", url: "https://only.example.com" }] });
    expect(r.body).toMatchObject({ display_name: "Ada L.", company: "Engines", links: [{ label: "only", url: "https://only.example.com" }] });
    r = await a.patch("/v1/users/ada", { display_name: null, links: null });
    expect(r.body).toMatchObject({ display_name: null, location: "London", links: [] });
    expect(await profile()).toEqual(r.body);
  });

  test("profile_repo names a public repository of one's own namespace; private or missing is 400", async () => {
    const a = caller(server, ada);
    expect((await a.patch("/v1/users/ada", { profile_repo: "ada" })).body.profile_repo).toBe("ada");
    expectError(await a.patch("/v1/users/ada", { profile_repo: "notes" }), 400, /public repository/);
    expectError(await a.patch("/v1/users/ada", { profile_repo: "nope" }), 400, /public repository/);
    expectError(await a.patch("/v1/users/ada", { profile_repo: "../x" }), 400);
    expect((await profile()).profile_repo).toBe("ada");
    // Made private later: the profile stops naming it.
    expect((await a.patch("/v1/orgs/ada/repos/ada", { public: false })).status).toBe(200);
    expect((await profile()).profile_repo).toBeNull();
    expect((await profile()).public_repos).toBe(0);
    expect((await a.patch("/v1/orgs/ada/repos/ada", { public: true })).status).toBe(200);
    expect((await profile()).profile_repo).toBe("ada");
  });

  test("bad input is 400 and changes nothing: caps, control characters, links", async () => {
    const a = caller(server, ada);
    const before = await profile();
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ display_name: "x".repeat(101) }, /display_name is longer than 100/],
      [{ name: "x".repeat(101) }, /name is longer than 100/],
      [{ bio: "x".repeat(501) }, /bio is longer than 500/],
      [{ location: "x".repeat(101) }, /location/],
      [{ company: "x".repeat(101) }, /company/],
      [{ pronouns: "x".repeat(41) }, /pronouns is longer than 40/],
      [{ display_name: "a\u0007b" }, /control character/],
      [{ location: "a\nb" }, /control character/],
      [{ bio: "a\u0000b" }, /control character/],
      [{ name: "" }, /name cannot be empty/],
      [{ links: Array.from({ length: 6 }, (_, i) => ({ label: `l${i}`, url: "https://e.example.com" })) }, /at most 5 links/],
      [{ links: [{ label: "x", url: "javascript:alert(1)" }] }, /http/],
      [{ links: [{ label: "x", url: "ftp://e.example.com" }] }, /http/],
      [{ links: [{ label: "x", url: "example.com" }] }, /http/],
      [{ links: [{ label: "x".repeat(51), url: "https://e.example.com" }] }, /label is longer than 50/],
      [{ links: [{ label: "x", url: `https://e.example.com/${"a".repeat(2000)}` }] }, /longer than 2000/],
      [{ display_name: 5 }, /./],
      [{ links: "https://e.example.com" }, /./],
    ];
    for (const [body, msg] of bad) expectError(await a.patch("/v1/users/ada", body), 400, msg);
    expect(await profile()).toEqual(before);
  });

  test("PATCH refusals: 401 anonymous, 403 someone else's, 403 service token, 404 unknown", async () => {
    const before = await profile();
    expectError(await anon().patch("/v1/users/ada", { bio: "hacked" }), 401);
    expectError(await caller(server, bob).patch("/v1/users/ada", { bio: "hacked" }), 403);
    expectError(await caller(server, serviceToken).patch("/v1/users/ada", { bio: "hacked" }), 403);
    expectError(await caller(server, bob).patch("/v1/users/nobody-here", { bio: "x" }), 404);
    expect(await profile()).toEqual(before);
  });

  test("the opt-in is part of the profile and null clears it", async () => {
    const a = caller(server, ada);
    expect((await a.patch("/v1/users/ada", { contrib_private_optin: true })).body.contrib_private_optin).toBe(true);
    expect((await a.patch("/v1/users/ada", { contrib_private_optin: null })).body.contrib_private_optin).toBe(false);
  });
});

describe("org profile", () => {
  test("a never-edited org reads like a cleared one; anonymous GET; admin PATCH; null clears", async () => {
    const fresh = await anon().get("/v1/orgs/acme/profile");
    expect(fresh.body).toEqual({ org: "acme", display_name: null, description: null, location: null, website: null, contact_email: null, public_repos: 2 });
    const a = caller(server, ada);
    const set = {
      display_name: "Acme",
      description: "Widgets.",
      location: "Phoenix",
      website: "https://acme.example.com",
      contact_email: "hello@acme.example.com",
    };
    let r = await a.patch("/v1/orgs/acme/profile", set);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ org: "acme", ...set, public_repos: 2 });
    expect((await anon().get("/v1/orgs/acme/profile")).body).toEqual(r.body);
    r = await a.patch("/v1/orgs/acme/profile", { display_name: null, description: null, location: null, website: null, contact_email: null });
    expect(r.body).toEqual(fresh.body);
    expect((await caller(server, serviceToken).patch("/v1/orgs/acme/profile", { display_name: "Acme Inc" })).body.display_name).toBe("Acme Inc");
  });

  test("refusals change nothing: 400 bad website/address/cap, 401, 403 member, 404 outsider and unknown org", async () => {
    const before = (await anon().get("/v1/orgs/acme/profile")).body;
    const a = caller(server, ada);
    expectError(await a.patch("/v1/orgs/acme/profile", { website: "acme.example.com" }), 400, /website/);
    expectError(await a.patch("/v1/orgs/acme/profile", { website: "javascript:alert(1)" }), 400, /website/);
    expectError(await a.patch("/v1/orgs/acme/profile", { contact_email: "not an address" }), 400, /contact_email/);
    expectError(await a.patch("/v1/orgs/acme/profile", { description: "x".repeat(501) }), 400, /500/);
    expectError(await a.patch("/v1/orgs/acme/profile", { display_name: "a\u0001" }), 400, /control/);
    expectError(await anon().patch("/v1/orgs/acme/profile", { display_name: "x" }), 401);
    expectError(await caller(server, bob).patch("/v1/orgs/acme/profile", { display_name: "x" }), 403);
    expectError(await caller(server, cy).patch("/v1/orgs/acme/profile", { display_name: "x" }), 404);
    expectError(await anon().get("/v1/orgs/no-such-org/profile"), 404);
    expect((await anon().get("/v1/orgs/acme/profile")).body).toEqual(before);
  });
});

describe("follows", () => {
  test("follow and unfollow are idempotent; counts and you_follow; anonymous sees you_follow false", async () => {
    const b = caller(server, bob);
    expect((await anon().get("/v1/users/ada/follow")).body).toEqual({ followers: 0, following: 0, you_follow: false });
    expect((await b.put("/v1/users/ada/follow")).body).toEqual({ followers: 1, following: 0, you_follow: true });
    expect((await b.put("/v1/users/ada/follow")).body).toEqual({ followers: 1, following: 0, you_follow: true });
    expect((await caller(server, cy).put("/v1/users/ada/follow")).body).toEqual({ followers: 2, following: 0, you_follow: true });
    expect((await anon().get("/v1/users/ada/follow")).body).toEqual({ followers: 2, following: 0, you_follow: false });
    expect((await b.get("/v1/users/ada/follow")).body.you_follow).toBe(true);
    expect((await anon().get("/v1/users/bob/follow")).body).toEqual({ followers: 0, following: 1, you_follow: false });
    // Newest first.
    expect((await anon().get("/v1/users/ada/followers")).body).toEqual({
      people: [
        { handle: "cy", display_name: null },
        { handle: "bob", display_name: null },
      ],
    });
    expect((await anon().get("/v1/users/bob/following")).body).toEqual({ people: [{ handle: "ada", display_name: null }] });
    expect((await b.delete("/v1/users/ada/follow")).body).toEqual({ followers: 1, following: 0, you_follow: false });
    expect((await b.delete("/v1/users/ada/follow")).body).toEqual({ followers: 1, following: 0, you_follow: false });
    expect((await anon().get("/v1/users/ada/followers")).body.people.map((p: any) => p.handle)).toEqual(["cy"]);
  });

  test("refusals change nothing: 400 yourself, 401 anonymous and service token, 404 unknown", async () => {
    const before = (await anon().get("/v1/users/ada/follow")).body;
    expectError(await caller(server, ada).put("/v1/users/ada/follow"), 400, /yourself/);
    expectError(await caller(server, ada).put("/v1/users/ADA/follow"), 400, /yourself/);
    expectError(await anon().put("/v1/users/ada/follow"), 401);
    expectError(await anon().delete("/v1/users/ada/follow"), 401);
    expectError(await caller(server, serviceToken).put("/v1/users/ada/follow"), 401);
    expectError(await caller(server, serviceToken).delete("/v1/users/ada/follow"), 401);
    expectError(await caller(server, bob).put("/v1/users/nobody-here/follow"), 404);
    expectError(await anon().get("/v1/users/nobody-here/follow"), 404);
    expectError(await anon().get("/v1/users/nobody-here/followers"), 404);
    expectError(await anon().get("/v1/users/nobody-here/following"), 404);
    expect((await anon().get("/v1/users/ada/follow")).body).toEqual(before);
  });

  test("a personal token follows as its person", async () => {
    expect((await caller(server, adaReadToken).put("/v1/users/cy/follow")).body).toEqual({ followers: 1, following: 1, you_follow: true });
  });
});

describe("pins", () => {
  const put = (who: Person | string, pins: unknown[], handle = "ada") => caller(server, who).put(`/v1/users/${handle}/pins`, { pins });

  test("pins public repositories in order; GET is anonymous", async () => {
    const r = await put(ada, [
      { org: "acme", repo: "gears" },
      { org: "ACME", repo: "Widgets", kind: "repo" },
      { org: "ada", repo: "ada" },
    ]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      pins: [
        { kind: "repo", org: "acme", name: "gears", description: "gears repo", public: true },
        { kind: "repo", org: "acme", name: "widgets", description: "widgets repo", public: true },
        { kind: "repo", org: "ada", name: "ada", description: "ada repo", public: true },
      ],
    });
    expect((await anon().get("/v1/users/ada/pins")).body).toEqual(r.body);
    expect((await put(ada, [])).body).toEqual({ pins: [] });
  });

  test("pin rules are 400 and change nothing: over 6, duplicate, private, unknown, invisible, kind", async () => {
    expect((await put(ada, [{ org: "acme", repo: "widgets" }])).status).toBe(200);
    const before = (await anon().get("/v1/users/ada/pins")).body;
    const seven = Array.from({ length: 7 }, () => ({ org: "acme", repo: "widgets" }));
    expectError(await put(ada, seven), 400);
    expectError(
      await put(ada, [
        { org: "acme", repo: "widgets" },
        { org: "acme", repo: "WIDGETS" },
      ]),
      400,
      /twice/,
    );
    expectError(await put(ada, [{ org: "acme", repo: "secret" }]), 400, /private/);
    expectError(await put(ada, [{ org: "acme", repo: "nope" }]), 400, /no repository/);
    expectError(await put(ada, [{ org: "nope-org", repo: "x" }]), 400, /no repository/);
    // Cy's private repository is invisible to Ada: the same answer as a missing one.
    const invisible = await put(ada, [{ org: "cyorg", repo: "hidden" }]);
    expectError(invisible, 400, /no repository/);
    expect(invisible.body.error).toBe("pins[0]: no repository cyorg/hidden");
    expect((await put(ada, [{ org: "cyorg", repo: "missing" }])).body.error).toBe("pins[0]: no repository cyorg/missing");
    expectError(await put(ada, [{ org: "acme", repo: "widgets", kind: "gist" }]), 400, /kind/);
    expectError(await caller(server, ada).put("/v1/users/ada/pins", { pins: "acme/widgets" }), 400);
    expectError(await caller(server, ada).put("/v1/users/ada/pins", {}), 400);
    expect((await anon().get("/v1/users/ada/pins")).body).toEqual(before);
  });

  test("refusals: 401 anonymous, 403 someone else's or a service token, 404 unknown", async () => {
    const before = (await anon().get("/v1/users/ada/pins")).body;
    expectError(await anon().put("/v1/users/ada/pins", { pins: [] }), 401);
    expectError(await put(bob, []), 403);
    expectError(await put(serviceToken, []), 403);
    expectError(await put(bob, [], "nobody-here"), 404);
    expectError(await anon().get("/v1/users/nobody-here/pins"), 404);
    expect((await anon().get("/v1/users/ada/pins")).body).toEqual(before);
  });

  test("a pinned repository made private or deleted disappears from the list", async () => {
    const a = caller(server, ada);
    expect((await a.post("/v1/orgs/acme/repos", { name: "temp", public: true })).status).toBe(201);
    expect(
      (
        await put(ada, [
          { org: "acme", repo: "gears" },
          { org: "acme", repo: "temp" },
          { org: "acme", repo: "widgets" },
        ])
      ).status,
    ).toBe(200);
    expect((await a.patch("/v1/orgs/acme/repos/gears", { public: false })).status).toBe(200);
    expect((await a.delete("/v1/orgs/acme/repos/temp")).status).toBe(204);
    expect((await anon().get("/v1/users/ada/pins")).body.pins.map((p: any) => p.name)).toEqual(["widgets"]);
    expect((await caller(server, ada).get("/v1/users/ada/pins")).body.pins.map((p: any) => p.name)).toEqual(["widgets"]);
    expect((await a.patch("/v1/orgs/acme/repos/gears", { public: true })).status).toBe(200);
    expect((await anon().get("/v1/users/ada/pins")).body.pins.map((p: any) => p.name)).toEqual(["gears", "widgets"]);
  });
});

describe("a disabled account", () => {
  test("is 404 on every profile route and absent from follower lists", async () => {
    const dee = await person(server, "acme", "dee@example.com", "member", { handle: "dee" });
    expect((await caller(server, dee).put("/v1/users/cy/follow")).status).toBe(200);
    const followersBefore = (await anon().get("/v1/users/cy/followers")).body.people.map((p: any) => p.handle);
    expect(followersBefore).toContain("dee");
    disableAccount(server.dataDir, "dee@example.com");
    for (const path of [
      "/v1/users/dee",
      "/v1/users/dee/follow",
      "/v1/users/dee/followers",
      "/v1/users/dee/following",
      "/v1/users/dee/pins",
      "/v1/users/dee/contributions",
    ]) {
      expectError(await anon().get(path), 404);
    }
    expect((await anon().get("/v1/users/cy/followers")).body.people.map((p: any) => p.handle)).not.toContain("dee");
    expect((await anon().get("/v1/users/cy/follow")).body.followers).toBe(followersBefore.length - 1);
  });
});
