// Reachability is the boundary (issue 25 row 1; docs/architecture.md): an object is readable
// through a repository only when the repository's refs (or, for readers of a change, an open
// change's patchsets) reach it. Reproduces the leak with the real git client: a private fork of a
// public repository holds an unrelated secret branch, a change from the fork lands into the public
// parent, and then every read path of the parent is asked for the secret commit anonymously, by
// full and abbreviated id: API blob, tree, commits (by ref and by cursor), commit, compare, the
// web pages (tree, blob, raw, commit, commits), git fetch over protocol v0 and v2 (with
// allow-reachable-sha1-in-want, as git uses it, and as a bare want), v2 object-info; 4,096
// anonymous 4-hex lookups find nothing. The parent's deleted branch is not readable through a fork
// (reads, ref API, a crafted push naming its blob), nor one fork's objects through another.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  commitFiles,
  emptyPack,
  gitSandbox,
  initRepo,
  packObjects,
  parsePkts,
  pkt,
  FLUSH,
  postReceivePack,
  receivePackBody,
  repoUrl,
  basicAuth,
  ZERO_OID,
  mintTokenWithId,
} from "../../helpers/git.ts";
import { caller, person, type Person } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { dbRows, until } from "../ci/helpers.ts";

setDefaultTimeout(240_000);

let server: RunningServer;
const g = gitSandbox("svc-reach-");
/** Owns org `pub` and its public repository `pub/lib`. */
let owner: Person;
let ownerToken: string;
/** Forks `pub/lib` into `danaco/lib` and makes the fork private. */
let dana: Person;
let danaToken: string;
/** Another person who forks `pub/lib` later (`erinco/lib`). */
let erin: Person;

let work: string;
/** The parent's main before the landing. */
let main0: string;
/** A branch the parent pushed and then deleted (its commit and blob stay in the parent's packs). */
let leak: { commit: string; blob: string };
/** The fork's unrelated branch: never proposed, never landed. */
let secret: { commit: string; tree: string; blob: string };
/** The change's head, landed into the parent. */
let topic: string;

const anon = () => caller(server);
const api = (org: string, repo: string) => `/v1/orgs/${org}/repos/${repo}`;
const NOWHERE = "0123456789abcdef0123456789abcdef01234567";
const DELIM = new TextEncoder().encode("0001");

/** Status and body of an anonymous (or authenticated) page. */
async function page(path: string, token?: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${server.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, redirect: "manual" });
  return { status: r.status, text: await r.text() };
}

