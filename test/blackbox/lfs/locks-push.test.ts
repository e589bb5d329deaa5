// LFS locks enforced on push (issue 31): a push over HTTP or SSH that changes a path locked by
// someone else is refused for that ref, git showing a message that names the path, the lock and
// its owner; the owner's own pushes and pushes not touching locked paths pass. Plain `git push`
// (no git-lfs pre-push hook), so only the server stands between the push and the locked file.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { basicAuth, commitFiles, gitSandbox, initRepo, lsRemote, mintTokenWithId, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { createUser, login } from "../../helpers/server.ts";
import { until } from "../ci/helpers.ts";
import {
  gitSshEnv,
  makeRepo,
  registerKey,
  sshExec,
  sshUrl,
  sshWorkspace,
  startSshServer,
  type SshKey,
  type SshRunningServer,
  type SshWorkspace,
} from "../../helpers/ssh.ts";

setDefaultTimeout(60_000);

const LFS = "application/vnd.git-lfs+json";

let server: SshRunningServer;
let ws: SshWorkspace;
let g: GitSandbox;
let work: string;
let base: string;

interface Pusher {
  handle: string;
  cookie: string;
  token: string;
  key: SshKey;
}
let alice: Pusher, bob: Pusher;

async function pusher(email: string, role: string): Promise<Pusher> {
  const u = await createUser(server, { org: "studio", email, role });
  const cookie = await login(server, u.email, u.password);
  const { token } = await mintTokenWithId(server, cookie, "studio", { scopes: ["repo:write"], label: `push-${email}` });
  const key = await ws.keygen(u.handle, "ed25519");
  await registerKey(server, { cookie }, "studio", key);
  return { handle: u.handle, cookie, token, key };
}

/** Takes a lock as `who` through the API; answers its id. */
async function lock(who: Pusher, path: string, repo = "game"): Promise<string> {
  const res = await fetch(`${server.url}/studio/${repo}.git/info/lfs/locks`, {
    method: "POST",
    headers: { authorization: basicAuth(who.token), "content-type": LFS, accept: LFS },
    body: JSON.stringify({ path }),
  });
  const body = (await res.json()) as { lock: { id: string } };
  if (res.status !== 201) throw new Error(`lock ${path}: ${res.status} ${JSON.stringify(body)}`);
  return body.lock.id;
}

async function unlock(who: Pusher, id: string, repo = "game"): Promise<void> {
  const res = await fetch(`${server.url}/studio/${repo}.git/info/lfs/locks/${id}/unlock`, {
    method: "POST",
    headers: { authorization: basicAuth(who.token), "content-type": LFS },
    body: "{}",
  });
  if (res.status !== 200) throw new Error(`unlock ${id}: ${res.status}`);
}

type Via = "http" | "ssh";

function remote(who: Pusher, via: Via, repo = "game"): { url: string; env: Record<string, string> } {
  return via === "http" ? { url: repoUrl(server, "studio", repo, who.token), env: {} } : { url: sshUrl(server, "studio", repo), env: gitSshEnv(who.key) };
}

/** A commit on top of `from` writing `files` and deleting `remove`; answers its id. */
async function commitOn(from: string, files: Record<string, string>, remove: string[] = []): Promise<string> {
  // Commits made on the server (the commit API) are fetched first.
  if ((await g.run(["cat-file", "-e", `${from}^{commit}`], { cwd: work })).code !== 0) {
    await g.ok(["fetch", "-q", repoUrl(server, "studio", "game", alice.token), "refs/heads/*:refs/remotes/server/*"], { cwd: work });
  }
  await g.ok(["checkout", "-q", "-f", "--detach", from], { cwd: work });
  await g.ok(["clean", "-qfd"], { cwd: work });
  for (const p of remove) rmSync(join(work, p), { recursive: true, force: true });
  return commitFiles(g, work, files, `change ${Math.random()}`);
}

/** Pushes `refspecs` as `who`; answers the exit code and what git printed. */
async function push(who: Pusher, via: Via, refspecs: string[], extra: string[] = [], repo = "game") {
  const { url, env } = remote(who, via, repo);
  const r = await g.run(["push", "--porcelain", ...extra, url, ...refspecs], { cwd: work, env });
  return { code: r.code, out: r.stdout + r.stderr };
}

async function serverRefs(repo = "game"): Promise<Record<string, string>> {
  return lsRemote(g, repoUrl(server, "studio", repo, alice.token));
}

