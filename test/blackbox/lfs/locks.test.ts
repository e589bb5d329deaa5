// The Git LFS File Locking API (issue 31; git-lfs docs/api/locking.md) against a real server:
// the real `git lfs lock / locks / unlock` client, then the API's shapes and errors with plain
// fetches: who may list (readers), lock, verify and unlock (writers), force-unlock (admins only),
// masked 404 for outsiders, 401 with a Basic challenge for anonymous callers, bounded input,
// and the audit events.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { basicAuth, commitFiles, createRepo, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { client, createUser, login, startServer, type RunningServer } from "../../helpers/server.ts";

setDefaultTimeout(60_000);

const LFS = "application/vnd.git-lfs+json";

let server: RunningServer;
let g: GitSandbox;

/** A person of an org with a repo:write (or repo:read) token. */
interface Member {
  handle: string;
  cookie: string;
  token: string;
}

let owner: Member, alice: Member, bob: Member, reader: Member, outsider: Member;
let serviceToken: string;

async function member(org: string, email: string, role: string): Promise<Member> {
  const u = await createUser(server, { org, email, role });
  const cookie = await login(server, u.email, u.password);
  const { token } = await mintTokenWithId(server, cookie, org, { scopes: [role === "viewer" ? "repo:read" : "repo:write"], label: `lfs-${email}` });
  return { handle: u.handle, cookie, token };
}

/** An LFS API call as git-lfs makes it: the spec's media type, Basic auth with the token (if any). */
async function lfs(method: string, path: string, who: Member | string | null, body?: unknown, headers: Record<string, string> = {}) {
  const token = who === null ? null : typeof who === "string" ? who : who.token;
  const h: Record<string, string> = { accept: LFS, ...headers };
  if (token) h.authorization = basicAuth(token);
  if (body !== undefined) h["content-type"] ??= LFS;
  const res = await fetch(`${server.url}/studio/${path}`, {
    method,
    headers: h,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, type: res.headers.get("content-type"), challenge: res.headers.get("www-authenticate") };
}

/** The spec's error body: `{ message }` only, with the status and the media type. */
function expectLfsError(r: { status: number; body: any; type: string | null }, status: number, message?: RegExp) {
  expect({ status: r.status, type: r.type, keys: r.body && typeof r.body === "object" ? Object.keys(r.body) : r.body }).toEqual({
    status,
    type: LFS,
    keys: ["message"],
  });
  if (message) expect(r.body.message).toMatch(message);
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-lfs-locks-");
  owner = await member("studio", "olga@example.com", "owner");
  [alice, bob, reader] = await Promise.all([
    member("studio", "alice@example.com", "member"),
    member("studio", "bob@example.com", "member"),
    member("studio", "rita@example.com", "viewer"),
  ]);
  outsider = await member("elsewhere", "oscar@example.com", "owner");
  serviceToken = (await mintTokenWithId(server, owner.cookie, "studio", { scopes: ["repo:write"], label: "ci", kind: "service" })).token;
  const ownerOrg = { org: "studio", email: "", cookie: owner.cookie, token: owner.token };
  await createRepo(server, ownerOrg, "game");
  await createRepo(server, ownerOrg, "site", true);
  // Something to clone for the client (git lfs works inside a clone of the remote).
  const work = await initRepo(g);
  await commitFiles(g, work, { "art/hero.psd": "hero v1\n", "art/villain.psd": "villain v1\n", "README.md": "game\n" });
  await g.ok(["push", "-q", repoUrl(server, "studio", "game", owner.token), "HEAD:refs/heads/main"], { cwd: work });
});

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("the git lfs client", () => {
  /** A clone of studio/game whose remote carries `who`'s token (git-lfs reads it from the URL). */
  async function cloneAs(who: Member): Promise<string> {
    const dir = g.path(`clone-${who.handle}`);
    await g.ok(["clone", "-q", repoUrl(server, "studio", "game", who.token), dir]);
    return dir;
  }

  test("lock, list, refuse a second lock, unlock: only the owner or an admin with --force", async () => {
    const [a, b, o] = await Promise.all([cloneAs(alice), cloneAs(bob), cloneAs(owner)]);
    const locked = await g.run(["lfs", "lock", "art/hero.psd"], { cwd: a });
    expect({ code: locked.code, out: locked.stdout + locked.stderr }).toEqual({ code: 0, out: expect.stringContaining("Locked art/hero.psd") });

    const listed = await g.ok(["lfs", "locks"], { cwd: b });
    expect(listed).toMatch(new RegExp(`^art/hero\\.psd\\s+${alice.handle}\\s+ID:\\S+$`, "m"));
    const id = /ID:(\S+)/.exec(listed)![1]!;

    const again = await g.run(["lfs", "lock", "art/hero.psd"], { cwd: b });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already locked|exists/i);

    // Bob may not unlock Alice's lock, with or without --force (he is no admin).
    const plain = await g.run(["lfs", "unlock", "art/hero.psd"], { cwd: b });
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toContain(`locked by ${alice.handle}`);
    const forced = await g.run(["lfs", "unlock", "--force", "art/hero.psd"], { cwd: b });
    expect(forced.code).not.toBe(0);
    expect(forced.stderr).toContain("needs the admin role");
    expect(await g.ok(["lfs", "locks", "--id", id], { cwd: b })).toContain("art/hero.psd");

    // The owner (an admin) forces it; then Alice's own lock-and-unlock round trip works.
    const admin = await g.run(["lfs", "unlock", "--force", "art/hero.psd"], { cwd: o });
    expect({ code: admin.code, err: admin.stderr }).toEqual({ code: 0, err: expect.any(String) });
    expect(await g.ok(["lfs", "locks"], { cwd: b })).not.toContain("art/hero.psd");
    await g.ok(["lfs", "lock", "art/villain.psd"], { cwd: a });
    const own = await g.run(["lfs", "unlock", "art/villain.psd"], { cwd: a });
    expect(own.code).toBe(0);
    expect(await g.ok(["lfs", "locks"], { cwd: a })).toBe("");
  });

  test("with the git-lfs pre-push hook: the client lists the locked file from verify, and the server refuses the push", async () => {
    const [a, b] = await Promise.all([cloneAs(alice), cloneAs(bob)]);
    await g.ok(["lfs", "install", "--local"], { cwd: b });
    await g.ok(["lfs", "lock", "README.md"], { cwd: a });
    const tip = await commitFiles(g, b, { "README.md": "bob's readme\n" });
    const r = await g.run(["push", "origin", "HEAD:main"], { cwd: b });
    expect(r.code).not.toBe(0);
    // git-lfs (without lfs.locksverify set) warns from /locks/verify and goes on; svc refuses.
    expect(r.stdout).toContain(`* README.md - ${alice.handle}`);
    expect(r.stderr).toMatch(new RegExp(`\\[remote rejected\\] HEAD -> main \\(README\\.md is locked by ${alice.handle} \\(LFS lock \\S+\\)`));
    expect(await g.ok(["ls-remote", "origin", "refs/heads/main"], { cwd: b })).not.toContain(tip);
    await g.ok(["lfs", "unlock", "README.md"], { cwd: a });
  });

  test("git lfs locks --verify splits ours and theirs", async () => {
    const [a, b] = await Promise.all([cloneAs(alice), cloneAs(bob)]);
    await g.ok(["lfs", "lock", "art/verify-a.psd"], { cwd: a });
    await g.ok(["lfs", "lock", "art/verify-b.psd"], { cwd: b });
    const mine = await g.ok(["lfs", "locks", "--verify"], { cwd: a });
    expect(mine).toMatch(/^O art\/verify-a\.psd/m);
    expect(mine).toMatch(/^ {2}art\/verify-b\.psd/m);
    await g.ok(["lfs", "unlock", "art/verify-a.psd"], { cwd: a });
    await g.ok(["lfs", "unlock", "art/verify-b.psd"], { cwd: b });
  });
});

