// Who may clone and push over git smart HTTP (SPEC §5 item 4, §5.5, §7), and the wire details
// of the front door: content types, no-cache headers, gzip request bodies, no dumb protocol.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import {
  basicAuth,
  clone,
  commitFiles,
  createRepo,
  fsck,
  FLUSH,
  gitSandbox,
  importHistory,
  initRepo,
  lsRemote,
  mintTokenWithId,
  parsePkts,
  pkt,
  repoUrl,
  revokeToken,
  setupOwner,
  type GitSandbox,
  type OrgOwner,
} from "../../helpers/git.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

// Real git against a real server: seconds per test, more on a busy machine.
setDefaultTimeout(60_000);

let server: RunningServer;
let g: GitSandbox;
let owner: OrgOwner; // owner of acme
let viewer: OrgOwner; // viewer in acme, repo:read token
let stranger: OrgOwner; // owner of another org, no role in acme
let privTip: string;
let pubTip: string;
let localDir: string;

const anonUrl = (repo: string) => repoUrl(server, "acme", repo);
const infoRefs = (repo: string, service: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/acme/${repo}.git/info/refs?service=${service}`, { headers });

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox();
  owner = await setupOwner(server, "acme");
  viewer = await setupOwner(server, "acme", "viewer");
  stranger = await setupOwner(server, "elsewhere");
  await createRepo(server, owner, "secret");
  await createRepo(server, owner, "open", true);
  localDir = await initRepo(g);
  privTip = await importHistory(g, localDir, { ref: "refs/heads/main", count: 5 });
  await g.ok(["push", "-q", repoUrl(server, "acme", "secret", owner.token), "main"], { cwd: localDir });
  pubTip = privTip;
  await g.ok(["push", "-q", repoUrl(server, "acme", "open", owner.token), "main"], { cwd: localDir });
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
}, 30_000);

describe("private repository", () => {
  test("anonymous info/refs answers 401 with a Basic challenge, for both services", async () => {
    for (const service of ["git-upload-pack", "git-receive-pack"]) {
      const res = await infoRefs("secret", service);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate") ?? "").toMatch(/^Basic /);
    }
    const rpc = await fetch(`${server.url}/acme/secret.git/git-upload-pack`, {
      method: "POST",
      headers: { "content-type": "application/x-git-upload-pack-request" },
      body: Buffer.concat([pkt(`want ${privTip}\n`), FLUSH, pkt("done\n")]),
    });
    expect(rpc.status).toBe(401);
  });

  test("anonymous git clone fails asking for credentials (prompts disabled)", async () => {
    const r = await g.run(["clone", anonUrl("secret"), g.path("anon")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("could not read Username");
  });

  for (const field of ["user", "password"] as const) {
    test(`token in the ${field} field clones and pushes`, async () => {
      const url = repoUrl(server, "acme", "secret", owner.token, field);
      const c = await clone(g, url);
      expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(privTip);
      expect(await fsck(g, c)).toMatchObject({ code: 0 });
      const tip = await commitFiles(g, c, { [`${field}.txt`]: `${field}\n` }, `via ${field}`);
      const push = await g.run(["push", "origin", `HEAD:refs/heads/via-${field}`], { cwd: c });
      expect(push).toMatchObject({ code: 0 });
      expect((await lsRemote(g, url))[`refs/heads/via-${field}`]).toBe(tip);

      const res = await infoRefs("secret", "git-upload-pack", { authorization: basicAuth(owner.token, field) });
      expect(res.status).toBe(200);
    });
  }

  test("valid credentials without access answer 404 (repository not found)", async () => {
    const res = await infoRefs("secret", "git-upload-pack", { authorization: basicAuth(stranger.token) });
    expect(res.status).toBe(404);
    const r = await g.run(["clone", repoUrl(server, "acme", "secret", stranger.token), g.path("stranger")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/repository '.*' not found/);
    // A repository that does not exist looks the same to the owner.
    const missing = await infoRefs("no-such-repo", "git-upload-pack", { authorization: basicAuth(owner.token) });
    expect(missing.status).toBe(404);
  });

  test("a revoked token answers 401 on the next request", async () => {
    const { id, token } = await mintTokenWithId(server, owner.cookie, "acme", { scopes: ["repo:read"], label: "soon revoked" });
    const url = repoUrl(server, "acme", "secret", token);
    const c = await clone(g, url);
    expect((await infoRefs("secret", "git-upload-pack", { authorization: basicAuth(token) })).status).toBe(200);

    await revokeToken(server, owner.cookie, "acme", id);
    const res = await infoRefs("secret", "git-upload-pack", { authorization: basicAuth(token) });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate") ?? "").toMatch(/^Basic /);
    const r = await g.run(["fetch", "origin"], { cwd: c });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Authentication failed|401/);
  });
});

describe("reader pushing", () => {
  for (const who of ["viewer", "read-only token"] as const) {
    test(`${who}: git push gets the in-band reason naming the repo and advising a fork; the RPC answers 403`, async () => {
      const token = who === "viewer" ? viewer.token : (await mintTokenWithId(server, owner.cookie, "acme", { scopes: ["repo:read"], label: "ro" })).token;
      const url = repoUrl(server, "acme", "secret", token);
      const c = await clone(g, url);
      await commitFiles(g, c, { "nope.txt": "nope\n" }, "should not land");
      const r = await g.run(["push", "origin", "main"], { cwd: c });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/remote error:|ERR /);
      expect(r.stderr).toContain("secret");
      expect(r.stderr).toMatch(/fork/i);
      expect(await lsRemote(g, url)).toMatchObject({ "refs/heads/main": privTip });

      const rpc = await fetch(`${server.url}/acme/secret.git/git-receive-pack`, {
        method: "POST",
        headers: { "content-type": "application/x-git-receive-pack-request", authorization: basicAuth(token) },
        body: Buffer.concat([pkt(`${privTip} ${"1".repeat(40)} refs/heads/main\0report-status\n`), FLUSH]),
      });
      expect(rpc.status).toBe(403);
    });
  }
});

describe("public repository", () => {
  test("anonymous clone works", async () => {
    const c = await clone(g, anonUrl("open"));
    expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(pubTip);
    expect(await fsck(g, c)).toMatchObject({ code: 0 });
  });

  test("a token of another organization can clone", async () => {
    const c = await clone(g, repoUrl(server, "acme", "open", stranger.token));
    expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(pubTip);
    const res = await infoRefs("open", "git-upload-pack", { authorization: basicAuth(stranger.token) });
    expect(res.status).toBe(200);
  });

  test("anonymous push answers 401 (so git asks for credentials)", async () => {
    const res = await infoRefs("open", "git-receive-pack");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate") ?? "").toMatch(/^Basic /);
    const rpc = await fetch(`${server.url}/acme/open.git/git-receive-pack`, {
      method: "POST",
      headers: { "content-type": "application/x-git-receive-pack-request" },
      body: Buffer.concat([pkt(`${pubTip} ${"1".repeat(40)} refs/heads/main\0report-status\n`), FLUSH]),
    });
    expect(rpc.status).toBe(401);

    const c = await clone(g, anonUrl("open"));
    await commitFiles(g, c, { "anon.txt": "anon\n" }, "anonymous");
    const r = await g.run(["push", "origin", "main"], { cwd: c });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("could not read Username");
    expect(await lsRemote(g, anonUrl("open"))).toEqual({ "refs/heads/main": pubTip });
  });

  test("a token of another organization cannot push: 404 or the in-band reason, never a write", async () => {
    const c = await clone(g, repoUrl(server, "acme", "open", stranger.token));
    await commitFiles(g, c, { "x.txt": "x\n" }, "outsider");
    const r = await g.run(["push", "origin", "main"], { cwd: c });
    expect(r.code).not.toBe(0);
    expect(await lsRemote(g, anonUrl("open"))).toEqual({ "refs/heads/main": pubTip });
  });
});

describe("wire details", () => {
  test("content types and no-cache headers", async () => {
    const auth = { authorization: basicAuth(owner.token) };
    const up = await infoRefs("secret", "git-upload-pack", auth);
    expect(up.status).toBe(200);
    expect(up.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");
    expect(up.headers.get("cache-control") ?? "").toMatch(/^no-cache/);
    const upBody = parsePkts(new Uint8Array(await up.arrayBuffer()));
    expect(upBody[0]).toBe("# service=git-upload-pack\n");
    expect(upBody[1]).toBeNull();

    const rp = await infoRefs("secret", "git-receive-pack", auth);
    expect(rp.status).toBe(200);
    expect(rp.headers.get("content-type")).toBe("application/x-git-receive-pack-advertisement");
    expect(rp.headers.get("cache-control") ?? "").toMatch(/^no-cache/);
    const rpBody = parsePkts(new Uint8Array(await rp.arrayBuffer()));
    expect(rpBody[0]).toBe("# service=git-receive-pack\n");
    expect(rpBody[2]).toMatch(/^[0-9a-f]{40} refs\/heads\/\S+\0.*report-status/);

    const rpc = await fetch(`${server.url}/acme/secret.git/git-upload-pack`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/x-git-upload-pack-request" },
      body: Buffer.concat([pkt(`want ${privTip} ofs-delta\n`), FLUSH, pkt("done\n")]),
    });
    expect(rpc.status).toBe(200);
    expect(rpc.headers.get("content-type")).toBe("application/x-git-upload-pack-result");
    expect(rpc.headers.get("cache-control") ?? "").toMatch(/^no-cache/);
    const bytes = Buffer.from(await rpc.arrayBuffer());
    expect(bytes.subarray(0, 8).toString()).toBe("0008NAK\n");
    expect(bytes.subarray(8, 12).toString()).toBe("PACK");
  });

  test("a hand-made gzip upload-pack request is accepted", async () => {
    const body = Buffer.concat([pkt(`want ${privTip} ofs-delta side-band-64k\n`), FLUSH, pkt("done\n")]);
    const res = await fetch(`${server.url}/acme/secret.git/git-upload-pack`, {
      method: "POST",
      headers: { authorization: basicAuth(owner.token), "content-type": "application/x-git-upload-pack-request", "content-encoding": "gzip" },
      body: Bun.gzipSync(body),
    });
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 8).toString()).toBe("0008NAK\n");
    expect(bytes.includes(Buffer.from("PACK"))).toBe(true);
  });

  for (const version of [0, 2] as const) {
    test(`git's own gzip request bodies are accepted (protocol v${version}, many wants)`, async () => {
      // 80 branches at 80 different commits: the want list passes 1 KiB, so git gzips it.
      const name = `many-${version}`;
      await createRepo(server, owner, name);
      const url = repoUrl(server, "acme", name, owner.token);
      const dir = await initRepo(g);
      const tip = await importHistory(g, dir, { ref: "refs/heads/main", count: 80 });
      const lines = Array.from({ length: 80 }, (_, i) => `create refs/heads/b${i} ${tip}~${i}`);
      await g.ok(["update-ref", "--stdin"], { cwd: dir, input: `${lines.join("\n")}\n` });
      await g.ok(["push", "-q", url, "--all"], { cwd: dir });

      const c = g.path("gz");
      const r = await g.run(["-c", `protocol.version=${version}`, "clone", "--mirror", url, c], { env: { GIT_TRACE_CURL: "1", GIT_TRACE_CURL_NO_DATA: "1" } });
      expect(r).toMatchObject({ code: 0 });
      expect(r.stderr).toMatch(/Send header: Content-Encoding: gzip/i);
      expect(await lsRemote(g, url)).toEqual(
        Object.fromEntries((await g.ok(["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: c })).split("\n").map((l) => l.split(" "))),
      );
      expect(await fsck(g, c)).toMatchObject({ code: 0 });
    });
  }

  test("the dumb protocol is refused", async () => {
    const auth = { authorization: basicAuth(owner.token) };
    const res = await fetch(`${server.url}/acme/secret.git/info/refs`, { headers: auth });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await res.text()).not.toContain(privTip);
    for (const path of ["HEAD", "objects/info/packs"]) {
      const r = await fetch(`${server.url}/acme/secret.git/${path}`, { headers: auth });
      expect(r.status).toBeGreaterThanOrEqual(400);
    }
    const r = await g.run(["clone", repoUrl(server, "acme", "secret", owner.token), g.path("dumb")], { env: { GIT_SMART_HTTP: "0" } });
    expect(r.code).not.toBe(0);
  });
});
