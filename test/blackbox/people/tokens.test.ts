// API tokens: mint, list, revoke, scopes and repo binding (SPEC §4.6, §5, §5.1, §5.3, §5.5;
// DECISIONS §2).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError, person, type Person as User } from "../../helpers/api.ts";

const TOKEN_RE = /^svc_[a-z2-7]{16}_[a-z2-7]{32}$/;

let server: RunningServer;
/** tok: owner, admin, member, viewer (repos priv, other, pub); rival: its owner (repos rpriv, rpub). */
let owner: User, admin: User, member: User, viewer: User, rival: User;

/** A same-site browser caller (cookie plus our Origin), or a bearer caller. */
const as = (who?: User | string) => caller(server, who);

/** Mints and asserts 201; returns the whole body. */
async function mint(who: User | string, body: Record<string, unknown>, org = "tok") {
  const r = await as(who).post(`/v1/orgs/${org}/tokens`, body);
  expect({ status: r.status, body: r.status === 201 ? "ok" : r.body }).toEqual({ status: 201, body: "ok" });
  return r.body;
}

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "tok", "olive@example.com", "owner");
  [admin, member, viewer, rival] = await Promise.all([
    person(server, "tok", "adrian@example.com", "admin"),
    person(server, "tok", "mia@example.com", "member"),
    person(server, "tok", "vera@example.com", "viewer"),
    person(server, "rival", "rita@example.com", "owner"),
  ]);
  for (const [org, who, name, pub] of [
    ["tok", owner, "priv", false],
    ["tok", owner, "other", false],
    ["tok", owner, "pub", true],
    ["rival", rival, "rpriv", false],
    ["rival", rival, "rpub", true],
  ] as const) {
    const r = await as(who).post(`/v1/orgs/${org}/repos`, { name, public: pub });
    expect(r.status).toBe(201);
  }
}, 30_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

