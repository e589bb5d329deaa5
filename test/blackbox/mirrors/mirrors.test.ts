// Mirrors against the real server (SPEC §2.1, §6.2; DECISIONS §3): origins served by a second
// `svc serve` and by C git's `git http-backend` (v2 and v0); the first sync at creation, then
// POST …/sync, with new commits, a force-push and a branch deletion reaching the mirror; the
// sync fields; mirrors refusing every write; signed inbound pushes fanning out to every mirror
// of the origin, duplicates folded into one sync; the app provider with installation tokens;
// and a sync killed with SIGKILL leaving the mirror as it was.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac, generateKeyPairSync, verify } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { clone, commitFiles, fsck, gitSandbox, localRefs, lsRemote, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { startHttpBackend, type HttpBackend } from "../../helpers/git-http-backend.ts";
import { eventually, startReceiver, type Receiver } from "../../helpers/receiver.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { gitSshEnv, registerKey, sshUrl, sshWorkspace, startSshServer, type SshRunningServer, type SshWorkspace } from "../../helpers/ssh.ts";

const T = 90_000;
const SECRET = "inbound-secret-for-tests";
let g: GitSandbox;
let ws: SshWorkspace;
let served: string;
let backend: HttpBackend;
let backendV0: HttpBackend;
let origin: RunningServer;
let mirror: SshRunningServer;
let originOwner: Person;
let originToken: string;
let owner: Person;
let token: string;
let rx: Receiver;

beforeAll(async () => {
  g = gitSandbox();
  ws = sshWorkspace();
  rx = startReceiver();
  served = join(g.root, "served");
  mkdirSync(served);
  backend = startHttpBackend({ root: served });
  backendV0 = startHttpBackend({ root: served, v0Only: true });
  origin = await startServer();
  mirror = await startSshServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_WEBHOOK_SECRET: SECRET } });
  originOwner = await person(origin, "up", "owner@up.test", "owner");
  originToken = (await caller(origin, originOwner).post("/v1/orgs/up/tokens", { scopes: ["repo:write"], label: "mirror" })).body.token;
  owner = await person(mirror, "acme", "owner@acme.test", "owner");
  token = (await caller(mirror, owner).post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "git" })).body.token;
}, T);

afterAll(async () => {
  backend?.stop();
  backendV0?.stop();
  rx?.stop();
  await origin?.[Symbol.asyncDispose]();
  await mirror?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
});

let count = 0;

/** A bare repository under the http-backend root with `main` (3 commits), `topic` and tag v1; returns its name and a work tree pushing to it. */
async function backendOrigin(): Promise<{ name: string; bare: string; work: string }> {
  const name = `o${++count}.git`;
  const bare = join(served, name);
  await g.ok(["init", "-q", "--bare", "-b", "main", bare]);
  const work = join(g.root, `work-${count}`);
  await g.ok(["clone", "-q", bare, work]);
  for (let i = 0; i < 3; i++) await commitFiles(g, work, { "f.txt": `v${i}\n`, [`d/${i}.txt`]: `${i}\n` }, `c${i}`);
  await g.ok(["branch", "topic", "HEAD~1"], { cwd: work });
  await g.ok(["tag", "-a", "-m", "one", "v1", "HEAD~2"], { cwd: work });
  await g.ok(["push", "-q", "origin", "main", "topic", "v1"], { cwd: work });
  return { name, bare, work };
}

/** The refs of a bare origin (heads and tags). */
async function bareRefs(bare: string): Promise<Record<string, string>> {
  const out = await g.ok(["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"], { cwd: bare });
  return Object.fromEntries(
    out
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ") as [string, string]),
  );
}

/** The mirror's refs through the refs API. */
async function mirrorRefs(name: string, org = "acme"): Promise<Record<string, string>> {
  // acme's token reads acme; another org's mirrors are read with the owner's session.
  const r = await caller(mirror, org === "acme" ? token : owner).get(`/v1/orgs/${org}/repos/${name}/refs`);
  return Object.fromEntries(r.body.refs.map((x: { name: string; target: string }) => [x.name, x.target]));
}

/** Creates a mirror of `url`; returns the created Repo body. */
async function createMirror(name: string, url: string, extra: Record<string, unknown> = {}, org = "acme"): Promise<any> {
  const r = await caller(mirror, owner).post(`/v1/orgs/${org}/repos`, { name, kind: "mirror", origin_url: url, ...extra });
  expect(r.status).toBe(201);
  return r.body;
}