beforeAll(async () => {
  ws = sshWorkspace("svc-lfs-push-");
  g = gitSandbox("svc-lfs-push-git-");
  server = await startSshServer();
  alice = await pusher("alice@example.com", "owner");
  bob = await pusher("bob@example.com", "member");
  await makeRepo(server, { cookie: alice.cookie }, "studio", "game");
  await makeRepo(server, { cookie: alice.cookie }, "studio", "empty");
  work = await initRepo(g);
  base = await commitFiles(g, work, {
    "art/hero.psd": "hero v1\n",
    "art/villain.psd": "villain v1\n",
    "art/sky/clouds.png": "clouds v1\n",
    "src/main.c": "int main() {}\n",
    "README.md": "game\n",
  });
  await g.ok(["push", "-q", repoUrl(server, "studio", "game", alice.token), `${base}:refs/heads/main`], { cwd: work });
});

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]?.();
});

describe.each(["http", "ssh"] as const)("over %s", (via) => {
  test("another's lock refuses a push changing the path, naming the path, the lock and its owner", async () => {
    const id = await lock(alice, "art/hero.psd");
    try {
      const before = await serverRefs();
      const edit = await commitOn(before["refs/heads/main"]!, { "art/hero.psd": `hero by bob over ${via}\n` });
      const r = await push(bob, via, [`${edit}:refs/heads/main`]);
      expect(r.code).not.toBe(0);
      expect(r.out).toContain(`art/hero.psd is locked by ${alice.handle} (LFS lock ${id})`);
      expect(r.out).toMatch(/!\s+\S+:refs\/heads\/main\s+\[remote rejected\]/);
      expect(await serverRefs()).toEqual(before);

      // Deleting it, renaming it away, or making it executable are changes too.
      const removed = await commitOn(before["refs/heads/main"]!, {}, ["art/hero.psd"]);
      expect((await push(bob, via, [`${removed}:refs/heads/main`])).out).toContain(`LFS lock ${id}`);
      await g.ok(["checkout", "-q", "-f", "--detach", before["refs/heads/main"]!], { cwd: work });
      await g.ok(["mv", "art/hero.psd", "art/hero-renamed.psd"], { cwd: work });
      await g.ok(["commit", "-q", "-m", "rename"], { cwd: work });
      const renamed = await g.ok(["rev-parse", "HEAD"], { cwd: work });
      expect((await push(bob, via, [`${renamed}:refs/heads/main`])).out).toContain(`LFS lock ${id}`);
      await g.ok(["checkout", "-q", "-f", "--detach", before["refs/heads/main"]!], { cwd: work });
      await g.ok(["update-index", "--chmod=+x", "art/hero.psd"], { cwd: work });
      await g.ok(["commit", "-q", "-m", "chmod"], { cwd: work });
      const chmod = await g.ok(["rev-parse", "HEAD"], { cwd: work });
      expect((await push(bob, via, [`${chmod}:refs/heads/main`])).out).toContain(`LFS lock ${id}`);
      // Removing the whole directory above it.
      const dir = await commitOn(before["refs/heads/main"]!, {}, ["art"]);
      expect((await push(bob, via, [`${dir}:refs/heads/main`])).out).toContain(`LFS lock ${id}`);
      expect(await serverRefs()).toEqual(before);

      // A push not touching the locked path passes, though it changes its neighbours.
      const other = await commitOn(before["refs/heads/main"]!, { "src/main.c": `int main() { return 1; } // ${via}\n`, "art/villain.psd": `villain ${via}\n` });
      const ok = await push(bob, via, [`${other}:refs/heads/main`]);
      expect({ code: ok.code, out: ok.out }).toEqual({ code: 0, out: expect.any(String) });

      // The owner's own push of the locked path passes.
      const own = await commitOn(other, { "art/hero.psd": `hero by alice over ${via}\n` });
      expect((await push(alice, via, [`${own}:refs/heads/main`])).code).toBe(0);
      expect((await serverRefs())["refs/heads/main"]).toBe(own);
    } finally {
      await unlock(alice, id);
    }
    // Unlocked, Bob's edit goes through.
    const after = await commitOn((await serverRefs())["refs/heads/main"]!, { "art/hero.psd": `hero by bob after unlock ${via}\n` });
    expect((await push(bob, via, [`${after}:refs/heads/main`])).code).toBe(0);
  });

  test("a lock on a path that does not exist yet refuses adding it; several locks: the first named, the rest counted", async () => {
    const ids = [await lock(alice, `new/${via}/asset.bin`), await lock(alice, `new/${via}/other.bin`)];
    try {
      const main = (await serverRefs())["refs/heads/main"]!;
      const add = await commitOn(main, { [`new/${via}/asset.bin`]: "asset\n", [`new/${via}/other.bin`]: "other\n" });
      const r = await push(bob, via, [`${add}:refs/heads/main`]);
      expect(r.code).not.toBe(0);
      expect(r.out).toContain(`new/${via}/asset.bin is locked by ${alice.handle} (LFS lock ${ids[0]})`);
      expect(r.out).toContain("and 1 more locked path");
    } finally {
      for (const id of ids) await unlock(alice, id);
    }
  });

  test("new branches compare with the default branch's tip; deleting a branch is never refused; an atomic push fails whole", async () => {
    const main = (await serverRefs())["refs/heads/main"]!;
    const id = await lock(alice, "art/sky/clouds.png");
    try {
      const touching = await commitOn(main, { "art/sky/clouds.png": `clouds by bob ${via}\n` });
      const clean = await commitOn(main, { "README.md": `readme ${via}\n` });
      const refused = await push(bob, via, [`${touching}:refs/heads/feature-${via}-a`]);
      expect(refused.code).not.toBe(0);
      expect(refused.out).toContain(`art/sky/clouds.png is locked by ${alice.handle} (LFS lock ${id})`);
      expect((await push(bob, via, [`${clean}:refs/heads/feature-${via}-b`])).code).toBe(0);

      // Atomic: the clean ref fails with the touching one.
      const atomic = await push(bob, via, [`${clean}:refs/heads/feature-${via}-c`, `${touching}:refs/heads/feature-${via}-d`], ["--atomic"]);
      expect(atomic.code).not.toBe(0);
      const refs = await serverRefs();
      expect([refs[`refs/heads/feature-${via}-c`], refs[`refs/heads/feature-${via}-d`]]).toEqual([undefined, undefined]);

      // Tags are not branches: a tag on the touching commit is no change to any branch.
      expect((await push(bob, via, [`${touching}:refs/tags/t-${via}`])).code).toBe(0);
      // Deleting a branch whose tree holds the locked path.
      expect((await push(bob, via, [`:refs/heads/feature-${via}-b`])).code).toBe(0);
    } finally {
      await unlock(alice, id);
    }
  });
});

