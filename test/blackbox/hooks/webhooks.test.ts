// Outbound webhooks against the real server (SPEC §4.6, §6.1; DECISIONS §2, §4): subscriptions
// managed by repository admins only, a signed delivery for a push from each of git over HTTP,
// git over SSH and the commit API with exactly SPEC's payloads, attempts recorded, failures
// and redirects recorded as such, per-hook order under a slow receiver, and no delivery lost
// across a restart. Receivers are a local server that checks every signature.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, caller, person, type Person } from "../../helpers/api.ts";
import { clone, commitFiles, gitSandbox, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { eventually, startReceiver, type Receiver } from "../../helpers/receiver.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { gitSshEnv, registerKey, sshUrl, sshWorkspace, startSshServer, type SshWorkspace } from "../../helpers/ssh.ts";

const T = 60_000;
let server: RunningServer & { sshPort?: number };
let g: GitSandbox;
let ws: SshWorkspace;
let rx: Receiver;
let owner: Person;
let token: string;

beforeAll(async () => {
  server = await startSshServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1" } });
  g = gitSandbox();
  ws = sshWorkspace();
  rx = startReceiver();
  owner = await person(server, "acme", "owner@acme.test", "owner");
  const t = await caller(server, owner).post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "git" });
  token = t.body.token;
}, T);

afterAll(async () => {
  rx?.stop();
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
});

let repoCount = 0;
/** A new private repository of acme; returns its name and id. */
async function newRepo(): Promise<{ name: string; id: string }> {
  const name = `r${++repoCount}`;
  const r = await caller(server, owner).post("/v1/orgs/acme/repos", { name });
  expect(r.status).toBe(201);
  return { name, id: r.body.id };
}

/** Subscribes receiver path `path` to `repo`; registers its secret with the receiver. */
async function hook(repo: string, path: string): Promise<{ id: string; secret: string }> {
  const r = await caller(server, owner).post(`/v1/orgs/acme/repos/${repo}/webhooks`, { url: `${rx.url}${path}` });
  expect(r.status).toBe(201);
  rx.secret(path, r.body.secret);
  return r.body;
}

/** A work tree cloned from `repo` (empty) with one commit pushed to main over HTTP; returns the dir. */
async function pushFirst(repo: string): Promise<string> {
  const dir = await clone(g, repoUrl(server, "acme", repo, token));
  await commitFiles(g, dir, { "a.txt": "one\n" }, "first");
  await g.ok(["push", "-q", "origin", "HEAD:main"], { cwd: dir });
  return dir;
}