describe("minting", () => {
  test("a person's token: 201 with the DECISIONS §2 body; the secret matches svc_<id>_<secret>", async () => {
    const r = await as(member).post("/v1/orgs/tok/tokens", { scopes: ["repo:read"], label: "laptop" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(TOKEN_RE),
      kind: "personal",
      scopes: ["repo:read"],
      label: "laptop",
      repo: null,
      created_at: expect.any(Number),
      last_used_at: null,
    });
    expect(r.body.token.split("_")[1]).toBe(r.body.id);
    // Shown once: the listing has the same record without the secret.
    const list = await as(member).get("/v1/orgs/tok/tokens");
    expect(list.status).toBe(200);
    const { token, ...rest } = r.body;
    expect(list.body.tokens).toContainEqual(rest);
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(JSON.stringify(list.body)).not.toContain(token.split("_")[2]);
    for (const t of list.body.tokens) expect(Object.keys(t).sort()).toEqual(["created_at", "id", "kind", "label", "last_used_at", "repo", "scopes"]);
  });

  test("kind defaults to personal for a person; service needs org:admin", async () => {
    const svc = await mint(owner, { kind: "service", scopes: ["repo:write"], label: "deploy" });
    expect(svc).toMatchObject({ kind: "service", scopes: ["repo:write"], label: "deploy", repo: null });
    expect(svc.token).toMatch(TOKEN_RE);
    expect((await mint(admin, { kind: "service", scopes: ["repo:read"], label: "ci" })).kind).toBe("service");
    expectError(await as(member).post("/v1/orgs/tok/tokens", { kind: "service", scopes: ["repo:read"], label: "nope" }), 403);
    expectError(await as(viewer).post("/v1/orgs/tok/tokens", { kind: "service", scopes: ["repo:read"], label: "nope" }), 403);
  });

  test("a service token mints service tokens by default", async () => {
    const parent = await mint(owner, { kind: "service", scopes: ["org:admin"], label: "parent" });
    const child = await mint(parent.token, { scopes: ["repo:read"], label: "child" });
    expect(child.kind).toBe("service");
  });

  test("scopes are checked against what the person can do in the org (SPEC §5.3.2)", async () => {
    expectError(await as(viewer).post("/v1/orgs/tok/tokens", { scopes: ["repo:write"], label: "x" }), 403);
    expectError(await as(viewer).post("/v1/orgs/tok/tokens", { scopes: ["repo:read", "repo:write"], label: "x" }), 403);
    expectError(await as(member).post("/v1/orgs/tok/tokens", { scopes: ["org:admin"], label: "x" }), 403);
    expect((await mint(viewer, { scopes: ["repo:read"], label: "read" })).scopes).toEqual(["repo:read"]);
    expect((await mint(member, { scopes: ["repo:write", "org:read"], label: "rw" })).scopes.sort()).toEqual(["org:read", "repo:write"]);
    expect((await mint(admin, { scopes: ["org:admin"], label: "adm" })).scopes).toEqual(["org:admin"]);
  });

  test("422 for an unknown scope, 400 for empty or missing scopes or label", async () => {
    expectError(await as(owner).post("/v1/orgs/tok/tokens", { scopes: ["repo:delete"], label: "x" }), 422);
    expectError(await as(owner).post("/v1/orgs/tok/tokens", { scopes: ["repo:read", "everything"], label: "x" }), 422);
    expectError(await as(owner).post("/v1/orgs/tok/tokens", { scopes: [], label: "x" }), 400);
    expectError(await as(owner).post("/v1/orgs/tok/tokens", { label: "x" }), 400);
    expectError(await as(owner).post("/v1/orgs/tok/tokens", { scopes: "repo:read", label: "x" }), 400);
    expectError(await as(owner).post("/v1/orgs/tok/tokens", { scopes: ["repo:read"] }), 400);
  });

  test("401 anonymous; 404 for an outsider or an unknown org", async () => {
    expectError(await as().post("/v1/orgs/tok/tokens", { scopes: ["repo:read"], label: "x" }), 401);
    expectError(await as(rival).post("/v1/orgs/tok/tokens", { scopes: ["repo:read"], label: "x" }), 404);
    expectError(await as(owner).post("/v1/orgs/no-such-org/tokens", { scopes: ["repo:read"], label: "x" }), 404);
  });

  test("only a hash is stored: the secret appears nowhere in the database files", async () => {
    const marker = `marker-${crypto.randomUUID()}`;
    const t = await mint(owner, { kind: "service", scopes: ["repo:read"], label: marker });
    // Use it once so last_used_at is written too.
    expect((await as(t.token).get("/v1/orgs/tok/repos/priv")).status).toBe(200);
    const files = readdirSync(server.dataDir).filter((f) => /^svc\.db(-wal)?$/.test(f));
    expect(files).toContain("svc.db");
    const bytes = Buffer.concat(files.map((f) => readFileSync(join(server.dataDir, f))));
    // The search works: the label was written to the same files.
    expect(bytes.includes(Buffer.from(marker))).toBe(true);
    const secret = t.token.split("_")[2]!;
    expect(bytes.includes(Buffer.from(secret))).toBe(false);
    expect(bytes.includes(Buffer.from(t.token))).toBe(false);
  });
});