test("the commit API and the ref API are refused like a push; the owner's commit passes", async () => {
  const id = await lock(alice, "art/hero.psd");
  const api = (who: Pusher, method: string, path: string, body: unknown) =>
    fetch(`${server.url}/v1/orgs/studio/repos/game${path}`, {
      method,
      headers: { authorization: `Bearer ${who.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  try {
    const main = (await serverRefs())["refs/heads/main"]!;
    const put = (content: string) => ({ branch: "main", message: "edit", operations: [{ op: "put", path: "art/hero.psd", content }] });
    const refused = await api(bob, "POST", "/commits", put("bob via the API\n"));
    expect({ status: refused.status, error: refused.body.error }).toEqual({
      status: 403,
      error: expect.stringContaining(`art/hero.psd is locked by ${alice.handle} (LFS lock ${id})`),
    });
    const other = await api(bob, "POST", "/commits", { branch: "main", message: "readme", operations: [{ op: "put", path: "README.md", content: "api\n" }] });
    expect(other.status).toBe(201);

    // A commit touching the path reaches the server as a tag (unchecked); moving main onto it is refused.
    const touching = await commitOn(other.body.commit, { "art/hero.psd": "bob via a tag\n" });
    expect((await push(bob, "http", [`${touching}:refs/tags/sneak`])).code).toBe(0);
    const moved = await api(bob, "PUT", "/refs/refs/heads/main", { target: touching, expected: other.body.commit });
    expect({ status: moved.status, error: moved.body.error }).toEqual({ status: 403, error: expect.stringContaining(`LFS lock ${id}`) });
    expect((await serverRefs())["refs/heads/main"]).toBe(other.body.commit);
    expect(main).not.toBe(other.body.commit);

    const own = await api(alice, "POST", "/commits", put("alice via the API\n"));
    expect(own.status).toBe(201);
  } finally {
    await unlock(alice, id);
  }
});

test("the lander ejects a change that would change a path locked since by someone else than who queued it", async () => {
  const api = (who: Pusher, method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/v1/orgs/studio/repos/game${path}`, {
      method,
      headers: { authorization: `Bearer ${who.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const main = (await serverRefs())["refs/heads/main"]!;
  const feature = await commitOn(main, { "art/villain.psd": "villain by bob on a branch\n" });
  expect((await push(bob, "http", [`${feature}:refs/heads/land-villain`])).code).toBe(0);
  const change = await api(bob, "POST", "/changes", { title: "Villain", branch: "land-villain", target: "main" });
  expect(change.status).toBe(201);
  const id = await lock(alice, "art/villain.psd");
  try {
    expect((await api(bob, "POST", `/changes/${change.body.number}/land`)).status).toBe(202);
    const done = await until("the change to settle", async () => {
      const c = (await api(bob, "GET", `/changes/${change.body.number}`)).body;
      return c.state === "queued" ? null : c;
    });
    expect({ state: done.state, verdict: done.verdict }).toEqual({
      state: "ejected",
      verdict: expect.objectContaining({
        kind: "forbidden",
        message: expect.stringContaining(`art/villain.psd is locked by ${alice.handle} (LFS lock ${id})`),
      }),
    });
    expect((await serverRefs())["refs/heads/main"]).toBe(main);
  } finally {
    await unlock(alice, id);
  }
});

test("git lfs lock in an SSH clone: git-lfs-authenticate's header works on the lock API, as the key's owner", async () => {
  const clones: Record<string, string> = {};
  for (const who of [alice, bob]) {
    const dir = g.path(`ssh-${who.handle}`);
    await g.ok(["clone", "-q", sshUrl(server, "studio", "game"), dir], { env: gitSshEnv(who.key) });
    clones[who.handle] = dir;
  }
  const env = (who: Pusher) => ({ cwd: clones[who.handle]!, env: gitSshEnv(who.key) });
  const locked = await g.run(["lfs", "lock", "art/villain.psd"], env(alice));
  expect({ code: locked.code, out: locked.stdout }).toEqual({ code: 0, out: expect.stringContaining("Locked art/villain.psd") });
  expect(await g.ok(["lfs", "locks"], env(bob))).toMatch(new RegExp(`^art/villain\\.psd\\s+${alice.handle}\\s+ID:`, "m"));
  const refused = await g.run(["lfs", "unlock", "art/villain.psd"], env(bob));
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain(`locked by ${alice.handle}`);
  // Enforced on Bob's SSH push as on any other.
  const main = (await serverRefs())["refs/heads/main"]!;
  const edit = await commitOn(main, { "art/villain.psd": "villain by bob over ssh\n" });
  expect((await push(bob, "ssh", [`${edit}:refs/heads/main`])).out).toContain(`art/villain.psd is locked by ${alice.handle}`);
  expect((await g.run(["lfs", "unlock", "art/villain.psd"], env(alice))).code).toBe(0);
  expect(await g.ok(["lfs", "locks"], env(bob))).toBe("");

  // The header as git-lfs-authenticate gives it: a download grant lists but does not lock; it is good for its repository only.
  const auth = async (repo: string, op: string) => {
    const r = await sshExec(ws, server, bob.key, `git-lfs-authenticate studio/${repo}.git ${op}`);
    return JSON.parse(r.stdout) as { href: string; header: Record<string, string> };
  };
  const down = await auth("game", "download");
  const call = (href: string, header: Record<string, string>, method: string, path: string, body?: unknown) =>
    fetch(`${href}${path}`, { method, headers: { ...header, "content-type": LFS, accept: LFS }, body: body === undefined ? undefined : JSON.stringify(body) });
  expect((await call(down.href, down.header, "GET", "/locks")).status).toBe(200);
  const denied = await call(down.href, down.header, "POST", "/locks", { path: "grant.bin" });
  expect({ status: denied.status, body: await denied.json() }).toEqual({ status: 403, body: { message: "this LFS credential is for downloads only" } });
  const up = await auth("game", "upload");
  const made = await call(up.href, up.header, "POST", "/locks", { path: "grant.bin" });
  expect(made.status).toBe(201);
  const other = await auth("empty", "upload");
  const elsewhere = await call(down.href.replace("/game.git", "/empty.git"), up.header, "GET", "/locks");
  expect({ status: elsewhere.status, body: await elsewhere.json() }).toEqual({
    status: 401,
    body: { message: "this LFS credential is for another repository" },
  });
  expect((await call(other.href, other.header, "GET", "/locks")).status).toBe(200);
  const id = ((await made.json()) as { lock: { id: string } }).lock.id;
  expect((await call(up.href, up.header, "POST", `/locks/${id}/unlock`, {})).status).toBe(200);
});

test("the first push into an empty repository is checked against nothing: a locked path in it is refused", async () => {
  const id = await lock(alice, "art/hero.psd", "empty");
  const r = await push(bob, "http", [`${base}:refs/heads/main`], [], "empty");
  expect(r.code).not.toBe(0);
  expect(r.out).toContain(`art/hero.psd is locked by ${alice.handle} (LFS lock ${id})`);
  expect(await serverRefs("empty")).toEqual({});
  expect((await push(alice, "http", [`${base}:refs/heads/main`], [], "empty")).code).toBe(0);
});
