// Forks through the real git client (SPEC §2.1 fork fields, DECISIONS §3): POST …/forks answers
// 202 pending and the fork becomes ready; the fork clones like its parent and takes pushes that
// do not touch the parent; forks of forks work; forking copies no pack bytes; GC on either side
// leaves both clonable; deleting the parent leaves the fork whole (fork_parent null, fsck clean);
// visibility and bad input are refused with nothing changed; a failed fork is deleted and retried.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { clone, commitFiles, fsck, gitSandbox, initRepo, lsRemote, repoUrl, setupOwner, type OrgOwner } from "../../helpers/git.ts";
import { client, createUser, login, startServer, type RunningServer } from "../../helpers/server.ts";
import { startStandin, type Standin } from "../../helpers/stripe-standin.ts";
import { dbRows, until } from "../ci/helpers.ts";

setDefaultTimeout(120_000);

let server: RunningServer;
/** Owner of org `up` (the parents live there). */
let up: OrgOwner;
/** A person with their own namespace `dana`, outside `up`. */
let dana: { cookie: string; handle: string };
/** A third person, in neither. */
let eve: { cookie: string };
const g = gitSandbox("svc-forks-");

/** A signed-in person's JSON client (a session needs an Origin on writes). */
const as = (who: { cookie: string }) => {
  const c = client(server, { cookie: who.cookie });
  return { ...c, post: (p: string, b?: unknown) => c.post(p, b, { origin: server.url }), delete: (p: string) => c.delete(p, { origin: server.url }) };
};

/** Waits until the fork leaves `pending`; answers its body. */
async function settled(path: string, who: { cookie: string }): Promise<any> {
  return until(`${path} to leave pending`, async () => {
    const r = await as(who).get(path);
    return r.status === 200 && r.body.fork_state !== "pending" ? r.body : null;
  });
}

/** Bytes stored under `repos/` (every pack of every repository). */
function storedBytes(): number {
  const root = join(server.dataDir, "objects", "repos");
  let n = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else n += statSync(join(d, e.name)).size;
    }
  };
  if (existsSync(root)) walk(root);
  return n;
}

function packFilesOf(repoId: string): string[] {
  const d = join(server.dataDir, "objects", "repos", repoId, "packs");
  return existsSync(d) ? readdirSync(d) : [];
}

let parentHead: string;

beforeAll(async () => {
  server = await startServer();
  up = await setupOwner(server, "up");
  const d = await createUser(server, { org: "danaco", email: "dana@example.com", handle: "dana" });
  dana = { cookie: await login(server, "dana@example.com", d.password), handle: "dana" };
  await createUser(server, { org: "evecorp", email: "eve@example.com", handle: "eve" });
  eve = { cookie: await login(server, "eve@example.com", "correct horse battery staple") };

  const api = client(server, { token: up.token });
  expect((await api.post("/v1/orgs/up/repos", { name: "lib", public: true, description: "the library" })).status).toBe(201);
  expect((await api.post("/v1/orgs/up/repos", { name: "secret" })).status).toBe(201);
  const work = await initRepo(g, "lib");
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: work });
  for (let i = 0; i < 3; i++) await commitFiles(g, work, { [`f${i}.txt`]: `${i}\n`.repeat(100) }, `c${i}`);
  await g.ok(["tag", "v1"], { cwd: work });
  parentHead = await g.ok(["rev-parse", "HEAD"], { cwd: work });
  await g.ok(["push", "-q", repoUrl(server, "up", "lib", up.token), "main", "v1"], { cwd: work });
  await g.ok(["push", "-q", repoUrl(server, "up", "secret", up.token), "main"], { cwd: work });
});

afterAll(async () => {
  await server.stop();
  g[Symbol.dispose]();
});

