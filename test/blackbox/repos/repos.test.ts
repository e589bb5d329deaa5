// Repositories: create, read, list, patch, delete and visibility (SPEC §2.1, §5.5; DECISIONS §1, §3).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError, person, type Person as User } from "../../helpers/api.ts";

let server: RunningServer;
/** rp: owner, member, viewer; elsewhere: an outsider. */
let owner: User, member: User, viewer: User, outsider: User;
/** A service token of the outsider's org. */
let foreignToken: string;

const as = (who?: User | string) => caller(server, who);

async function create(org: string, body: Record<string, unknown>, who: User = owner) {
  const r = await as(who).post(`/v1/orgs/${org}/repos`, body);
  expect({ status: r.status, error: r.body?.error }).toEqual({ status: 201, error: undefined });
  return r.body;
}

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "rp", "rose@example.com", "owner");
  [member, viewer, outsider] = await Promise.all([
    person(server, "rp", "max@example.com", "member"),
    person(server, "rp", "val@example.com", "viewer"),
    person(server, "elsewhere", "oscar@example.com", "owner"),
  ]);
  const t = await as(outsider).post("/v1/orgs/elsewhere/tokens", { kind: "service", scopes: ["org:admin"], label: "foreign" });
  foreignToken = t.body.token;
}, 30_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