/**
 * Operations of `kind` the mirror server has counted for org acme (its day buckets; counts are
 * written in batches within seconds, so callers wait for the figure they expect).
 */
function orgOperations(kind: string, org = "acme"): number {
  const db = new Database(join(mirror.dataDir, "svc.db"), { readonly: true });
  try {
    const row = db
      .query("SELECT coalesce(sum(count), 0) AS n FROM metric_buckets WHERE grain = 1440 AND kind = ? AND org_id = (SELECT id FROM orgs WHERE name = ?)")
      .get(kind, org) as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

/** Waits until the mirror's refs equal `want` and a sync has completed after `after`. */
async function synced(name: string, want: Record<string, string>, after = 0, org = "acme"): Promise<any> {
  let last: unknown = null;
  return eventually(
    async () => {
      const repo = (await caller(mirror, owner).get(`/v1/orgs/${org}/repos/${name}`)).body;
      const refs = await mirrorRefs(name, org);
      last = { repo, refs, want };
      if (!repo.last_sync_at || repo.last_sync_at <= after) return null;
      return JSON.stringify(refs) === JSON.stringify(Object.fromEntries(Object.entries(want).sort())) ? repo : null;
    },
    60_000,
    `mirror ${name} in sync`,
  ).catch((e) => {
    throw new Error(`${e.message}: ${JSON.stringify(last)}`);
  });
}

const sign = (body: string) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
const inbound = (server: RunningServer, path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }).then(async (r) => ({
    status: r.status,
    body: await r.json().catch(() => null),
  }));

describe("syncing from origins", () => {
  test(
    "a private repository of a second svc: first sync at creation, credentials kept out of origin_url, sync fields, HEAD and a clone equal to the origin",
    async () => {
      expect((await caller(origin, originOwner).post("/v1/orgs/up/repos", { name: "lib", default_branch: "trunk" })).status).toBe(201);
      const work = await clone(g, repoUrl(origin, "up", "lib", originToken));
      await commitFiles(g, work, { README: "hello\n" }, "first");
      await g.ok(["push", "-q", "origin", "HEAD:trunk", "HEAD:refs/heads/other", "HEAD:refs/tags/t1"], { cwd: work });
      const want = await lsRemote(g, repoUrl(origin, "up", "lib", originToken));
      const u = new URL(origin.url);
      const created = await createMirror("lib", `http://x-token:${originToken}@${u.host}/up/lib.git`);
      expect(created).toMatchObject({
        kind: "mirror",
        origin_url: `${origin.url}/up/lib.git`,
        origin_provider: "generic",
        origin_installation: null,
        last_sync_at: null,
        last_synced_commit: null,
        sync_error: null,
        viewer_write: false,
      });
      expect(JSON.stringify(created)).not.toContain(originToken);
      const repo = await synced("lib", want);
      expect(repo).toMatchObject({ last_synced_commit: want["refs/heads/trunk"], sync_error: null, default_branch: "trunk" });
      const copy = await clone(g, repoUrl(mirror, "acme", "lib", token));
      expect(await localRefs(g, copy)).toMatchObject({ "refs/heads/trunk": want["refs/heads/trunk"] });
      expect((await fsck(g, copy)).code).toBe(0);
    },
    T,
  );

  for (const [label, server] of [
    ["v2", () => backend],
    ["v0", () => backendV0],
  ] as const) {
    test(
      `git http-backend (${label}): new commits, a force-push and a branch deletion reach the mirror through POST …/sync`,
      async () => {
        const o = await backendOrigin();
        const name = `hb-${label}`;
        await createMirror(name, `${server().url}/${o.name}`);
        let repo = await synced(name, await bareRefs(o.bare));
        const requests = server().requests.length;
        // Five new commits on main, topic rewritten (forced), v1 kept, a new branch, then one deleted.
        for (let i = 0; i < 5; i++) await commitFiles(g, o.work, { "f.txt": `w${i}\n` }, `w${i}`);
        await g.ok(["checkout", "-q", "-B", "topic", "HEAD~6"], { cwd: o.work });
        await commitFiles(g, o.work, { "t.txt": "rewritten\n" }, "rewrite");
        await g.ok(["push", "-q", "--force", "origin", "main", "topic", "topic:refs/heads/extra"], { cwd: o.work });
        await g.ok(["push", "-q", "origin", ":refs/heads/extra"], { cwd: o.work });
        const r = await caller(mirror, token).post(`/v1/orgs/acme/repos/${name}/sync`);
        expect(r).toMatchObject({ status: 202, body: { queued: true } });
        repo = await synced(name, await bareRefs(o.bare), repo.last_sync_at);
        expect(repo.last_synced_commit).toBe((await bareRefs(o.bare))["refs/heads/main"]);
        // The origin was asked once for refs and fetched with haves: one POST for ls-refs (v2) and few for the pack.
        const used = server().requests.slice(requests);
        expect(used[0]!.path).toBe(`/${o.name}/info/refs?service=git-upload-pack`);
        expect(used.length).toBeLessThanOrEqual(label === "v2" ? 4 : 3);
        const copy = await clone(g, repoUrl(mirror, "acme", name, token), ["--mirror"]);
        expect((await fsck(g, copy)).code).toBe(0);
      },
      T,
    );
  }

  test(
    "a mirror's sync fires the repository's push webhooks with via \"mirror\"",
    async () => {
      const o = await backendOrigin();
      await createMirror("hooked", `${backend.url}/${o.name}`);
      const before = await synced("hooked", await bareRefs(o.bare));
      const h = await caller(mirror, owner).post("/v1/orgs/acme/repos/hooked/webhooks", { url: `${rx.url}/mirror` });
      rx.secret("/mirror", h.body.secret);
      await commitFiles(g, o.work, { "n.txt": "new\n" }, "new");
      await g.ok(["push", "-q", "origin", "main"], { cwd: o.work });
      await caller(mirror, token).post("/v1/orgs/acme/repos/hooked/sync");
      await synced("hooked", await bareRefs(o.bare), before.last_sync_at);
      await rx.until(() => rx.of("/mirror").length === 1);
      expect(rx.of("/mirror")[0]!).toMatchObject({ signed: true, body: { event: "push", repo_id: before.id, payload: { via: "mirror" } } });
    },
    T,
  );

  test(
    "a failing origin leaves its reason in sync_error and keeps the last synced commit",
    async () => {
      const o = await backendOrigin();
      const first = await (async () => {
        await createMirror("fragile", `${backend.url}/${o.name}`);
        return synced("fragile", await bareRefs(o.bare));
      })();
      const kept = await mirrorRefs("fragile");
      rmSync(o.bare, { recursive: true, force: true });
      await caller(mirror, token).post("/v1/orgs/acme/repos/fragile/sync");
      const repo = await eventually(async () => {
        const r = (await caller(mirror, owner).get("/v1/orgs/acme/repos/fragile")).body;
        return r.last_sync_at > first.last_sync_at && r;
      });
      expect(repo).toMatchObject({ sync_error: "origin repository not found (HTTP 404)", last_synced_commit: first.last_synced_commit });
      expect(await mirrorRefs("fragile")).toEqual(kept);
    },
    T,
  );
});

describe('object checks (docs/architecture.md "Object checks")', () => {
  test(
    "an origin's pack passes the same fsck as a push: a disallowed .gitmodules name fails the sync with git's message id and nothing moves",
    async () => {
      const o = await backendOrigin();
      await createMirror("checked", `${backend.url}/${o.name}`);
      const first = await synced("checked", await bareRefs(o.bare));
      const kept = await mirrorRefs("checked");
      // C git's own server sends what it has; only a receiving end that checks objects refuses this.
      await commitFiles(
        g,
        o.work,
        { ".gitmodules": '[submodule "../../modules/evil"]\n\tpath = evil\n\turl = https://example.com/evil.git\n' },
        "evil submodule",
      );
      await g.ok(["push", "-q", "origin", "main"], { cwd: o.work });
      expect((await caller(mirror, token).post("/v1/orgs/acme/repos/checked/sync")).status).toBe(202);
      const repo = await eventually(async () => {
        const r = (await caller(mirror, owner).get("/v1/orgs/acme/repos/checked")).body;
        return r.last_sync_at > first.last_sync_at && r;
      });
      expect(repo.sync_error).toContain("gitmodulesName: disallowed submodule name: ../../modules/evil");
      expect(repo.last_synced_commit).toBe(first.last_synced_commit);
      expect(await mirrorRefs("checked")).toEqual(kept);
    },
    T,
  );
});

describe("mirrors are read-only", () => {
  test(
    "git push over HTTP and SSH, the commit API and the refs API are refused with a clear message; nothing moves",
    async () => {
      const o = await backendOrigin();
      await createMirror("ro", `${backend.url}/${o.name}`);
      const want = await bareRefs(o.bare);
      await synced("ro", want);
      const work = await clone(g, repoUrl(mirror, "acme", "ro", token));
      await commitFiles(g, work, { "mine.txt": "no\n" }, "not allowed");
      const http = await g.run(["push", "origin", "HEAD:main"], { cwd: work });
      expect(http.code).not.toBe(0);
      expect(http.stderr).toContain("acme/ro is a read-only mirror");
      const key = await ws.keygen("ro-key", "ed25519");
      await registerKey(mirror, owner, "acme", key);
      const ssh = await g.run(["push", sshUrl(mirror, "acme", "ro"), "HEAD:main"], { cwd: work, env: gitSshEnv(key) });
      expect(ssh.code).not.toBe(0);
      expect(ssh.stderr).toContain("acme/ro is a read-only mirror");
      expectError(
        await caller(mirror, token).post("/v1/orgs/acme/repos/ro/commits", {
          branch: "main",
          message: "x",
          operations: [{ op: "put", path: "x", content: "x" }],
        }),
        403,
        "read-only mirror",
      );
      expectError(await caller(mirror, token).put("/v1/orgs/acme/repos/ro/refs/refs/heads/new", { target: want["refs/heads/main"] }), 403, "read-only mirror");
      expectError(await caller(mirror, token).delete(`/v1/orgs/acme/repos/ro/refs/refs/heads/topic`), 403, "read-only mirror");
      expect(await mirrorRefs("ro")).toEqual(Object.fromEntries(Object.entries(want).sort()));
      const body = (await caller(mirror, owner).get("/v1/orgs/acme/repos/ro")).body;
      expect({ viewer_write: body.viewer_write, viewer_admin: body.viewer_admin }).toEqual({ viewer_write: false, viewer_admin: true });
    },
    T,
  );

  test(
    "POST …/sync: 422 on a native repository, 403 for a reader, 404 for an outsider, 401 for nobody",
    async () => {
      expect((await caller(mirror, owner).post("/v1/orgs/acme/repos", { name: "plain" })).status).toBe(201);
      expectError(await caller(mirror, token).post("/v1/orgs/acme/repos/plain/sync"), 422, "not a mirror");
      const o = await backendOrigin();
      await createMirror("guarded", `${backend.url}/${o.name}`);
      const viewer = await person(mirror, "acme", "viewer@acme.test", "viewer");
      const outsider = await person(mirror, "elsewhere", "out@elsewhere.test", "owner");
      expectError(await caller(mirror, viewer).post("/v1/orgs/acme/repos/guarded/sync"), 403, "needs write access");
      expectError(await caller(mirror, outsider).post("/v1/orgs/acme/repos/guarded/sync"), 404);
      expectError(await caller(mirror).post("/v1/orgs/acme/repos/guarded/sync"), 401);
    },
    T,
  );

  test(
    "creation refuses what could never sync: no origin_url, a bad URL, an unknown provider, an app mirror without the app configured",
    async () => {
      const post = (b: Record<string, unknown>) => caller(mirror, owner).post("/v1/orgs/acme/repos", { name: `bad${++count}`, kind: "mirror", ...b });
      expectError(await post({}), 400, "needs origin_url");
      expectError(await post({ origin_url: "file:///etc" }), 400, "http:// or https://");
      expectError(await post({ origin_url: "https://example.com/x.git", origin_provider: "svn" }), 422);
      expectError(await post({ origin_url: "owner/name", origin_provider: "app", origin_installation: "1" }), 400, "SVC_APP_ID");
      expectError(await post({ origin_url: "https://example.com/x.git", origin_installation: "1" }), 400, "only for app mirrors");
    },
    T,
  );
});

describe("inbound webhooks (SPEC §6.2)", () => {
  test(
    "unsigned and mis-signed deliveries are 401; a server without a secret refuses everything",
    async () => {
      const body = JSON.stringify({ full_name: `${backend.url}/x.git` });
      expectError(await inbound(mirror, "/webhooks/generic", body), 401);
      expectError(await inbound(mirror, "/webhooks/generic", body, { "x-hub-signature-256": `sha256=${"0".repeat(64)}` }), 401, "signature does not match");
      expectError(await inbound(mirror, "/webhooks/generic", body, { "x-hub-signature-256": sign(`${body} `) }), 401);
      expectError(await inbound(mirror, "/webhooks/app", body, { "x-hub-signature-256": "sha1=abc" }), 401, "malformed");
      expectError(await inbound(origin, "/webhooks/generic", body, { "x-hub-signature-256": sign(body) }), 401, "not configured");
      expectError(await inbound(mirror, "/webhooks/generic", "{not json", { "x-hub-signature-256": sign("{not json") }), 400);
      expectError(await inbound(mirror, "/webhooks/generic", '{"full_name":42}', { "x-hub-signature-256": sign('{"full_name":42}') }), 400, "full_name");
      expect(
        await inbound(mirror, "/webhooks/generic", JSON.stringify({ full_name: "https://nowhere.example/none.git" }), {
          "x-hub-signature-256": sign(JSON.stringify({ full_name: "https://nowhere.example/none.git" })),
        }),
      ).toEqual({ status: 202, body: { syncs: 0 } });
    },
    T,
  );

  test(
    "a signed push syncs every mirror of that origin, however the URL is spelled; the freshness metric is recorded",
    async () => {
      const o = await backendOrigin();
      // An org of their own, so the org's operation counts are these two mirrors' alone.
      expect((await caller(mirror, owner).post("/v1/orgs", { name: "fanout" })).status).toBe(201);
      await createMirror("fan-a", `${backend.url}/${o.name}`, {}, "fanout");
      await createMirror("fan-b", `${backend.url}/${o.name.replace(/\.git$/, "")}/`, {}, "fanout");
      const a = await synced("fan-a", await bareRefs(o.bare), 0, "fanout");
      const b = await synced("fan-b", await bareRefs(o.bare), 0, "fanout");
      await commitFiles(g, o.work, { "pushed.txt": "p\n" }, "pushed");
      await g.ok(["push", "-q", "origin", "main"], { cwd: o.work });
      const body = JSON.stringify({ full_name: `${backend.url.toUpperCase().replace("HTTP://", "http://")}/${o.name}` });
      expect(await inbound(mirror, "/webhooks/generic", body, { "x-hub-signature-256": sign(body) })).toEqual({ status: 202, body: { syncs: 2 } });
      await synced("fan-a", await bareRefs(o.bare), a.last_sync_at, "fanout");
      await synced("fan-b", await bareRefs(o.bare), b.last_sync_at, "fanout");
      // Four syncs (two at creation, two for the push) and two freshness figures (the push's).
      const counts = () => ({ syncs: orgOperations("mirror.sync", "fanout"), freshness: orgOperations("mirror.freshness", "fanout") });
      await eventually(async () => counts().syncs >= 4 && counts().freshness >= 2);
      expect(counts()).toEqual({ syncs: 4, freshness: 2 });
    },
    T,
  );

  test(
    "duplicate deliveries of a push while a sync runs are folded into one more sync",
    async () => {
      const o = await backendOrigin();
      let reached!: () => void;
      const isReached = new Promise<void>((r) => (reached = r));
      let release!: () => void;
      using slow = startHttpBackend({ root: served, stall: { afterBytes: 200, release: new Promise<void>((r) => (release = r)), reached } });
      const syncsBefore = orgOperations("mirror.sync");
      await createMirror("folded", `${slow.url}/${o.name}`);
      await isReached;
      const body = JSON.stringify({ full_name: `${slow.url}/${o.name}` });
      for (let i = 0; i < 5; i++) expect((await inbound(mirror, "/webhooks/generic", body, { "x-hub-signature-256": sign(body) })).body).toEqual({ syncs: 1 });
      release();
      await synced("folded", await bareRefs(o.bare));
      // Every sync ends with a mirror.sync operation counted: wait for the second.
      await eventually(async () => orgOperations("mirror.sync") - syncsBefore === 2);
      // Two syncs in all: the one running, and one for all five deliveries.
      expect(slow.requests.filter((r) => r.path.includes("info/refs"))).toHaveLength(2);
    },
    T,
  );
});

describe("the app provider (SVC_APP_*)", () => {
  test(
    "installation tokens from a signed RS256 JWT fetch a private origin; /webhooks/app pushes sync it; other events are acknowledged",
    async () => {
      const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
      const pub = publicKey;
      expect((await caller(origin, originOwner).post("/v1/orgs/up/repos", { name: "app-lib" })).status).toBe(201);
      const work = await clone(g, repoUrl(origin, "up", "app-lib", originToken));
      await commitFiles(g, work, { a: "1\n" }, "one");
      await g.ok(["push", "-q", "origin", "HEAD:main"], { cwd: work });
      const seen: string[] = [];
      using api = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        async fetch(req) {
          const path = new URL(req.url).pathname;
          const auth = req.headers.get("authorization") ?? "";
          seen.push(`${req.method} ${path}`);
          if (req.method === "POST" && path === "/app/installations/77/access_tokens") {
            const jwt = auth.replace(/^Bearer /, "");
            const [h, p, s] = jwt.split(".");
            const ok = verify("sha256", Buffer.from(`${h}.${p}`), pub, Buffer.from(s!, "base64url"));
            const claims = JSON.parse(Buffer.from(p!, "base64url").toString());
            const header = JSON.parse(Buffer.from(h!, "base64url").toString());
            if (!ok || claims.iss !== "4242" || header.alg !== "RS256" || claims.exp * 1000 < Date.now()) return new Response("bad jwt", { status: 401 });
            return Response.json({ token: originToken, expires_at: new Date(Date.now() + 3600_000).toISOString() }, { status: 201 });
          }
          if (req.method === "GET" && path === "/repos/up/app-lib") {
            if (auth !== `token ${originToken}`) return new Response("no", { status: 401 });
            return Response.json({ full_name: "up/app-lib", clone_url: `${origin.url}/up/app-lib.git`, private: true });
          }
          return new Response("not found", { status: 404 });
        },
      });
      await using appServer = await startServer({
        env: {
          SVC_WEBHOOK_ALLOW_PRIVATE: "1",
          SVC_WEBHOOK_SECRET: SECRET,
          SVC_APP_ID: "4242",
          SVC_APP_PRIVATE_KEY: pem,
          SVC_APP_API_URL: `http://127.0.0.1:${api.port}`,
        },
      });
      const o = await person(appServer, "apps", "owner@apps.test", "owner");
      const created = await caller(appServer, o).post("/v1/orgs/apps/repos", {
        name: "m",
        kind: "mirror",
        origin_url: "up/app-lib",
        origin_provider: "app",
        origin_installation: "77",
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ origin_url: "up/app-lib", origin_provider: "app", origin_installation: "77" });
      const get = () =>
        caller(appServer, o)
          .get("/v1/orgs/apps/repos/m")
          .then((r) => r.body);
      const first = await eventually(async () => {
        const r = await get();
        return r.last_sync_at && r;
      });
      const want = await lsRemote(g, repoUrl(origin, "up", "app-lib", originToken));
      expect(first).toMatchObject({ sync_error: null, last_synced_commit: want["refs/heads/main"] });
      expect(seen.slice(0, 2)).toEqual(["POST /app/installations/77/access_tokens", "GET /repos/up/app-lib"]);

      await commitFiles(g, work, { a: "2\n" }, "two");
      await g.ok(["push", "-q", "origin", "HEAD:main"], { cwd: work });
      const ping = JSON.stringify({ zen: "hi", hook_id: 1 });
      expect(await inbound(appServer, "/webhooks/app", ping, { "x-hub-signature-256": sign(ping), "x-github-event": "ping" })).toEqual({
        status: 202,
        body: { syncs: 0 },
      });
      const push = JSON.stringify({ ref: "refs/heads/main", after: "x", repository: { full_name: "UP/App-Lib" }, installation: { id: 77 } });
      expect(await inbound(appServer, "/webhooks/app", push, { "x-hub-signature-256": sign(push), "x-github-event": "push" })).toEqual({
        status: 202,
        body: { syncs: 1 },
      });
      const head = await lsRemote(g, repoUrl(origin, "up", "app-lib", originToken));
      const second = await eventually(async () => {
        const r = await get();
        return r.last_synced_commit === head["refs/heads/main"] && r;
      });
      expect(second.sync_error).toBeNull();
      // The cached installation token served the second sync.
      expect(seen.filter((s) => s.includes("access_tokens"))).toHaveLength(1);
    },
    T,
  );
});