/** The answer for `sha` with the id itself masked, to compare with the answer for an id nobody has. */
function masked(r: { status: number; body?: unknown; text?: string }, sha: string) {
  const text = (r.text ?? JSON.stringify(r.body)).replaceAll(sha, "SHA").replaceAll(sha.slice(0, 7), "SHA7");
  return { status: r.status, text };
}

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "pub", "owner@pub.example.com", "owner", { handle: "pubowner" });
  dana = await person(server, "danaco", "dana@example.com", "owner", { handle: "dana" });
  erin = await person(server, "erinco", "erin@example.com", "owner", { handle: "erin" });
  ownerToken = (await mintTokenWithId(server, owner.cookie, "pub", { scopes: ["repo:write"], label: "t" })).token;
  danaToken = (await mintTokenWithId(server, dana.cookie, "danaco", { scopes: ["repo:write"], label: "t" })).token;
  expect((await caller(server, ownerToken).post("/v1/orgs/pub/repos", { name: "lib", public: true })).status).toBe(201);

  work = await initRepo(g, "lib");
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: work });
  for (let i = 0; i < 3; i++) await commitFiles(g, work, { [`f${i}.txt`]: `${i}\n` }, `c${i}`);
  main0 = await g.ok(["rev-parse", "HEAD"], { cwd: work });
  const parentUrl = repoUrl(server, "pub", "lib", ownerToken);
  await g.ok(["push", "-q", parentUrl, "main"], { cwd: work });

  // The parent's deleted branch: pushed, then deleted; its objects stay in the parent's packs.
  await g.ok(["checkout", "-q", "-b", "leak", main0], { cwd: work });
  leak = { commit: await commitFiles(g, work, { "leaked.txt": "an API key pushed by mistake\n" }, "oops"), blob: "" };
  leak.blob = await g.ok(["rev-parse", "HEAD:leaked.txt"], { cwd: work });
  await g.ok(["push", "-q", parentUrl, "leak"], { cwd: work });
  await g.ok(["push", "-q", parentUrl, ":leak"], { cwd: work });

  // Dana's fork, made private, with a topic branch and an unrelated secret branch.
  expect((await caller(server, dana).post(`${api("pub", "lib")}/forks`, { org: "danaco", name: "lib" })).status).toBe(202);
  await until("the fork to be ready", async () => (await caller(server, dana).get(api("danaco", "lib"))).body.fork_state === "ready");
  expect((await caller(server, dana).patch(api("danaco", "lib"), { public: false })).status).toBe(200);
  const forkUrl = repoUrl(server, "danaco", "lib", danaToken);
  await g.ok(["checkout", "-q", "-b", "secret", main0], { cwd: work });
  secret = { commit: await commitFiles(g, work, { "secret.txt": "the private fork's secret\n" }, "secret work"), tree: "", blob: "" };
  secret.tree = await g.ok(["rev-parse", "HEAD^{tree}"], { cwd: work });
  secret.blob = await g.ok(["rev-parse", "HEAD:secret.txt"], { cwd: work });
  await g.ok(["push", "-q", forkUrl, "secret"], { cwd: work });
  await g.ok(["checkout", "-q", "-b", "topic", main0], { cwd: work });
  topic = await commitFiles(g, work, { "feature.txt": "proposed upstream\n" }, "a feature");
  await g.ok(["push", "-q", forkUrl, "topic"], { cwd: work });

  // Dana proposes topic; the parent's owner lands it (a fast-forward).
  const c = await caller(server, dana).post(`${api("pub", "lib")}/changes`, { title: "feature", branch: "topic", source: { org: "danaco", repo: "lib" } });
  expect(c.status).toBe(201);
  expect((await caller(server, ownerToken).post(`${api("pub", "lib")}/changes/${c.body.number}/land`)).status).toBe(202);
  await until("the change to land", async () => (await anon().get(`${api("pub", "lib")}/changes/${c.body.number}`)).body.state === "landed");
});
afterAll(async () => {
  await server?.stop();
  g[Symbol.dispose]();
});