describe("forking", () => {
  test("202 pending, then ready; the fork clones with the parent's branches and tags and copies no pack bytes", async () => {
    const before = storedBytes();
    const r = await as(dana).post("/v1/orgs/up/repos/lib/forks", {});
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({
      org: "dana",
      name: "lib",
      public: true,
      kind: "native",
      default_branch: "main",
      description: "the library",
      fork_parent: "up/lib",
      fork_count: 0,
    });
    expect(["pending", "ready"]).toContain(r.body.fork_state);
    const fork = await settled("/v1/orgs/dana/repos/lib", dana);
    expect(fork.fork_state).toBe("ready");
    // No object data was copied: the fork's pack list names the parent's files.
    expect(storedBytes()).toBe(before);
    expect(packFilesOf(fork.id)).toEqual([]);
    const refs = await lsRemote(g, repoUrl(server, "dana", "lib"));
    expect(refs).toMatchObject({ "refs/heads/main": parentHead, "refs/tags/v1": parentHead });
    const dir = await clone(g, repoUrl(server, "dana", "lib"));
    expect((await fsck(g, dir)).code).toBe(0);
    expect(await g.ok(["rev-parse", "HEAD"], { cwd: dir })).toBe(parentHead);
    // The parent counts its public direct fork.
    expect((await client(server).get("/v1/orgs/up/repos/lib")).body.fork_count).toBe(1);
    // A repository that is not a fork has no fork_state at all (SPEC §2.1).
    expect("fork_state" in (await client(server).get("/v1/orgs/up/repos/lib")).body).toBe(false);
  });

  test("a push to the fork lands in the fork only", async () => {
    const dir = await clone(g, repoUrl(server, "dana", "lib"), [], {});
    const token = (await as(dana).post("/v1/orgs/dana/tokens", { scopes: ["repo:write"], label: "push" })).body.token;
    const head = await commitFiles(g, dir, { "fork-only.txt": "mine\n" }, "fork work");
    await g.ok(["push", "-q", repoUrl(server, "dana", "lib", token), "HEAD:main"], { cwd: dir });
    expect((await lsRemote(g, repoUrl(server, "dana", "lib")))["refs/heads/main"]).toBe(head);
    expect((await lsRemote(g, repoUrl(server, "up", "lib")))["refs/heads/main"]).toBe(parentHead);
    const again = await clone(g, repoUrl(server, "dana", "lib"));
    expect(await g.ok(["log", "--format=%s", "-1"], { cwd: again })).toBe("fork work");
    expect((await fsck(g, again)).code).toBe(0);
  });

  test("a fork of a fork, into an org with another name", async () => {
    const r = await as(dana).post("/v1/orgs/dana/repos/lib/forks", { org: "dana", name: "lib-2" });
    expect(r.status).toBe(202);
    const f2 = await settled("/v1/orgs/dana/repos/lib-2", dana);
    expect(f2).toMatchObject({ fork_state: "ready", fork_parent: "dana/lib", name: "lib-2" });
    const dir = await clone(g, repoUrl(server, "dana", "lib-2"));
    expect(await g.ok(["log", "--format=%s", "-1"], { cwd: dir })).toBe("fork work");
    expect((await fsck(g, dir)).code).toBe(0);
    expect(packFilesOf(f2.id)).toEqual([]);
  });

  test("svc gc on the parent and on the forks leaves every one clonable and fsck clean", async () => {
    // More packs in the parent, so GC has work to do on both sides.
    const api = client(server, { token: up.token });
    expect((await api.post("/v1/orgs/up/repos/lib/commits", { message: "api", operations: [{ op: "put", path: "api.txt", content: "x\n" }] })).status).toBe(
      201,
    );
    for (const name of ["up/lib", "dana/lib", "dana/lib-2"]) {
      const r = await server.cli(["gc", "--repo", name]);
      expect(r.code).toBe(0);
    }
    for (const [org, name] of [
      ["up", "lib"],
      ["dana", "lib"],
      ["dana", "lib-2"],
    ] as const) {
      const dir = await clone(g, repoUrl(server, org, name, org === "up" ? up.token : undefined));
      expect((await fsck(g, dir)).code).toBe(0);
    }
    const check = await server.cli(["fsck"]);
    expect(check.stderr).toContain("0 with problems, 0 orphan files");
    expect(check.code).toBe(0);
  });

  test("deleting the parent leaves the fork whole: fork_parent null, clonable, svc fsck clean", async () => {
    const api = client(server, { token: up.token });
    expect((await api.post("/v1/orgs/up/repos", { name: "short-lived", public: true })).status).toBe(201);
    const work = await initRepo(g, "short");
    const head = await commitFiles(g, work, { "a.txt": "a\n".repeat(1000) }, "only");
    await g.ok(["push", "-q", repoUrl(server, "up", "short-lived", up.token), "HEAD:refs/heads/main"], { cwd: work });
    const short = (await api.get("/v1/orgs/up/repos/short-lived")).body;
    expect((await as(dana).post("/v1/orgs/up/repos/short-lived/forks", {})).status).toBe(202);
    await settled("/v1/orgs/dana/repos/short-lived", dana);
    const parentFiles = packFilesOf(short.id);
    expect(parentFiles.length).toBeGreaterThan(0);

    expect((await api.delete("/v1/orgs/up/repos/short-lived")).status).toBe(204);
    const fork = (await as(dana).get("/v1/orgs/dana/repos/short-lived")).body;
    expect(fork).toMatchObject({ fork_parent: null, fork_state: "ready" });
    // The purge job runs; it must keep the files the fork still names. Wait for the purge job's row to finish.
    await until(
      "the purge job",
      () => dbRows<{ n: number }>(server, "select count(*) as n from jobs where kind = 'repo.purge' and done_at is null")[0]!.n === 0,
    );
    expect(packFilesOf(short.id)).toEqual(parentFiles);
    const dir = await clone(g, repoUrl(server, "dana", "short-lived"));
    expect(await g.ok(["rev-parse", "HEAD"], { cwd: dir })).toBe(head);
    expect((await fsck(g, dir)).code).toBe(0);
    const check = await server.cli(["fsck", "--repo", "dana/short-lived"]);
    expect(check.code).toBe(0);
    const all = await server.cli(["fsck"]);
    expect(all.code).toBe(0);
    expect(all.stderr).toContain("0 with problems, 0 orphan files");
  });
});