describe("webhook subscriptions (repository admins)", () => {
  test(
    "create shows the secret once; list shows url, created_at and last_delivery, never the secret; delete",
    async () => {
      const { name } = await newRepo();
      const created = await caller(server, owner).post(`/v1/orgs/acme/repos/${name}/webhooks`, { url: `${rx.url}/crud` });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(["created_at", "events", "id", "secret", "url"]);
      expect(created.body.url).toBe(`${rx.url}/crud`);
      expect(created.body.secret.length).toBeGreaterThanOrEqual(32);
      const list = await caller(server, owner).get(`/v1/orgs/acme/repos/${name}/webhooks`);
      expect(list).toMatchObject({ status: 200 });
      expect(list.body).toEqual({
        webhooks: [{ id: created.body.id, url: `${rx.url}/crud`, events: null, created_at: created.body.created_at, last_delivery: null }],
      });
      expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
      const empty = await caller(server, owner).get(`/v1/orgs/acme/repos/${name}/webhooks/${created.body.id}/deliveries`);
      expect(empty.body).toEqual({ deliveries: [], next_cursor: null });
      expect((await caller(server, owner).delete(`/v1/orgs/acme/repos/${name}/webhooks/${created.body.id}`)).status).toBe(204);
      expectError(await caller(server, owner).delete(`/v1/orgs/acme/repos/${name}/webhooks/${created.body.id}`), 404, "webhook not found");
      expectError(await caller(server, owner).get(`/v1/orgs/acme/repos/${name}/webhooks/${created.body.id}/deliveries`), 404, "webhook not found");
      expect((await caller(server, owner).get(`/v1/orgs/acme/repos/${name}/webhooks`)).body).toEqual({ webhooks: [] });
    },
    T,
  );

  test(
    "members, viewers and tokens without admin authority are refused; outsiders see 404; nobody 401",
    async () => {
      const { name } = await newRepo();
      const member = await person(server, "acme", `member${name}@acme.test`, "member");
      const outsider = await person(server, "other", `out${name}@other.test`, "owner");
      const path = `/v1/orgs/acme/repos/${name}/webhooks`;
      expectError(await caller(server, member).post(path, { url: `${rx.url}/x` }), 403, "needs the admin role");
      expectError(await caller(server, member).get(path), 403);
      expectError(await caller(server, outsider).post(path, { url: `${rx.url}/x` }), 404);
      expectError(await caller(server).post(path, { url: `${rx.url}/x` }), 401);
      const readOnly = (await caller(server, owner).post("/v1/orgs/acme/tokens", { scopes: ["repo:read"], label: `ro-${name}` })).body.token;
      expectError(await caller(server, readOnly).post(path, { url: `${rx.url}/x` }), 403);
    },
    T,
  );

  test(
    "receiver URLs: not http(s), credentials, over-long are 400; the 21st hook is 422",
    async () => {
      const { name } = await newRepo();
      const path = `/v1/orgs/acme/repos/${name}/webhooks`;
      expectError(await caller(server, owner).post(path, { url: "ftp://example.com/x" }), 400, "http:// or https://");
      expectError(await caller(server, owner).post(path, { url: "not a url" }), 400);
      expectError(await caller(server, owner).post(path, { url: `http://user:pw@127.0.0.1:${new URL(rx.url).port}/x` }), 400, "must not carry credentials");
      expectError(await caller(server, owner).post(path, { url: `${rx.url}/${"x".repeat(2100)}` }), 400, "longer than 2000");
      expectError(await caller(server, owner).post(path, {}), 400);
      for (let i = 0; i < 20; i++) expect((await caller(server, owner).post(path, { url: `${rx.url}/many${i}` })).status).toBe(201);
      expectError(await caller(server, owner).post(path, { url: `${rx.url}/one-too-many` }), 422, "at most 20 webhooks");
    },
    T,
  );
});