describe("after landing a change from a private fork into its public parent", () => {
  test("the landing brought a pack of its own: the parent lists none of the fork's packs", async () => {
    const [parent, fork] = ["pub", "danaco"].map(
      (org) => dbRows<{ id: string }>(server, "SELECT r.id FROM repos r JOIN orgs o ON o.id = r.org_id WHERE o.name = ? AND r.name = 'lib'", org)[0]!.id,
    );
    const storages = dbRows<{ storage_repo_id: string }>(server, "SELECT storage_repo_id FROM packs WHERE repo_id = ? AND replaced_at IS NULL", parent!);
    expect(storages.length).toBeGreaterThan(0);
    expect(storages.every((p) => p.storage_repo_id === parent)).toBe(true);
    expect(fork).not.toBe(parent);
    // What landed is readable, anonymously, by full and abbreviated id.
    expect((await anon().get(`${api("pub", "lib")}/commits/${topic}`)).status).toBe(200);
    expect((await anon().get(`${api("pub", "lib")}/commits/${topic.slice(0, 7)}`)).body.sha).toBe(topic);
  });

  test("API reads of the secret commit by full and abbreviated id answer the 404 of an id nobody has", async () => {
    const p = api("pub", "lib");
    for (const sha of [secret.commit, leak.commit]) {
      for (const id of [sha, sha.slice(0, 7), sha.slice(0, 12)]) {
        const cases: [string, string][] = [
          [`${p}/commits/${id}`, `${p}/commits/${NOWHERE.slice(0, id.length)}`],
          [`${p}/commits/${id}~0`, `${p}/commits/${NOWHERE.slice(0, id.length)}~0`],
          [`${p}/tree/${id}`, `${p}/tree/${NOWHERE.slice(0, id.length)}`],
          [`${p}/commits?ref=${id}`, `${p}/commits?ref=${NOWHERE.slice(0, id.length)}`],
          [`${p}/compare/main...${id}`, `${p}/compare/main...${NOWHERE.slice(0, id.length)}`],
        ];
        for (const [secretPath, nowherePath] of cases) {
          const [a, b] = [await anon().get(secretPath), await anon().get(nowherePath)];
          expect({ path: secretPath, ...masked(a, id) }).toEqual({ path: secretPath, ...masked(b, NOWHERE.slice(0, id.length)) });
          expect(a.status).toBe(404);
        }
        const blob = await fetch(`${server.url}${p}/blob/${id}?path=secret.txt`);
        expect(blob.status).toBe(404);
      }
    }
    // A history cursor naming the secret commit is held to the same rule.
    const cursor = Buffer.from(JSON.stringify([secret.commit, 0])).toString("base64url");
    expect((await anon().get(`${p}/commits?cursor=${cursor}`)).status).toBe(404);
    // The owner of the parent, signed in, sees no more through it.
    expect((await caller(server, ownerToken).get(`${p}/commits/${secret.commit}`)).status).toBe(404);
    expect((await caller(server, ownerToken).get(`${p}/commits/${secret.commit.slice(0, 4)}`)).status).toBe(404);
  });

  test("web pages (tree, blob, raw, commit, commits) answer the same 404 page as an id nobody has", async () => {
    for (const id of [secret.commit, secret.commit.slice(0, 7)]) {
      const none = NOWHERE.slice(0, id.length);
      for (const [a, b] of [
        [`/pub/lib/tree/${id}`, `/pub/lib/tree/${none}`],
        [`/pub/lib/blob/${id}/secret.txt`, `/pub/lib/blob/${none}/secret.txt`],
        [`/pub/lib/raw/${id}/secret.txt`, `/pub/lib/raw/${none}/secret.txt`],
        [`/pub/lib/commit/${id}`, `/pub/lib/commit/${none}`],
        [`/pub/lib/commits/${id}`, `/pub/lib/commits/${none}`],
      ]) {
        const [x, y] = [await page(a!), await page(b!)];
        expect(x.status).toBe(404);
        expect(x.text).not.toContain("the private fork's secret");
        expect(masked(x, id)).toEqual(masked(y, none));
      }
    }
  });

  test("4,096 anonymous 4-hex lookups (every one sharing the secret's first digit) find nothing; 7 digits find the landed commit", async () => {
    const first = secret.commit[0]!;
    const prefixes = Array.from({ length: 4096 }, (_, i) => `${first}${i.toString(16).padStart(3, "0")}`);
    expect(prefixes).toContain(secret.commit.slice(0, 4));
    const statuses = new Map<number, number>();
    for (let i = 0; i < prefixes.length; i += 16) {
      const batch = await Promise.all(prefixes.slice(i, i + 16).map(async (x) => (await anon().get(`${api("pub", "lib")}/commits/${x}`)).status));
      for (const s of batch) statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 404: 4096 });
    const short = await anon().get(`${api("pub", "lib")}/commits/${topic.slice(0, 4)}`);
    expect(short.status).toBe(404);
    expect(short.body.error).toContain("at least 7 hex digits");
    // Signed in, git's own minimum of 4 digits works for what the caller may read.
    expect((await caller(server, erin).get(`${api("pub", "lib")}/commits/${topic.slice(0, 4)}`)).body.sha).toBe(topic);
  });

  test("git fetch of the secret commit fails over v0 and v2; an unadvertised reachable commit is fetched", async () => {
    const url = `${server.url}/pub/lib.git`;
    for (const version of ["0", "2"]) {
      const dir = g.path(`fetch-v${version}`);
      await g.ok(["init", "-q", "--bare", dir]);
      const env = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "protocol.version", GIT_CONFIG_VALUE_0: version };
      for (const sha of [secret.commit, leak.commit]) {
        const r = await g.run(["fetch", "-q", url, sha], { cwd: dir, env });
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/not our ref|unadvertised object/);
      }
      // main~1 is no ref's target: git asks for it as an unadvertised object (allow-reachable-sha1-in-want).
      const parent = await g.ok(["rev-parse", `${topic}~1`], { cwd: work });
      await g.ok(["fetch", "-q", url, parent], { cwd: dir, env });
      expect(await g.ok(["cat-file", "-t", parent], { cwd: dir })).toBe("commit");
      expect((await g.run(["cat-file", "-e", secret.commit], { cwd: dir })).code).not.toBe(0);
    }
  });

  test("bare upload-pack requests: a v0 want without allow-*-in-want and a v2 fetch are refused; v2 object-info does not describe it", async () => {
    const rpc = async (body: Uint8Array, v2: boolean) => {
      const r = await fetch(`${server.url}/pub/lib.git/git-upload-pack`, {
        method: "POST",
        headers: { "content-type": "application/x-git-upload-pack-request", ...(v2 ? { "git-protocol": "version=2" } : {}) },
        body: body as Uint8Array<ArrayBuffer>,
      });
      return new TextDecoder().decode(new Uint8Array(await r.arrayBuffer()));
    };
    for (const sha of [secret.commit, secret.blob, secret.tree, leak.blob]) {
      const v0 = await rpc(Buffer.concat([pkt(`want ${sha} ofs-delta\n`), FLUSH, pkt("done\n")]), false);
      expect(v0).toContain(`not our ref ${sha}`);
      const v2 = await rpc(Buffer.concat([pkt("command=fetch\n"), DELIM, pkt(`want ${sha}\n`), pkt("done\n"), FLUSH]), true);
      expect(v2).toContain(`not our ref ${sha}`);
    }
    const info = await rpc(
      Buffer.concat([
        pkt("command=object-info\n"),
        DELIM,
        pkt("size\n"),
        pkt(`oid ${secret.blob}\n`),
        pkt(`oid ${await g.ok(["rev-parse", `${topic}:feature.txt`], { cwd: work })}\n`),
        FLUSH,
      ]),
      true,
    );
    const lines = parsePkts(new TextEncoder().encode(info))
      .filter((l): l is string => l !== null)
      .map((l) => l.trim());
    expect(lines).toContain(secret.blob);
    expect(lines.some((l) => /^[0-9a-f]{40} 18$/.test(l))).toBe(true);
  });
});