describe("crash safety", () => {
  test(
    "a sync killed with SIGKILL mid-pack leaves the mirror at its old, consistent state; the next sync completes",
    async () => {
      const o = await backendOrigin();
      const dataDir = mkdtempSync(join(tmpdir(), "svc-mirror-kill-"));
      const env = { SVC_WEBHOOK_ALLOW_PRIVATE: "1" };
      let server = await startServer({ dataDir, env });
      let reached!: () => void;
      const isReached = new Promise<void>((r) => (reached = r));
      let release!: () => void;
      const stall = { afterBytes: Number.POSITIVE_INFINITY, release: new Promise<void>((r) => (release = r)), reached };
      using slow = startHttpBackend({ root: served, stall });
      try {
        const k = await person(server, "kill", "owner@kill.test", "owner");
        const tok = (await caller(server, k).post("/v1/orgs/kill/tokens", { scopes: ["repo:write"], label: "t" })).body.token;
        expect((await caller(server, k).post("/v1/orgs/kill/repos", { name: "m", kind: "mirror", origin_url: `${slow.url}/${o.name}` })).status).toBe(201);
        const old = await bareRefs(o.bare);
        const refsOf = async (s: RunningServer) =>
          Object.fromEntries((await caller(s, tok).get("/v1/orgs/kill/repos/m/refs")).body.refs.map((r: any) => [r.name, r.target]));
        await eventually(async () => JSON.stringify(await refsOf(server)) === JSON.stringify(Object.fromEntries(Object.entries(old).sort())));
        // A big change at the origin: 300 commits of incompressible content.
        const lines: string[] = [];
        for (let i = 0; i < 300; i++) {
          const blob = Buffer.from(crypto.getRandomValues(new Uint8Array(8192))).toString("base64");
          const message = `big ${i}`;
          lines.push("commit refs/heads/main", `committer T <t@e.st> ${1_700_000_000 + i} +0000`, `data ${message.length}`, message);
          if (i === 0) lines.push(`from ${old["refs/heads/main"]}`);
          lines.push(`M 100644 inline big/${i % 20}.bin`, `data ${blob.length}`, blob);
        }
        await g.ok(["fast-import", "--quiet"], { cwd: o.bare, input: `${lines.join("\n")}\n` });
        stall.afterBytes = 512 * 1024;
        expect((await caller(server, tok).post("/v1/orgs/kill/repos/m/sync")).status).toBe(202);
        await isReached;
        server.proc.kill("SIGKILL");
        await server.proc.exited;
        server = await startServer({ dataDir, env });
        expect(await refsOf(server)).toEqual(Object.fromEntries(Object.entries(old).sort()));
        const copy = await clone(g, repoUrl(server, "kill", "m", tok), ["--mirror"]);
        expect((await fsck(g, copy)).code).toBe(0);
        expect(await localRefs(g, copy)).toEqual(old);
        release();
        expect((await caller(server, tok).post("/v1/orgs/kill/repos/m/sync")).status).toBe(202);
        const now = await bareRefs(o.bare);
        await eventually(async () => JSON.stringify(await refsOf(server)) === JSON.stringify(Object.fromEntries(Object.entries(now).sort())), 60_000);
        const again = await clone(g, repoUrl(server, "kill", "m", tok), ["--mirror"]);
        expect((await fsck(g, again)).code).toBe(0);
      } finally {
        release?.();
        await server[Symbol.asyncDispose]();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    T,
  );
});

describe("origins on private addresses", () => {
  test(
    "refused at creation unless allowed (SVC_MIRROR_ALLOW_PRIVATE, defaulting to SVC_WEBHOOK_ALLOW_PRIVATE)",
    async () => {
      await using strict = await startServer();
      const o = await person(strict, "strict", "owner@strict.test", "owner");
      const post = (url: string) => caller(strict, o).post("/v1/orgs/strict/repos", { name: `m${++count}`, kind: "mirror", origin_url: url });
      expectError(await post(`${backend.url}/x.git`), 400, "loopback address");
      expectError(await post("http://169.254.169.254/latest.git"), 400, "link-local");
      expectError(await post("http://[fd00::1]/x.git"), 400, "unique local");
      // Issue 25 row 12: the IPv4-translated form of 127.0.0.1.
      expectError(await post("http://[::ffff:0:7f00:1]/x.git"), 400, "IPv4-translated");
      await using allowed = await startServer({ env: { SVC_MIRROR_ALLOW_PRIVATE: "1" } });
      const a = await person(allowed, "ok", "owner@ok.test", "owner");
      expect((await caller(allowed, a).post("/v1/orgs/ok/repos", { name: "m", kind: "mirror", origin_url: `${backend.url}/x.git` })).status).toBe(201);
    },
    T,
  );
});