describe("push deliveries (SPEC §6.1 payloads)", () => {
  test(
    'git over HTTP: { via: "git" }, signed, with event and delivery headers; the attempt is listed',
    async () => {
      const repo = await newRepo();
      const h = await hook(repo.name, "/http");
      await pushFirst(repo.name);
      await rx.until(() => rx.of("/http").length === 1);
      const got = rx.of("/http")[0]!;
      expect(got.signed).toBe(true);
      expect(JSON.parse(got.raw)).toEqual({ event: "push", repo_id: repo.id, payload: { via: "git" } });
      expect(Object.keys(JSON.parse(got.raw))).toEqual(["event", "repo_id", "payload"]);
      expect(got.event).toBe("push");
      // The attempt is recorded once the receiver's answer is in.
      const list = await eventually(async () => {
        const r = await caller(server, owner).get(`/v1/orgs/acme/repos/${repo.name}/webhooks/${h.id}/deliveries`);
        return r.body.deliveries.length > 0 && r;
      });
      expect(list.status).toBe(200);
      expect(list.body.deliveries).toHaveLength(1);
      const d = list.body.deliveries[0];
      expect({ ...d, duration_ms: 0, delivered_at: 0 }).toEqual({
        id: got.delivery,
        event: "push",
        attempt: 1,
        status_code: 200,
        error: null,
        duration_ms: 0,
        delivered_at: 0,
      });
      const hooks = await caller(server, owner).get(`/v1/orgs/acme/repos/${repo.name}/webhooks`);
      expect(hooks.body.webhooks[0].last_delivery).toEqual(d);
    },
    T,
  );

  test(
    'git over SSH: { via: "ssh" }',
    async () => {
      const repo = await newRepo();
      await hook(repo.name, "/ssh");
      const key = await ws.keygen(`k-${repo.name}`, "ed25519");
      await registerKey(server, owner, "acme", key);
      const dir = await clone(g, repoUrl(server, "acme", repo.name, token));
      await commitFiles(g, dir, { "s.txt": "ssh\n" }, "over ssh");
      await g.ok(["push", "-q", sshUrl(server as never, "acme", repo.name), "HEAD:main"], { cwd: dir, env: gitSshEnv(key) });
      await rx.until(() => rx.of("/ssh").length === 1);
      const got = rx.of("/ssh")[0]!;
      expect(got.signed).toBe(true);
      expect(got.body).toEqual({ event: "push", repo_id: repo.id, payload: { via: "ssh" } });
    },
    T,
  );

  test(
    'the commit API: { via: "api", commit, branch }',
    async () => {
      const repo = await newRepo();
      await hook(repo.name, "/api");
      const r = await caller(server, token).post(`/v1/orgs/acme/repos/${repo.name}/commits`, {
        branch: "main",
        message: "by api",
        operations: [{ op: "put", path: "x.txt", content: "x\n" }],
      });
      expect(r.status).toBe(201);
      await rx.until(() => rx.of("/api").length === 1);
      const got = rx.of("/api")[0]!;
      expect(got.signed).toBe(true);
      expect(got.body).toEqual({ event: "push", repo_id: repo.id, payload: { via: "api", commit: r.body.commit, branch: "main" } });
    },
    T,
  );

  test(
    "a failing receiver: the attempt is recorded with its status and error; a redirect is not followed",
    async () => {
      const repo = await newRepo();
      const failing = await hook(repo.name, "/fail");
      const moving = await hook(repo.name, "/moved");
      rx.behave("/fail", { status: 503 });
      rx.behave("/moved", { redirect: `${rx.url}/redirect-target` });
      await pushFirst(repo.name);
      await rx.until(() => rx.of("/fail").length === 1 && rx.of("/moved").length === 1);
      const attempts = (id: string) =>
        eventually(async () => {
          const r = await caller(server, owner).get(`/v1/orgs/acme/repos/${repo.name}/webhooks/${id}/deliveries`);
          return r.body.deliveries.length > 0 && r.body.deliveries;
        });
      const [f] = await attempts(failing.id);
      expect({ attempt: f.attempt, status_code: f.status_code, error: f.error }).toEqual({ attempt: 1, status_code: 503, error: "receiver answered HTTP 503" });
      const [m] = await attempts(moving.id);
      expect({ attempt: m.attempt, status_code: m.status_code, error: m.error }).toEqual({
        attempt: 1,
        status_code: 302,
        error: "receiver redirected (HTTP 302); redirects are not followed",
      });
      expect(rx.of("/redirect-target")).toHaveLength(0);
    },
    T,
  );

  test(
    "an endless answer is cut at the cap and counts as delivered",
    async () => {
      const repo = await newRepo();
      const h = await hook(repo.name, "/endless");
      rx.behave("/endless", { endless: true });
      await pushFirst(repo.name);
      await rx.until(() => rx.of("/endless").length === 1);
      const d = await eventually(
        async () => (await caller(server, owner).get(`/v1/orgs/acme/repos/${repo.name}/webhooks/${h.id}/deliveries`)).body.deliveries[0],
      );
      expect({ status_code: d.status_code, error: d.error }).toEqual({ status_code: 200, error: null });
      expect(d.duration_ms).toBeLessThan(10_000);
    },
    T,
  );
});