describe("using tokens", () => {
  test("immediate revocation: DELETE, then the very next request is 401", async () => {
    const t = await mint(member, { scopes: ["repo:read"], label: "short-lived" });
    expect((await as(t.token).get("/v1/orgs/tok/repos/priv")).status).toBe(200);
    expect((await as(member).delete(`/v1/orgs/tok/tokens/${t.id}`)).status).toBe(204);
    expectError(await as(t.token).get("/v1/orgs/tok/repos/priv"), 401);
    expectError(await as(t.token).get("/v1/orgs/tok/repos/pub"), 401);
    const list = await as(member).get("/v1/orgs/tok/tokens");
    expect(list.body.tokens.map((x: any) => x.id)).not.toContain(t.id);
  });

  test("a token can revoke itself", async () => {
    const t = await mint(owner, { kind: "service", scopes: ["org:admin"], label: "self-revoke" });
    expect((await as(t.token).delete(`/v1/orgs/tok/tokens/${t.id}`)).status).toBe(204);
    expectError(await as(t.token).get("/v1/orgs/tok/tokens"), 401);
  });

  test("last_used_at is set after use", async () => {
    const t = await mint(member, { scopes: ["repo:read"], label: "used" });
    const before = await as(member).get("/v1/orgs/tok/tokens");
    expect(before.body.tokens.find((x: any) => x.id === t.id).last_used_at).toBeNull();
    expect((await as(t.token).get("/v1/orgs/tok/repos/priv")).status).toBe(200);
    const after = await as(member).get("/v1/orgs/tok/tokens");
    const used = after.body.tokens.find((x: any) => x.id === t.id).last_used_at;
    expect(typeof used).toBe("number");
    expect(used).toBeGreaterThanOrEqual(t.created_at);
  });

  test("a personal token's authority is its scopes ∩ the person's role", async () => {
    const read = await mint(member, { scopes: ["repo:read"], label: "ro" });
    expect((await as(read.token).get("/v1/orgs/tok/repos/priv")).status).toBe(200);
    expect((await as(read.token).get("/v1/orgs/tok/repos/priv")).body).toMatchObject({ viewer_write: false, viewer_admin: false });
    expectError(await as(read.token).post("/v1/orgs/tok/repos", { name: "by-ro-token" }), 403);
    const write = await mint(member, { scopes: ["repo:write"], label: "rw" });
    expect((await as(write.token).get("/v1/orgs/tok/repos/priv")).body).toMatchObject({ viewer_write: true, viewer_admin: false });
    expect((await as(write.token).post("/v1/orgs/tok/repos", { name: "by-rw-token" })).status).toBe(201);
    // The member's role caps even a write token: administering needs admin.
    expectError(await as(write.token).patch("/v1/orgs/tok/repos/priv", { description: "x" }), 403);
    // A viewer's read token reads private repos of the org.
    const vread = await mint(viewer, { scopes: ["repo:read"], label: "vr" });
    expect((await as(vread.token).get("/v1/orgs/tok/repos/other")).status).toBe(200);
  });

  test("a personal token loses authority with its person's role", async () => {
    const temp = await person(server, "tok", "temp@example.com", "member");
    const t = await mint(temp, { scopes: ["repo:read"], label: "temp" });
    expect((await as(t.token).get("/v1/orgs/tok/repos/priv")).status).toBe(200);
    expect((await as(owner).delete(`/v1/orgs/tok/members/${temp.id}`)).status).toBe(204);
    expectError(await as(t.token).get("/v1/orgs/tok/repos/priv"), 404);
    // Public repositories remain readable by any valid credential.
    expect((await as(t.token).get("/v1/orgs/tok/repos/pub")).status).toBe(200);
  }, 20_000);

  test("repo-bound service token: its repo per scopes; 404 on other repos; 403 at org level", async () => {
    const ro = await mint(owner, { kind: "service", scopes: ["repo:read"], label: "bound-ro", repo: "priv" });
    expect(ro.repo).toBe("priv");
    expect((await as(ro.token).get("/v1/orgs/tok/repos/priv")).status).toBe(200);
    expectError(await as(ro.token).patch("/v1/orgs/tok/repos/priv", { description: "no" }), 403);
    expectError(await as(ro.token).get("/v1/orgs/tok/repos/other"), 404);
    expectError(await as(ro.token).get("/v1/orgs/tok/members"), 403);
    expectError(await as(ro.token).get("/v1/orgs/tok/tokens"), 403);

    const adm = await mint(owner, { kind: "service", scopes: ["org:admin"], label: "bound-admin", repo: "PRIV" });
    expect(adm.repo).toBe("priv");
    const patched = await as(adm.token).patch("/v1/orgs/tok/repos/priv", { description: "patched by a bound token" });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe("patched by a bound token");
    expectError(await as(adm.token).get("/v1/orgs/tok/repos/other"), 404);
    expectError(await as(adm.token).patch("/v1/orgs/tok/repos/other", { description: "no" }), 404);
    expectError(await as(adm.token).get("/v1/orgs/tok/members"), 403);
    expectError(await as(adm.token).get("/v1/orgs/tok/tokens"), 403);
    expectError(await as(adm.token).post("/v1/orgs/tok/tokens", { scopes: ["repo:read"], label: "escape" }), 403);
    expectError(await as(adm.token).post("/v1/orgs/tok/repos", { name: "escape" }), 403);
    const billing = await as(adm.token).get("/v1/orgs/tok/billing");
    expect([403, 404]).toContain(billing.status);
    expectError(billing, billing.status);
    // Its listing shows only what it may see: its repo and public ones.
    const list = await as(adm.token).get("/v1/orgs/tok/repos");
    expect(list.status).toBe(200);
    const names = list.body.repos.map((r: any) => r.name);
    expect(names).toContain("priv");
    expect(names).not.toContain("other");
  });

  test("a bound token's repo must exist in the org", async () => {
    const r = await as(owner).post("/v1/orgs/tok/tokens", { kind: "service", scopes: ["repo:read"], label: "x", repo: "rpriv" });
    expect([404, 422]).toContain(r.status);
    expectError(r, r.status);
  });

  test("another org's token: 404 on a private repo, reads a public one as an outsider", async () => {
    const theirs = await mint(rival, { kind: "service", scopes: ["org:admin"], label: "rival-admin" }, "rival");
    const personal = await mint(rival, { scopes: ["repo:write"], label: "rival-personal" }, "rival");
    for (const token of [theirs.token, personal.token]) {
      expectError(await as(token).get("/v1/orgs/tok/repos/priv"), 404);
      const pub = await as(token).get("/v1/orgs/tok/repos/pub");
      expect(pub.status).toBe(200);
      expect(pub.body).toMatchObject({ name: "pub", public: true, viewer_admin: false, viewer_write: false });
      expectError(await as(token).patch("/v1/orgs/tok/repos/pub", { description: "no" }), 403);
      expectError(await as(token).get("/v1/orgs/tok/members"), 404);
    }
    // And in their own org the tokens work.
    expect((await as(theirs.token).get("/v1/orgs/rival/repos/rpriv")).status).toBe(200);
  });
});