describe("visibility and authority", () => {
  test("fork_parent only when the viewer may see the parent; private forks are not counted", async () => {
    // up's owner forks the private repository into up under another name: a private fork.
    const api = client(server, { token: up.token });
    // Its token is bound to up: without `org` the fork would go to the owner's personal namespace, which it cannot reach.
    expect((await api.post("/v1/orgs/up/repos/secret/forks", { name: "secret-fork" })).status).toBe(404);
    const r = await api.post("/v1/orgs/up/repos/secret/forks", { org: "up", name: "secret-fork" });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ public: false, fork_parent: "up/secret" });
    await until("the private fork", async () => (await api.get("/v1/orgs/up/repos/secret-fork")).body.fork_state === "ready");
    expect((await api.get("/v1/orgs/up/repos/secret")).body.fork_count).toBe(0);
    // Made public, the fork is visible to anyone, but its private parent is not named to them.
    expect((await api.patch("/v1/orgs/up/repos/secret-fork", { public: true })).status).toBe(200);
    expect((await client(server).get("/v1/orgs/up/repos/secret-fork")).body.fork_parent).toBeNull();
    expect((await as(eve).get("/v1/orgs/up/repos/secret-fork")).body.fork_parent).toBeNull();
    expect((await api.get("/v1/orgs/up/repos/secret-fork")).body.fork_parent).toBe("up/secret");
    // Now a public direct fork: counted.
    expect((await api.get("/v1/orgs/up/repos/secret")).body.fork_count).toBe(1);
  });

  test("a source the caller may not read is a masked 404 (401 anonymous), exactly like a missing one; nothing is created", async () => {
    const hidden = await as(eve).post("/v1/orgs/up/repos/secret/forks", {});
    const missing = await as(eve).post("/v1/orgs/up/repos/no-such/forks", {});
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(missing.body);
    expect((await client(server).post("/v1/orgs/up/repos/secret/forks", {})).status).toBe(401);
    // Anonymous callers cannot own a fork, even of a public repository.
    expect((await client(server).post("/v1/orgs/up/repos/lib/forks", {})).status).toBe(401);
    expect((await as(eve).get("/v1/orgs/evecorp/repos/secret")).status).toBe(404);
  });

  test("the target namespace needs permission to create repositories there", async () => {
    // eve may read up/lib (public) but is no member of dana's namespace: masked like the org.
    const r = await as(eve).post("/v1/orgs/up/repos/lib/forks", { org: "dana", name: "eve-was-here" });
    expect(r.status).toBe(404);
    // A viewer of up may not create repositories in up.
    const viewer = await setupOwner(server, "up", "viewer");
    const v = await client(server, { token: viewer.token }).post("/v1/orgs/up/repos/lib/forks", { org: "up", name: "viewer-fork" });
    expect(v.status).toBe(403);
    expect((await client(server, { token: up.token }).get("/v1/orgs/up/repos/viewer-fork")).status).toBe(404);
    expect((await as(dana).get("/v1/orgs/dana/repos/eve-was-here")).status).toBe(404);
  });

  test("bad input: a taken name 409, a bad name or type 400, a missing namespace 404; nothing created", async () => {
    const count = () => dbRows<{ n: number }>(server, "select count(*) as n from repos")[0]!.n;
    const n = count();
    const taken = await as(dana).post("/v1/orgs/up/repos/lib/forks", {});
    expect(taken.status).toBe(409);
    expect(taken.body.error).toContain("dana/lib already exists");
    expect((await as(dana).post("/v1/orgs/up/repos/lib/forks", { name: "bad name!" })).status).toBe(400);
    expect((await as(dana).post("/v1/orgs/up/repos/lib/forks", { name: "x.git" })).status).toBe(400);
    expect((await as(dana).post("/v1/orgs/up/repos/lib/forks", { name: 7 })).status).toBe(400);
    expect((await as(dana).post("/v1/orgs/up/repos/lib/forks", { org: "nowhere-at-all" })).status).toBe(404);
    expect(count()).toBe(n);
  });
});