describe("forks read only what their own refs reach", () => {
  test("the parent's deleted branch is not readable through a fork, by reads, the ref API or a push naming it", async () => {
    const p = api("danaco", "lib");
    const as = caller(server, danaToken);
    expect((await as.get(`${p}/commits/${leak.commit}`)).status).toBe(404);
    expect((await as.get(`${p}/commits/${leak.commit.slice(0, 4)}`)).status).toBe(404);
    expect((await as.get(`${p}/tree/${leak.commit}`)).status).toBe(404);
    const put = await as.put(`${p}/refs/refs/heads/restore`, { target: leak.commit });
    expect({ status: put.status, body: put.body }).toMatchObject({ status: 422 });
    expect(put.body.error).toBe(`object ${leak.commit} does not exist in this repository`);
    expect((await as.put(`${p}/refs/refs/heads/nothing`, { target: NOWHERE })).body.error).toBe(`object ${NOWHERE} does not exist in this repository`);
    // A commit whose tree names the leaked blob, pushed without it: refused like a missing object.
    const tree = await g.ok(["mktree", "--missing"], { cwd: work, input: `100644 blob ${leak.blob}\tstolen.txt\n` });
    const commit = await g.ok(["commit-tree", "-m", "steal", tree], { cwd: work });
    const pack = await packObjects(g, work, [commit, tree]);
    const report = await postReceivePack(
      server,
      "danaco",
      "lib",
      receivePackBody([{ old: ZERO_OID, new: commit, ref: "refs/heads/stolen" }], ["report-status"], pack),
      basicAuth(danaToken),
    );
    expect(report.refs["refs/heads/stolen"]).toBe("ng missing necessary objects");
    // A bare ref update to the leaked commit, with an empty pack: the same.
    const bare = await postReceivePack(
      server,
      "danaco",
      "lib",
      receivePackBody([{ old: ZERO_OID, new: leak.commit, ref: "refs/heads/bare" }], ["report-status"], emptyPack()),
      basicAuth(danaToken),
    );
    expect(bare.refs["refs/heads/bare"]).toMatch(/^ng /);
    expect((await as.get(`${p}/refs`)).body.refs.map((r: { name: string }) => r.name)).not.toContain("refs/heads/stolen");
    // What the fork does reach still works: its own secret branch, for its owner.
    expect((await as.get(`${p}/commits/${secret.commit.slice(0, 4)}`)).body.sha).toBe(secret.commit);
  });

  test("another fork made after the landing reads neither the first fork's secret nor the parent's deleted branch", async () => {
    expect((await caller(server, erin).post(`${api("pub", "lib")}/forks`, { org: "erinco", name: "lib" })).status).toBe(202);
    await until("erin's fork to be ready", async () => (await caller(server, erin).get(api("erinco", "lib"))).body.fork_state === "ready");
    const p = api("erinco", "lib");
    for (const sha of [secret.commit, leak.commit]) {
      for (const id of [sha, sha.slice(0, 4), sha.slice(0, 7)]) expect((await caller(server, erin).get(`${p}/commits/${id}`)).status).toBe(404);
      expect((await page(`/erinco/lib/raw/${sha}/secret.txt`)).status).toBe(404);
    }
    expect((await caller(server, erin).get(`${p}/commits/${topic}`)).status).toBe(200);
  });
});