describe("change deliveries (SPEC §6.1 payloads)", () => {
  test(
    "a landed change and an ejected one are delivered, signed, in event order after the pushes that made them",
    async () => {
      const repo = await newRepo();
      await hook(repo.name, "/changes");
      const dir = await pushFirst(repo.name);
      const url = repoUrl(server, "acme", repo.name, token);
      await g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
      const head = await commitFiles(g, dir, { "b.txt": "two\n" }, "feature");
      await g.ok(["push", "-q", url, "feature"], { cwd: dir });
      const api = caller(server, owner);
      const opened = await api.post(`/v1/orgs/acme/repos/${repo.name}/changes`, { title: "adds b", branch: "feature" });
      expect(opened.status).toBe(201);
      expect((await api.post(`/v1/orgs/acme/repos/${repo.name}/changes/${opened.body.number}/land`)).status).toBe(202);
      await rx.until(() => rx.of("/changes").some((r) => r.event === "change.landed"));
      const landed = rx.of("/changes").find((r) => r.event === "change.landed")!;
      expect(landed.signed).toBe(true);
      expect(JSON.parse(landed.raw)).toEqual({
        event: "change.landed",
        repo_id: repo.id,
        payload: { change: opened.body.number, commit: head, branch: "main", patchset: 1 },
      });
      // A change that cannot land (the same file changed on both sides) is ejected with its verdict.
      await g.ok(["checkout", "-q", "-B", "clash", head], { cwd: dir });
      await commitFiles(g, dir, { "b.txt": "mine\n" }, "clash");
      await g.ok(["push", "-q", url, "clash"], { cwd: dir });
      await g.ok(["checkout", "-q", "-B", "main", head], { cwd: dir });
      await commitFiles(g, dir, { "b.txt": "theirs\n" }, "moves main");
      await g.ok(["push", "-q", url, "main"], { cwd: dir });
      const clash = await api.post(`/v1/orgs/acme/repos/${repo.name}/changes`, { title: "clashes", branch: "clash" });
      expect(clash.status).toBe(201);
      expect((await api.post(`/v1/orgs/acme/repos/${repo.name}/changes/${clash.body.number}/land`)).status).toBe(202);
      await rx.until(() => rx.of("/changes").some((r) => r.event === "change.ejected"));
      const ejected = JSON.parse(rx.of("/changes").find((r) => r.event === "change.ejected")!.raw);
      expect(ejected).toMatchObject({ event: "change.ejected", repo_id: repo.id, payload: { change: clash.body.number } });
      expect(ejected.payload.verdict).toBeDefined();
      // Order per hook follows event order: push, push (feature), landed, pushes, ejected.
      const events = rx.of("/changes").map((r) => r.event);
      expect(events.indexOf("change.landed")).toBeLessThan(events.indexOf("change.ejected"));
      expect(events.slice(0, 2)).toEqual(["push", "push"]);
    },
    T,
  );
});