describe("POST /v1/orgs/{org}/repos", () => {
  test("201 with every §2.1 field", async () => {
    const r = await as(owner).post("/v1/orgs/rp/repos", { name: "Alpha", description: "first repo", homepage: "https://example.com/alpha" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      org_id: expect.any(String),
      org: "rp",
      name: "Alpha",
      kind: "native",
      public: false,
      default_branch: "main",
      origin_url: null,
      origin_provider: null,
      origin_installation: null,
      last_sync_at: null,
      last_synced_commit: null,
      sync_error: null,
      created_at: expect.any(Number),
      clone_url: `${server.url}/rp/Alpha.git`,
      ssh_clone_url: null,
      description: "first repo",
      homepage: "https://example.com/alpha",
      fork_count: 0,
      watcher_count: 0,
      fork_parent: null,
      viewer_admin: true,
      viewer_write: true,
      write_blocked: null,
    });
    expect(r.body.created_at).toBeGreaterThan(1_500_000_000_000);
    // SPEC §2.1: fork_state is absent (not null) for a repository that is not a fork.
    expect(Object.keys(r.body)).not.toContain("fork_state");
    const got = await as(owner).get("/v1/orgs/rp/repos/alpha");
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  test("options: public, default_branch", async () => {
    const r = await create("rp", { name: "opts", public: true, default_branch: "trunk" });
    expect(r).toMatchObject({ public: true, default_branch: "trunk" });
  });

  test("homepage: only absolute http(s) URLs; blank folds to null", async () => {
    for (const homepage of [
      "example.com",
      "ftp://example.com",
      "www.example.com/path",
      "javascript:alert(1)",
      "mailto:a@example.com",
      "//example.com",
      "http://",
    ]) {
      const r = await as(owner).post("/v1/orgs/rp/repos", { name: `hp-bad-${crypto.randomUUID().slice(0, 8)}`, homepage });
      expect({ homepage, status: r.status }).toEqual({ homepage, status: 400 });
      expectError(r, 400);
    }
    expect((await create("rp", { name: "hp-empty", homepage: "" })).homepage).toBeNull();
    expect((await create("rp", { name: "hp-space", homepage: "   \t " })).homepage).toBeNull();
    expect((await create("rp", { name: "hp-null", homepage: null })).homepage).toBeNull();
    expect((await create("rp", { name: "hp-http", homepage: "http://example.org/x?y=1" })).homepage).toBe("http://example.org/x?y=1");
  });

  test("400 for a bad name", async () => {
    for (const name of [".", "..", "x.git", "X.GIT", "a".repeat(101), "sp ace", "sl/ash", "ümlaut", "semi;colon", "", "a?b"]) {
      const r = await as(owner).post("/v1/orgs/rp/repos", { name });
      expect({ name, status: r.status }).toEqual({ name, status: 400 });
      expectError(r, 400);
    }
    expectError(await as(owner).post("/v1/orgs/rp/repos", {}), 400);
    expectError(await as(owner).post("/v1/orgs/rp/repos", { name: 7 }), 400);
  });

  test("good names at the edges", async () => {
    for (const name of ["a".repeat(100), "A.b-c_d", "x.gitx", ".hidden", "_", "git"]) {
      expect((await create("rp", { name })).name).toBe(name);
    }
  });

  test("kind and origin_provider outside their enumerations are 422; a wrong type is 400", async () => {
    expectError(await as(owner).post("/v1/orgs/rp/repos", { name: "kinded", kind: "fork" }), 422);
    expectError(
      await as(owner).post("/v1/orgs/rp/repos", { name: "kinded", kind: "mirror", origin_url: "https://example.com/x.git", origin_provider: "ftp" }),
      422,
    );
    expectError(await as(owner).post("/v1/orgs/rp/repos", { name: "kinded", kind: 1 }), 400);
    expectError(await as(owner).post("/v1/orgs/rp/repos", { name: "kinded", kind: "mirror" }), 400);
    expectError(await as(owner).get("/v1/orgs/rp/repos/kinded"), 404);
  });

  test("409 when the name exists, case-insensitively", async () => {
    await create("rp", { name: "dupe" });
    expectError(await as(owner).post("/v1/orgs/rp/repos", { name: "dupe" }), 409);
    expectError(await as(member).post("/v1/orgs/rp/repos", { name: "DUPE" }), 409);
  });

  test("a member creates; a viewer gets 403; an outsider 404; anonymous 401", async () => {
    const r = await create("rp", { name: "by-member" }, member);
    expect(r).toMatchObject({ viewer_write: true, viewer_admin: false });
    expectError(await as(viewer).post("/v1/orgs/rp/repos", { name: "by-viewer" }), 403);
    expectError(await as(outsider).post("/v1/orgs/rp/repos", { name: "by-outsider" }), 404);
    expectError(await as(foreignToken).post("/v1/orgs/rp/repos", { name: "by-foreign" }), 404);
    expectError(await as().post("/v1/orgs/rp/repos", { name: "by-anon" }), 401);
    expectError(await as(owner).post("/v1/orgs/no-such-org/repos", { name: "x" }), 404);
  });

  test("a person's handle is a namespace for repositories", async () => {
    const r = await create(owner.handle, { name: "dotfiles" });
    expect(r.clone_url).toBe(`${server.url}/${owner.handle}/dotfiles.git`);
    expectError(await as(member).get(`/v1/orgs/${owner.handle}/repos/dotfiles`), 404);
  });
});

describe("reading and listing", () => {
  let org: string;
  beforeAll(async () => {
    // A dedicated org so the listing is exact.
    org = "listco";
    const boss = await person(server, org, "boss@listco.example", "owner");
    const [m, v] = await Promise.all([person(server, org, "m@listco.example", "member"), person(server, org, "v@listco.example", "viewer")]);
    Object.assign(listPeople, { boss, m, v });
    for (const [name, pub] of [
      ["p-one", false],
      ["p-two", false],
      ["pub-a", true],
      ["pub-b", true],
      ["p-three", false],
      ["Pub-C", true],
    ] as const) {
      await create(org, { name, public: pub }, boss);
    }
  }, 30_000);
  const listPeople: { boss?: User; m?: User; v?: User } = {};
  const ALL = ["p-one", "p-three", "p-two", "pub-a", "pub-b", "Pub-C"];
  const PUBLIC = ["pub-a", "pub-b", "Pub-C"];
  const names = (r: any) => r.body.repos.map((x: any) => x.name);

  test("members and viewers see everything; anonymous and outsiders only public repos", async () => {
    for (const who of [listPeople.boss!, listPeople.m!, listPeople.v!]) {
      const r = await as(who).get(`/v1/orgs/${org}/repos`);
      expect(r.status).toBe(200);
      expect(names(r).sort()).toEqual([...ALL].sort());
      expect(r.body.next_cursor).toBeNull();
    }
    for (const who of [undefined, outsider, foreignToken]) {
      const r = await as(who).get(`/v1/orgs/${org}/repos`);
      expect(r.status).toBe(200);
      expect(names(r).sort()).toEqual([...PUBLIC].sort());
      for (const repo of r.body.repos) expect(repo).toMatchObject({ public: true, viewer_admin: false, viewer_write: false });
    }
  });

  test("list items are whole Repo records", async () => {
    const list = await as(listPeople.boss!).get(`/v1/orgs/${org}/repos`);
    const one = list.body.repos.find((r: any) => r.name === "p-one");
    const got = await as(listPeople.boss!).get(`/v1/orgs/${org}/repos/p-one`);
    expect(one).toEqual(got.body);
  });

  test("pagination with limit, cursor and next_cursor visits each visible repo once", async () => {
    for (const [who, expected] of [
      [listPeople.v!, ALL],
      [undefined, PUBLIC],
    ] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const r = await as(who).get(`/v1/orgs/${org}/repos${q}`);
        expect(r.status).toBe(200);
        expect(r.body.repos.length).toBeLessThanOrEqual(2);
        seen.push(...names(r));
        cursor = r.body.next_cursor;
        pages++;
        expect(pages).toBeLessThan(10);
      } while (cursor !== null);
      expect(seen.sort()).toEqual([...expected].sort());
      expect(new Set(seen).size).toBe(seen.length);
      expect(pages).toBe(Math.ceil(expected.length / 2));
    }
  });

  test("a limit outside 1–100 is a 400", async () => {
    for (const limit of ["0", "101", "-1", "abc", "2.5"]) expectError(await as(listPeople.boss!).get(`/v1/orgs/${org}/repos?limit=${limit}`), 400);
    expect((await as(listPeople.boss!).get(`/v1/orgs/${org}/repos?limit=100`)).status).toBe(200);
  });

  test("unknown org: 404", async () => {
    expectError(await as(owner).get("/v1/orgs/no-such-org/repos"), 404);
  });

  test("a private repo: 200 for members, 404 for outsiders and foreign tokens, 401 anonymous", async () => {
    const r = await as(listPeople.v!).get(`/v1/orgs/${org}/repos/p-one`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: "p-one", viewer_admin: false, viewer_write: false });
    expect((await as(listPeople.m!).get(`/v1/orgs/${org}/repos/p-one`)).body).toMatchObject({ viewer_admin: false, viewer_write: true });
    expect((await as(listPeople.boss!).get(`/v1/orgs/${org}/repos/P-ONE`)).body).toMatchObject({ name: "p-one", viewer_admin: true, viewer_write: true });
    expectError(await as(outsider).get(`/v1/orgs/${org}/repos/p-one`), 404);
    expectError(await as(foreignToken).get(`/v1/orgs/${org}/repos/p-one`), 404);
    expectError(await as().get(`/v1/orgs/${org}/repos/p-one`), 401);
  });

  test("a missing repo looks like a private one: 404 with credentials, 401 without", async () => {
    const missing = await as(outsider).get(`/v1/orgs/${org}/repos/nope`);
    const hidden = await as(outsider).get(`/v1/orgs/${org}/repos/p-one`);
    expectError(missing, 404);
    expect(missing.body).toEqual(hidden.body);
    expectError(await as().get(`/v1/orgs/${org}/repos/nope`), 401);
  });

  test("a public repo: readable anonymously and by any credential, with no write or admin", async () => {
    for (const who of [undefined, outsider, foreignToken]) {
      const r = await as(who).get(`/v1/orgs/${org}/repos/pub-a`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ name: "pub-a", public: true, viewer_admin: false, viewer_write: false, write_blocked: null });
    }
    expect((await as(listPeople.v!).get(`/v1/orgs/${org}/repos/pub-a`)).body).toMatchObject({ viewer_admin: false, viewer_write: false });
  });
});