describe("listing and revoking", () => {
  test("a member sees only their own tokens; an admin sees all", async () => {
    const mine = await mint(member, { scopes: ["repo:read"], label: "mine" });
    const svc = await mint(owner, { kind: "service", scopes: ["repo:read"], label: "org-wide" });
    const vtok = await mint(viewer, { scopes: ["repo:read"], label: "viewers" });
    const asMember = await as(member).get("/v1/orgs/tok/tokens");
    const memberIds = asMember.body.tokens.map((t: any) => t.id);
    expect(memberIds).toContain(mine.id);
    expect(memberIds).not.toContain(svc.id);
    expect(memberIds).not.toContain(vtok.id);
    for (const t of asMember.body.tokens) expect(t.kind).toBe("personal");
    for (const who of [owner, admin]) {
      const ids = (await as(who).get("/v1/orgs/tok/tokens")).body.tokens.map((t: any) => t.id);
      expect(ids).toEqual(expect.arrayContaining([mine.id, svc.id, vtok.id]));
    }
  });

  test("listing: 401 anonymous, 404 outsider", async () => {
    expectError(await as().get("/v1/orgs/tok/tokens"), 401);
    expectError(await as(rival).get("/v1/orgs/tok/tokens"), 404);
  });

  test("someone else's token id answers 404, not 403; an admin revokes anyone's", async () => {
    const mine = await mint(member, { scopes: ["repo:read"], label: "target" });
    const svc = await mint(owner, { kind: "service", scopes: ["repo:read"], label: "svc-target" });
    expectError(await as(viewer).delete(`/v1/orgs/tok/tokens/${mine.id}`), 404);
    expectError(await as(member).delete(`/v1/orgs/tok/tokens/${svc.id}`), 404);
    expectError(await as(member).delete("/v1/orgs/tok/tokens/aaaaaaaaaaaaaaaa"), 404);
    expectError(await as(rival).delete(`/v1/orgs/tok/tokens/${mine.id}`), 404);
    // A token of another org is not addressable through this org.
    const theirs = await mint(rival, { scopes: ["repo:read"], label: "theirs" }, "rival");
    expectError(await as(owner).delete(`/v1/orgs/tok/tokens/${theirs.id}`), 404);
    expect((await as(theirs.token).get("/v1/orgs/rival/repos/rpriv")).status).toBe(200);
    // Still alive after the refused attempts.
    expect((await as(mine.token).get("/v1/orgs/tok/repos/priv")).status).toBe(200);
    expect((await as(admin).delete(`/v1/orgs/tok/tokens/${mine.id}`)).status).toBe(204);
    expectError(await as(mine.token).get("/v1/orgs/tok/repos/priv"), 401);
    expect((await as(admin).delete(`/v1/orgs/tok/tokens/${svc.id}`)).status).toBe(204);
    expectError(await as(admin).delete(`/v1/orgs/tok/tokens/${svc.id}`), 404);
  });
});