describe("failure and retry", () => {
  test("a fork whose parent lost a pack fails visibly; deleted and retried once storage is whole, it is ready", async () => {
    const api = client(server, { token: up.token });
    expect((await api.post("/v1/orgs/up/repos", { name: "fragile", public: true })).status).toBe(201);
    expect((await api.post("/v1/orgs/up/repos/fragile/commits", { message: "one", operations: [{ op: "put", path: "a", content: "a\n" }] })).status).toBe(201);
    const fragile = (await api.get("/v1/orgs/up/repos/fragile")).body;
    const packs = join(server.dataDir, "objects", "repos", fragile.id, "packs");
    const idx = readdirSync(packs).find((f) => f.endsWith(".idx"))!;
    // Storage damage: the parent's index goes missing (moved aside, to be put back).
    renameSync(join(packs, idx), join(server.dataDir, "aside.idx"));
    expect((await as(dana).post("/v1/orgs/up/repos/fragile/forks", {})).status).toBe(202);
    const failed = await settled("/v1/orgs/dana/repos/fragile", dana);
    expect(failed.fork_state).toBe("failed");
    // Forking a failed fork is refused; so is a second fork under the taken name.
    expect((await as(dana).post("/v1/orgs/dana/repos/fragile/forks", { name: "fragile-2" })).status).toBe(409);
    expect((await as(dana).post("/v1/orgs/up/repos/fragile/forks", {})).status).toBe(409);

    renameSync(join(server.dataDir, "aside.idx"), join(packs, idx));
    expect((await as(dana).delete("/v1/orgs/dana/repos/fragile")).status).toBe(204);
    expect((await as(dana).post("/v1/orgs/up/repos/fragile/forks", {})).status).toBe(202);
    expect((await settled("/v1/orgs/dana/repos/fragile", dana)).fork_state).toBe("ready");
    const dir = await clone(g, repoUrl(server, "dana", "fragile"));
    expect((await fsck(g, dir)).code).toBe(0);
  });
});

describe("quotas", () => {
  let standin: Standin;
  let billed: RunningServer;
  afterAll(async () => {
    await billed?.stop();
    await standin?.stop();
  });

  test("forking a private repository into an org without a subscription is 402 quota; a public one is fine", async () => {
    standin = startStandin();
    billed = await startServer({
      env: {
        SVC_BILLING_PROVIDER: "stripe",
        SVC_STRIPE_SECRET_KEY: "sk_test_standin",
        SVC_STRIPE_WEBHOOK_SECRET: "whsec_forks",
        SVC_STRIPE_PRICE_ID: "price_seat",
        SVC_STRIPE_API_BASE: standin.url,
      },
    });
    const u = await createUser(billed, { org: "acme", email: "pat@example.com", handle: "pat" });
    const cookie = await login(billed, "pat@example.com", u.password);
    const c = client(billed, { cookie });
    const post = (p: string, b: unknown) => c.post(p, b, { origin: billed.url });
    // A personal namespace is not billed: a private repository there is free.
    expect((await post("/v1/orgs/pat/repos", { name: "mine" })).status).toBe(201);
    expect((await post("/v1/orgs/pat/repos", { name: "open", public: true })).status).toBe(201);
    const refused = await post("/v1/orgs/pat/repos/mine/forks", { org: "acme" });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatch(/^quota: /);
    expect((await c.get("/v1/orgs/acme/repos/mine")).status).toBe(404);
    expect((await post("/v1/orgs/pat/repos/open/forks", { org: "acme" })).status).toBe(202);
  });
});