describe("PATCH /v1/orgs/{org}/repos/{repo}", () => {
  test("rename: the old name is gone, clone_url follows", async () => {
    const before = await create("rp", { name: "old-name" });
    const r = await as(owner).patch("/v1/orgs/rp/repos/old-name", { name: "new-name" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: before.id, name: "new-name", clone_url: `${server.url}/rp/new-name.git` });
    expectError(await as(owner).get("/v1/orgs/rp/repos/old-name"), 404);
    expect((await as(owner).get("/v1/orgs/rp/repos/new-name")).body.id).toBe(before.id);
    // Case-only rename of itself is allowed.
    expect((await as(owner).patch("/v1/orgs/rp/repos/new-name", { name: "New-Name" })).body.name).toBe("New-Name");
  });

  test("rename onto an existing name: 409; to a bad name: 400", async () => {
    await create("rp", { name: "keep-a" });
    await create("rp", { name: "keep-b" });
    expectError(await as(owner).patch("/v1/orgs/rp/repos/keep-a", { name: "KEEP-B" }), 409);
    expectError(await as(owner).patch("/v1/orgs/rp/repos/keep-a", { name: "keep-b.git" }), 400);
    expectError(await as(owner).patch("/v1/orgs/rp/repos/keep-a", { name: ".." }), 400);
  });

  test("visibility flips what outsiders see", async () => {
    await create("rp", { name: "flip" });
    expectError(await as(outsider).get("/v1/orgs/rp/repos/flip"), 404);
    const r = await as(owner).patch("/v1/orgs/rp/repos/flip", { public: true });
    expect(r.body.public).toBe(true);
    expect((await as(outsider).get("/v1/orgs/rp/repos/flip")).status).toBe(200);
    expect((await as().get("/v1/orgs/rp/repos/flip")).status).toBe(200);
    await as(owner).patch("/v1/orgs/rp/repos/flip", { public: false });
    expectError(await as().get("/v1/orgs/rp/repos/flip"), 401);
    expectError(await as(owner).patch("/v1/orgs/rp/repos/flip", { public: "yes" }), 400);
  });

  test("default_branch must be a valid branch name", async () => {
    await create("rp", { name: "branchy" });
    expect((await as(owner).patch("/v1/orgs/rp/repos/branchy", { default_branch: "release/2.0" })).body.default_branch).toBe("release/2.0");
    for (const bad of ["", "bad..name", "has space", "ends.lock", "trailing/", "a~b", "a^b", "a:b", "a@{b", "x\\y"]) {
      const r = await as(owner).patch("/v1/orgs/rp/repos/branchy", { default_branch: bad });
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
    expectError(await as(owner).post("/v1/orgs/rp/repos", { name: "bad-default", default_branch: "a..b" }), 400);
    expect((await as(owner).get("/v1/orgs/rp/repos/branchy")).body.default_branch).toBe("release/2.0");
  });

  test("description and homepage: blank and null fold to null; bad homepage 400", async () => {
    await create("rp", { name: "described", description: "d", homepage: "https://example.com" });
    const cleared = await as(owner).patch("/v1/orgs/rp/repos/described", { description: "", homepage: "  " });
    expect(cleared.body).toMatchObject({ description: null, homepage: null });
    const set = await as(owner).patch("/v1/orgs/rp/repos/described", { description: "again", homepage: "http://example.net" });
    expect(set.body).toMatchObject({ description: "again", homepage: "http://example.net" });
    const nulled = await as(owner).patch("/v1/orgs/rp/repos/described", { description: null, homepage: null });
    expect(nulled.body).toMatchObject({ description: null, homepage: null });
    expectError(await as(owner).patch("/v1/orgs/rp/repos/described", { homepage: "example.com" }), 400);
    expectError(await as(owner).patch("/v1/orgs/rp/repos/described", { homepage: "ftp://example.com" }), 400);
    // An empty patch changes nothing.
    const same = await as(owner).patch("/v1/orgs/rp/repos/described", {});
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ description: null, homepage: null });
  });

  test("a description holds up to 2,000 characters; 2,001 are 400 on create and on patch", async () => {
    const longest = "d".repeat(2000);
    expect((await create("rp", { name: "wordy", description: longest })).description).toBe(longest);
    expectError(await as(owner).post("/v1/orgs/rp/repos", { name: "wordier", description: `${longest}d` }), 400);
    expectError(await as(owner).patch("/v1/orgs/rp/repos/wordy", { description: `${longest}d` }), 400);
    expect((await as(owner).get("/v1/orgs/rp/repos/wordy")).body.description).toBe(longest);
    expectError(await as(owner).get("/v1/orgs/rp/repos/wordier"), 404);
  });

  test("fields of the wrong type are 400 and change nothing", async () => {
    await create("rp", { name: "typed", description: "orig" });
    for (const body of [{ name: 7 }, { public: 1 }, { default_branch: null }, { description: 5 }, { homepage: false }]) {
      const r = await as(owner).patch("/v1/orgs/rp/repos/typed", body);
      expect({ body, status: r.status, error: typeof r.body?.error }).toEqual({ body, status: 400, error: "string" });
    }
    expect((await as(owner).get("/v1/orgs/rp/repos/typed")).body).toMatchObject({ name: "typed", public: false, description: "orig", default_branch: "main" });
  });

  test("needs admin: 403 for a member or viewer, 404 for an outsider, 401 anonymous", async () => {
    await create("rp", { name: "guarded", description: "orig" });
    expectError(await as(member).patch("/v1/orgs/rp/repos/guarded", { description: "member" }), 403);
    expectError(await as(viewer).patch("/v1/orgs/rp/repos/guarded", { description: "viewer" }), 403);
    expectError(await as(outsider).patch("/v1/orgs/rp/repos/guarded", { description: "outsider" }), 404);
    expectError(await as(foreignToken).patch("/v1/orgs/rp/repos/guarded", { description: "foreign" }), 404);
    expectError(await as().patch("/v1/orgs/rp/repos/guarded", { description: "anon" }), 401);
    expect((await as(owner).get("/v1/orgs/rp/repos/guarded")).body.description).toBe("orig");
  });
});

describe("DELETE /v1/orgs/{org}/repos/{repo}", () => {
  test("204, then 404; the name is free again", async () => {
    const first = await create("rp", { name: "doomed" });
    expectError(await as(member).delete("/v1/orgs/rp/repos/doomed"), 403);
    expectError(await as(viewer).delete("/v1/orgs/rp/repos/doomed"), 403);
    expectError(await as(outsider).delete("/v1/orgs/rp/repos/doomed"), 404);
    expectError(await as().delete("/v1/orgs/rp/repos/doomed"), 401);
    const r = await as(owner).delete("/v1/orgs/rp/repos/doomed");
    expect(r.status).toBe(204);
    expectError(await as(owner).get("/v1/orgs/rp/repos/doomed"), 404);
    expectError(await as(owner).delete("/v1/orgs/rp/repos/doomed"), 404);
    const list = await as(owner).get("/v1/orgs/rp/repos?limit=100");
    expect(list.body.repos.map((x: any) => x.id)).not.toContain(first.id);
    const again = await create("rp", { name: "doomed" });
    expect(again.id).not.toBe(first.id);
  });
});