describe("last_used_at", () => {
  test("stamps waiting for their batch are written at shutdown and survive a restart", async () => {
    await using first = await startServer();
    const owner = await person(first, "stamps", "stamp@example.com", "owner");
    const mintOne = async (label: string) => (await caller(first, owner).post("/v1/orgs/stamps/tokens", { scopes: ["org:read"], label })).body;
    const [a, b] = [await mintOne("a"), await mintOne("b")];
    expect((await caller(first, a.token).get("/v1/orgs/stamps/members")).status).toBe(200);
    expect((await caller(first, b.token).get("/v1/orgs/stamps/members")).status).toBe(200);
    // No listing in between (a listing writes waiting stamps first): the shutdown must write them.
    expect(await first.stop()).toBe(0);
    await using second = await startServer({ dataDir: first.dataDir });
    const list = await caller(second, owner).get("/v1/orgs/stamps/tokens");
    for (const t of [a, b]) expect(typeof list.body.tokens.find((x: any) => x.id === t.id).last_used_at).toBe("number");
    // Two servers start and stop here: more than the default 5 s on a loaded machine.
  }, 30_000);
});

describe("paging the token list (DECISIONS §1)", () => {
  /** Every page of `path` as `who` at `limit` a page: the ids in order, and how many pages it took. */
  async function allPages(who: User, path: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let pages = 1; ; pages++) {
      const r = await as(who).get(`${path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.tokens.length).toBeLessThanOrEqual(limit);
      ids.push(...r.body.tokens.map((t: any) => t.id));
      cursor = r.body.next_cursor;
      if (cursor === null) return { ids, pages };
      expect(pages).toBeLessThan(50);
    }
  }

  test("limit and cursor walk every token once, by creation; a member's pages hold only their own", async () => {
    const pager = await person(server, "pages", "paige@example.com", "owner");
    const pagee = await person(server, "pages", "penn@example.com", "member");
    const minted: string[] = [];
    for (let i = 0; i < 5; i++) minted.push((await mint(pager, { scopes: ["repo:read"], label: `p${i}` }, "pages")).id);
    const theirs = [
      (await mint(pagee, { scopes: ["repo:read"], label: "m0" }, "pages")).id,
      (await mint(pagee, { scopes: ["repo:read"], label: "m1" }, "pages")).id,
    ];

    const first = await as(pager).get("/v1/orgs/pages/tokens");
    expect(first.status).toBe(200);
    expect(first.body.next_cursor).toBeNull();
    const everything = first.body.tokens.map((t: any) => t.id);
    expect(everything).toEqual([...minted, ...theirs]);

    expect(await allPages(pager, "/v1/orgs/pages/tokens", 2)).toEqual({ ids: everything, pages: 4 });
    expect(await allPages(pager, "/v1/orgs/pages/tokens", 7)).toEqual({ ids: everything, pages: 1 });
    expect(await allPages(pager, "/v1/orgs/pages/tokens", 1)).toEqual({ ids: everything, pages: 7 });
    expect(await allPages(pagee, "/v1/orgs/pages/tokens", 1)).toEqual({ ids: theirs, pages: 2 });

    // A token revoked between pages does not disturb the walk.
    const page1 = await as(pager).get("/v1/orgs/pages/tokens?limit=3");
    expect((await as(pager).delete(`/v1/orgs/pages/tokens/${minted[3]}`)).status).toBe(204);
    const page2 = await as(pager).get(`/v1/orgs/pages/tokens?limit=3&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
    expect([...page1.body.tokens, ...page2.body.tokens].map((t: any) => t.id)).toEqual(everything.filter((id: string) => id !== minted[3]));
    expect(page2.body.next_cursor).toBeNull();
  }, 30_000);

  test("400 for a limit outside 1-100 or a cursor this list did not make", async () => {
    const who = await person(server, "pages-bad", "pat@example.com", "owner");
    for (const q of [
      "limit=0",
      "limit=101",
      "limit=x",
      "limit=2.5",
      "cursor=garbage",
      `cursor=${Buffer.from(JSON.stringify("a-name")).toString("base64url")}`,
      `cursor=${Buffer.from("[1,2]").toString("base64url")}`,
    ]) {
      const r = await as(who).get(`/v1/orgs/pages-bad/tokens?${q}`);
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
      expectError(r, 400);
    }
    expect((await as(who).get("/v1/orgs/pages-bad/tokens?limit=100")).status).toBe(200);
  }, 30_000);
});