describe("the API", () => {
  test("create: 201 with the lock; 409 with the existing lock; the path normalized", async () => {
    const made = await lfs("POST", "game.git/info/lfs/locks", alice, { path: "/maps//./level1.umap", ref: { name: "refs/heads/main" } });
    expect({ status: made.status, type: made.type, body: made.body }).toEqual({
      status: 201,
      type: LFS,
      body: { lock: { id: expect.any(String), path: "maps/level1.umap", locked_at: expect.stringMatching(ISO), owner: { name: alice.handle } } },
    });
    const clash = await lfs("POST", "game.git/info/lfs/locks", bob, { path: "maps/level1.umap" });
    expect({ status: clash.status, body: clash.body }).toEqual({
      status: 409,
      body: { lock: made.body.lock, message: `maps/level1.umap is already locked by ${alice.handle}` },
    });

    const listed = await lfs("GET", "game.git/info/lfs/locks?path=maps/level1.umap", reader);
    expect({ status: listed.status, body: listed.body }).toEqual({ status: 200, body: { locks: [made.body.lock] } });
    const byId = await lfs("GET", `game.git/info/lfs/locks?id=${made.body.lock.id}`, bob);
    expect(byId.body).toEqual({ locks: [made.body.lock] });
    expect((await lfs("GET", "game.git/info/lfs/locks?id=nope", bob)).body).toEqual({ locks: [] });
    // Plain JSON is read too (curl users); the repository name works without .git as well.
    const plainJson = await lfs("GET", "game/info/lfs/locks?path=maps/level1.umap", bob, undefined);
    expect(plainJson.body).toEqual({ locks: [made.body.lock] });

    const gone = await lfs("POST", `game.git/info/lfs/locks/${made.body.lock.id}/unlock`, alice, { force: false }, { "content-type": "application/json" });
    expect({ status: gone.status, body: gone.body }).toEqual({ status: 200, body: { lock: made.body.lock } });
    expectLfsError(await lfs("POST", `game.git/info/lfs/locks/${made.body.lock.id}/unlock`, alice, {}), 404, /lock not found/);
  });

  test("list and verify page with cursor and limit (a limit over 100 is lowered to it)", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await lfs("POST", "game.git/info/lfs/locks", i % 2 ? bob : alice, { path: `pages/${i}.bin` })).body.lock.id);
    const first = await lfs("GET", "game.git/info/lfs/locks?limit=2", reader);
    expect(first.body.locks.map((l: any) => l.id)).toEqual(ids.slice(0, 2));
    const second = await lfs("GET", `game.git/info/lfs/locks?limit=2&cursor=${first.body.next_cursor}`, reader);
    expect(second.body.locks.map((l: any) => l.id)).toEqual(ids.slice(2, 4));
    const last = await lfs("GET", `game.git/info/lfs/locks?limit=2&cursor=${second.body.next_cursor}`, reader);
    expect(last.body).toEqual({ locks: [expect.objectContaining({ id: ids[4] })] });
    expect((await lfs("GET", "game.git/info/lfs/locks?limit=1000", reader)).body.locks.length).toBe(5);

    const v1 = await lfs("POST", "game.git/info/lfs/locks/verify", alice, { limit: 3, ref: { name: "refs/heads/main" } });
    expect(v1.status).toBe(200);
    expect(v1.body.ours.map((l: any) => l.path)).toEqual(["pages/0.bin", "pages/2.bin"]);
    expect(v1.body.theirs.map((l: any) => l.path)).toEqual(["pages/1.bin"]);
    const v2 = await lfs("POST", "game.git/info/lfs/locks/verify", alice, { limit: 3, cursor: v1.body.next_cursor });
    expect({ ours: v2.body.ours.map((l: any) => l.path), theirs: v2.body.theirs.map((l: any) => l.path), next: v2.body.next_cursor }).toEqual({
      ours: ["pages/4.bin"],
      theirs: ["pages/3.bin"],
      next: undefined,
    });
    for (const [i, id] of ids.entries()) expect((await lfs("POST", `game.git/info/lfs/locks/${id}/unlock`, i % 2 ? bob : alice, {})).status).toBe(200);
  });

  test("force unlock of another's lock: 403 without force, 403 for a writer with force, 200 for an admin", async () => {
    const lock = (await lfs("POST", "game.git/info/lfs/locks", alice, { path: "force/me.bin" })).body.lock;
    expectLfsError(await lfs("POST", `game.git/info/lfs/locks/${lock.id}/unlock`, bob, {}), 403, new RegExp(`locked by ${alice.handle}.*force`));
    expectLfsError(await lfs("POST", `game.git/info/lfs/locks/${lock.id}/unlock`, bob, { force: true }), 403, /needs the admin role/);
    expectLfsError(await lfs("POST", `game.git/info/lfs/locks/${lock.id}/unlock`, owner, {}), 403, /force/);
    const forced = await lfs("POST", `game.git/info/lfs/locks/${lock.id}/unlock`, owner, { force: true });
    expect({ status: forced.status, body: forced.body }).toEqual({ status: 200, body: { lock } });

    // Both events are in the org's audit log, the unlock marked as forced.
    const audit = await client(server, { cookie: owner.cookie }).get("/v1/orgs/studio/audit?action=lfs.unlock");
    const ev = audit.body.events?.find((e: any) => e.data?.lock_id === lock.id);
    expect(ev).toMatchObject({ action: "lfs.unlock", actor: { name: owner.handle }, data: { path: "force/me.bin", owner: alice.handle, force: true } });
    const locks = await client(server, { cookie: owner.cookie }).get("/v1/orgs/studio/audit?action=lfs.lock");
    expect(locks.body.events?.some((e: any) => e.data?.lock_id === lock.id && e.actor?.name === alice.handle)).toBe(true);
  });

  test("readers list but may not lock, verify or unlock; outsiders see 404; anonymous callers 401 on private", async () => {
    const lock = (await lfs("POST", "game.git/info/lfs/locks", alice, { path: "who/may.bin" })).body.lock;
    expect((await lfs("GET", "game.git/info/lfs/locks?path=who/may.bin", reader)).body).toEqual({ locks: [lock] });
    expectLfsError(await lfs("POST", "game.git/info/lfs/locks", reader, { path: "who/reader.bin" }), 403, /cannot write/);
    expectLfsError(await lfs("POST", "game.git/info/lfs/locks/verify", reader, {}), 403, /cannot write/);
    expectLfsError(await lfs("POST", `game.git/info/lfs/locks/${lock.id}/unlock`, reader, { force: true }), 403, /cannot write/);

    for (const [method, path] of [
      ["GET", "game.git/info/lfs/locks"],
      ["POST", "game.git/info/lfs/locks"],
      ["POST", "game.git/info/lfs/locks/verify"],
      ["POST", `game.git/info/lfs/locks/${lock.id}/unlock`],
      ["GET", "nothing.git/info/lfs/locks"],
    ] as const) {
      const body = method === "POST" ? { path: "x.bin" } : undefined;
      expectLfsError(await lfs(method, path, outsider, body), 404, /repository not found/);
      const anon = await lfs(method, path, null, body);
      expectLfsError(anon, 401, /authentication required/);
      expect(anon.challenge).toStartWith("Basic ");
      // A wrong credential is 401 too, whatever the repository.
      expectLfsError(await lfs(method, path, "svcp_not-a-token", body), 401);
    }

    // A public repository: anyone lists; anonymous callers must sign in to lock.
    expect((await lfs("GET", "site.git/info/lfs/locks", null)).body).toEqual({ locks: [] });
    const anonLock = await lfs("POST", "site.git/info/lfs/locks", null, { path: "a.bin" });
    expectLfsError(anonLock, 401);
    expect(anonLock.challenge).toStartWith("Basic ");
    expectLfsError(await lfs("POST", "site.git/info/lfs/locks", outsider, { path: "a.bin" }), 403, /cannot write/);

    expect((await lfs("POST", `game.git/info/lfs/locks/${lock.id}/unlock`, alice, {})).status).toBe(200);
  });

  test("a service token holds no lock: it may not lock, and every lock is theirs to it", async () => {
    expectLfsError(await lfs("POST", "game.git/info/lfs/locks", serviceToken, { path: "svc.bin" }), 403, /belong to a person/);
    const lock = (await lfs("POST", "game.git/info/lfs/locks", alice, { path: "svc/theirs.bin" })).body.lock;
    const v = await lfs("POST", "game.git/info/lfs/locks/verify", serviceToken, {});
    expect(v.body).toEqual({ ours: [], theirs: [lock] });
    expect((await lfs("POST", `game.git/info/lfs/locks/${lock.id}/unlock`, alice, {})).status).toBe(200);
  });

  test("hostile and malformed input is refused in the spec's format", async () => {
    const url = "game.git/info/lfs/locks";
    expectLfsError(await lfs("POST", url, alice, {}), 400, /path is required/);
    expectLfsError(await lfs("POST", url, alice, { path: "a/../../etc/passwd" }), 400, /\.\./);
    expectLfsError(await lfs("POST", url, alice, { path: "a\u0000b" }), 400, /control character/);
    expectLfsError(await lfs("POST", url, alice, { path: "x".repeat(4097) }), 400, /longer than 4096 bytes/);
    expectLfsError(await lfs("POST", url, alice, { path: "/./" }), 400, /names no file/);
    expectLfsError(await lfs("POST", url, alice, { path: 7 }), 400, /path is required/);
    expectLfsError(await lfs("POST", url, alice, { path: "a.bin", ref: "main" }), 400, /ref must be an object/);
    expectLfsError(await lfs("POST", url, alice, "[1,2]"), 400, /JSON object/);
    expectLfsError(await lfs("POST", url, alice, "{not json"), 400, /not valid JSON/);
    expectLfsError(await lfs("POST", url, alice, `${"[".repeat(100)}${"]".repeat(100)}`), 400, /nested deeper/);
    expectLfsError(await lfs("POST", url, alice, { path: "a.bin" }, { "content-type": "text/plain" }), 415, /vnd\.git-lfs\+json/);
    expectLfsError(await lfs("GET", `${url}?limit=0`, alice), 400, /limit/);
    expectLfsError(await lfs("GET", `${url}?limit=abc`, alice), 400, /limit/);
    expectLfsError(await lfs("GET", `${url}?cursor=bm9wZQ`, alice), 400, /cursor/);
    expectLfsError(await lfs("POST", `${url}/verify`, alice, { cursor: 12 }), 400, /cursor/);
    expectLfsError(await lfs("POST", `${url}/${"x".repeat(2000)}/unlock`, alice, {}), 404, /lock not found/);
    expectLfsError(await lfs("POST", `${url}/whatever/unlock`, alice, { force: "yes" }), 400, /force must be a boolean/);
    // A body over the limit is refused before it is read whole.
    const big = await lfs("POST", url, alice, JSON.stringify({ path: "a.bin", pad: "x".repeat(70 * 1024) }));
    expect(big.status).toBe(413);
    expect((await lfs("GET", url, alice)).body).toEqual({ locks: [] });
  });
});