describe("order and durability", () => {
  test(
    "each hook gets a repository's events in order, a slow hook holding only itself back",
    async () => {
      const repo = await newRepo();
      await hook(repo.name, "/fast");
      await hook(repo.name, "/slow");
      let release!: () => void;
      rx.behave("/slow", { hold: new Promise<void>((r) => (release = r)) });
      const commits: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await caller(server, token).post(`/v1/orgs/acme/repos/${repo.name}/commits`, {
          branch: "main",
          message: `c${i}`,
          operations: [{ op: "put", path: "n.txt", content: `${i}\n` }],
        });
        commits.push(r.body.commit);
      }
      await rx.until(() => rx.of("/fast").length === 6 && rx.of("/slow").length === 1);
      expect(rx.of("/fast").map((r) => r.body.payload.commit)).toEqual(commits);
      expect(rx.of("/slow").map((r) => r.body.payload.commit)).toEqual([commits[0]]);
      rx.behave("/slow", null);
      release();
      await rx.until(() => rx.of("/slow").length === 6);
      expect(rx.of("/slow").map((r) => r.body.payload.commit)).toEqual(commits);
      expect(rx.received.filter((r) => r.path === "/slow" || r.path === "/fast").every((r) => r.signed)).toBe(true);
    },
    T,
  );

  test(
    "a restart loses no pending delivery: the held one is sent again (same delivery id), the rest follow in order",
    async () => {
      const dataDir = (await import("node:fs")).mkdtempSync(`${(await import("node:os")).tmpdir()}/svc-hooks-restart-`);
      let first = await startServer({ dataDir, env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1" } });
      try {
        const o = await person(first, "keep", "owner@keep.test", "owner");
        const tok = (await caller(first, o).post("/v1/orgs/keep/tokens", { scopes: ["repo:write"], label: "t" })).body.token;
        expect((await caller(first, o).post("/v1/orgs/keep/repos", { name: "r" })).status).toBe(201);
        const h = await caller(first, o).post("/v1/orgs/keep/repos/r/webhooks", { url: `${rx.url}/restart` });
        rx.secret("/restart", h.body.secret);
        let release!: () => void;
        rx.behave("/restart", { hold: new Promise<void>((r) => (release = r)) });
        const commits: string[] = [];
        for (let i = 0; i < 4; i++) {
          const r = await caller(first, tok).post("/v1/orgs/keep/repos/r/commits", {
            branch: "main",
            message: `c${i}`,
            operations: [{ op: "put", path: "n.txt", content: `${i}\n` }],
          });
          commits.push(r.body.commit);
        }
        await rx.until(() => rx.of("/restart").length === 1);
        expect(await first.stop()).toBe(0);
        rx.behave("/restart", null);
        release();
        first = await startServer({ dataDir, env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1" } });
        await rx.until(() => new Set(rx.of("/restart").map((r) => r.delivery)).size === 4);
        const got = rx.of("/restart");
        // The first was cut off by the stop and sent again; each event arrives, in order, each signed.
        expect(got[0]!.delivery).toBe(got[1]!.delivery);
        expect(got.slice(1).map((r) => r.body.payload.commit)).toEqual(commits);
        expect(got.every((r) => r.signed)).toBe(true);
      } finally {
        await first[Symbol.asyncDispose]();
        (await import("node:fs")).rmSync(dataDir, { recursive: true, force: true });
      }
    },
    T,
  );
});

describe("receivers on private addresses (DECISIONS §4)", () => {
  test(
    "refused at creation unless SVC_WEBHOOK_ALLOW_PRIVATE=1: loopback, private, link-local metadata, IPv6 loopback, a name resolving to loopback",
    async () => {
      await using strict = await startServer();
      const o = await person(strict, "strict", "owner@strict.test", "owner");
      expect((await caller(strict, o).post("/v1/orgs/strict/repos", { name: "r" })).status).toBe(201);
      const path = "/v1/orgs/strict/repos/r/webhooks";
      expectError(await caller(strict, o).post(path, { url: `${rx.url}/x` }), 400, "127.0.0.1, a loopback address");
      expectError(await caller(strict, o).post(path, { url: "http://10.1.2.3/x" }), 400, "private address");
      expectError(await caller(strict, o).post(path, { url: "http://169.254.169.254/latest/meta-data/" }), 400, "link-local");
      expectError(await caller(strict, o).post(path, { url: "http://[::1]:8080/x" }), 400, "loopback");
      expectError(await caller(strict, o).post(path, { url: "http://[::ffff:127.0.0.1]/x" }), 400, "loopback");
      // Issue 25 row 12: the IPv4-translated form (::ffff:0:0:0/96) and other special-purpose IPv6 blocks.
      expectError(await caller(strict, o).post(path, { url: "http://[::ffff:0:7f00:1]/" }), 400, "IPv4-translated");
      expectError(await caller(strict, o).post(path, { url: "http://[64:ff9b:1::a00:1]/" }), 400, "translation");
      expectError(await caller(strict, o).post(path, { url: "http://[5f00::1]/" }), 400, "segment routing");
      expectError(await caller(strict, o).post(path, { url: "http://localhost:9/x" }), 400, "loopback");
      expectError(await caller(strict, o).post(path, { url: "http://0x7f000001/x" }), 400, "loopback");
    },
    T,
  );
});