describe("open changes: their patchsets are readable to the repository's readers while open", () => {
  test("a force-pushed patchset stays readable by id until the change is closed, cached pages included", async () => {
    const url = repoUrl(server, "pub", "lib", ownerToken);
    await g.ok(["checkout", "-q", "-b", "review", topic], { cwd: work });
    const first = await commitFiles(g, work, { "review.txt": "first try\n" }, "first try");
    await g.ok(["push", "-q", url, "review"], { cwd: work });
    const c = await caller(server, ownerToken).post(`${api("pub", "lib")}/changes`, { title: "review", branch: "review" });
    expect(c.status).toBe(201);
    await g.ok(["checkout", "-q", "-B", "review", topic], { cwd: work });
    await commitFiles(g, work, { "review.txt": "second try\n" }, "second try");
    await g.ok(["push", "-q", "-f", url, "review"], { cwd: work });
    await until("patchset 2", async () => (await anon().get(`${api("pub", "lib")}/changes/${c.body.number}`)).body.patchset === 2);
    // No ref reaches the first try any more; the open change does.
    expect((await anon().get(`${api("pub", "lib")}/commits/${first}`)).status).toBe(200);
    const pages = [`/pub/lib/blob/${first}/review.txt`, `/pub/lib/tree/${first}`, `/pub/lib/commit/${first}`];
    const etags: string[] = [];
    for (const p of pages) {
      const r = await fetch(`${server.url}${p}`);
      expect(r.status).toBe(200);
      etags.push(r.headers.get("etag")!);
      // While it is readable, the validator answers 304.
      expect((await fetch(`${server.url}${p}`, { headers: { "if-none-match": etags.at(-1)! } })).status).toBe(304);
    }
    expect((await caller(server, ownerToken).patch(`${api("pub", "lib")}/changes/${c.body.number}`, { state: "closed" })).status).toBe(200);
    expect((await anon().get(`${api("pub", "lib")}/commits/${first}`)).status).toBe(404);
    // A browser revalidating what it saw gets the 404, not a 304.
    for (const [i, p] of pages.entries()) expect((await fetch(`${server.url}${p}`, { headers: { "if-none-match": etags[i]! } })).status).toBe(404);
  });
});

test("the secret never shows in any answer of the parent (a clone of it holds none of the fork's other objects)", async () => {
  const dir = g.path("clone");
  await g.ok(["clone", "-q", "--mirror", `${server.url}/pub/lib.git`, dir]);
  for (const sha of [secret.commit, secret.blob, leak.commit]) expect((await g.run(["cat-file", "-e", sha], { cwd: dir })).code).not.toBe(0);
  expect(await g.ok(["cat-file", "-t", topic], { cwd: dir })).toBe("commit");
});
