// Changes and the lander, black-box: the real server, real git clients over HTTP, the commit
// API, a real CI run for a required check, and the database read only to see events.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { commitFiles, initRepo, lsRemote, repoUrl } from "../../helpers/git.ts";
import { commitOk, newRepo, put, repoApi, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { dbRows, registerMachine, registrationToken, runnerHome, startAgent, until } from "../ci/helpers.ts";
import { caller } from "../../helpers/api.ts";
import { startServer, serverDb } from "../../helpers/server.ts";

const ORG = "lab";
let w: World;

beforeAll(async () => {
  w = await startWorld(ORG);
});
afterAll(async () => w.close());

/** A repository with main (a.txt, b.txt) pushed by git, and a local clone to branch from. */
async function seeded(name: string): Promise<{ repo: TestRepo; dir: string; main: string }> {
  const repo = await newRepo(w, name);
  const dir = await initRepo(w.g, name);
  await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  const main = await commitFiles(w.g, dir, { "a.txt": "a\n", "b.txt": "b\n" }, "seed");
  await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
  return { repo, dir, main };
}

/** Commits `files` on a new or existing local branch starting at `from`, pushes it; answers the head. */
async function branch(dir: string, url: string, name: string, from: string, files: Record<string, string>, message = name): Promise<string> {
  await w.g.ok(["checkout", "-q", "-B", name, from], { cwd: dir });
  const head = await commitFiles(w.g, dir, files, message);
  await w.g.ok(["push", "-q", "-f", url, name], { cwd: dir });
  return head;
}

const changes = (repo: TestRepo) => `${repo.api.base}/changes`;
async function open(repo: TestRepo, body: Record<string, unknown>) {
  const r = await repo.api.c.post(changes(repo), { title: "a change", ...body });
  if (r.status !== 201) throw new Error(`create failed ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
const get = async (repo: TestRepo, n: number) => (await repo.api.c.get(`${changes(repo)}/${n}`)).body;
async function settled(repo: TestRepo, n: number, states = ["landed", "ejected"]) {
  return until(`change #${n} to settle`, async () => {
    const c = await get(repo, n);
    return states.includes(c.state) ? c : null;
  });
}
const events = (kind: string) =>
  dbRows<{ payload: string }>(w.server, "SELECT payload FROM events WHERE kind = ? ORDER BY created_at", kind).map((e) => JSON.parse(e.payload));

describe("a change from a branch", () => {
  test("opened, diffed, followed by pushes (patchset grows), landed by fast-forward with change.landed", async () => {
    const { repo, dir, main } = await seeded("ff");
    const head1 = await branch(dir, repo.url, "feature", main, { "c.txt": "one\ntwo\n" });
    const c = await open(repo, { branch: "feature", description: "adds c" });
    expect(c).toMatchObject({
      number: 1,
      state: "open",
      branch: "feature",
      target: "main",
      head: head1,
      base: main,
      patchset: 1,
      source: null,
      depends_on: null,
    });
    expect(c.author.handle).toBeString();

    const d = await repo.api.c.get(`${changes(repo)}/1/diff`);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ base: main, head: head1, merge_base: main, additions: 2, deletions: 0, truncated: false });
    expect(d.body.files).toEqual([
      expect.objectContaining({ path: "c.txt", status: "added", additions: 2, deletions: 0, patch: "@@ -0,0 +1,2 @@\n+one\n+two\n" }),
    ]);

    // A git push moves the head; so does a commit through the API (another transport).
    const head2 = await commitFiles(w.g, dir, { "c.txt": "one\nTWO\n" }, "second");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    expect(await get(repo, 1)).toMatchObject({ head: head2, patchset: 2 });
    const head3 = (await commitOk(repo.api, { branch: "feature", operations: [put("d.txt", "d\n")] })).commit;
    expect(await get(repo, 1)).toMatchObject({ head: head3, patchset: 3 });

    const land = await repo.api.c.post(`${changes(repo)}/1/land`);
    expect(land.status).toBe(202);
    expect(land.body.state).toBe("queued");
    const done = await settled(repo, 1);
    expect(done).toMatchObject({ state: "landed", landed_commit: head3, included_in: null, verdict: null });
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(head3);
    expect(events("change.landed")).toContainEqual({ change: 1, commit: head3, branch: "main", patchset: 3 });

    // Landing again, or a landed change's code edits, are refused.
    const again = await repo.api.c.post(`${changes(repo)}/1/land`);
    expect(again.status).toBe(409);
    expect((await repo.api.c.patch(`${changes(repo)}/1`, { state: "closed" })).status).toBe(409);
  });

  test("a target that moved elsewhere gets a merge commit naming the change; git agrees with the result", async () => {
    const { repo, dir, main } = await seeded("merge");
    const head = await branch(dir, repo.url, "feature", main, { "a.txt": "a changed by feature\n" });
    const moved = (await commitOk(repo.api, { branch: "main", operations: [put("b.txt", "b changed on main\n")] })).commit;
    await open(repo, { branch: "feature", title: "Change a" });
    await repo.api.c.post(`${changes(repo)}/1/land`);
    const done = await settled(repo, 1);
    expect(done.state).toBe("landed");
    const tip = (await lsRemote(w.g, repo.url))["refs/heads/main"]!;
    expect(done.landed_commit).toBe(tip);
    await w.g.ok(["fetch", "-q", repo.url, "main"], { cwd: dir });
    expect(await w.g.ok(["rev-parse", `${tip}^1`, `${tip}^2`], { cwd: dir })).toBe(`${moved}\n${head}`);
    expect(await w.g.ok(["log", "-1", "--format=%s", tip], { cwd: dir })).toBe("Land change #1: Change a");
    expect(await w.g.ok(["show", `${tip}:a.txt`], { cwd: dir })).toBe("a changed by feature");
    expect(await w.g.ok(["show", `${tip}:b.txt`], { cwd: dir })).toBe("b changed on main");
    // The merge git would have made has the same tree.
    const gitTree = (await w.g.ok(["merge-tree", "--write-tree", moved, head], { cwd: dir })).split("\n")[0];
    expect(await w.g.ok(["rev-parse", `${tip}^{tree}`], { cwd: dir })).toBe(gitTree!);
    await w.g.ok(["fsck", "--strict"], { cwd: dir });
  });

  test("a conflict is ejected with its paths and change.ejected; nothing moves", async () => {
    const { repo, dir, main } = await seeded("conflict");
    await branch(dir, repo.url, "feature", main, { "a.txt": "feature\n", "new.txt": "n\n" });
    const moved = (await commitOk(repo.api, { branch: "main", operations: [put("a.txt", "main\n")] })).commit;
    await open(repo, { branch: "feature" });
    await repo.api.c.post(`${changes(repo)}/1/land`);
    const done = await settled(repo, 1);
    expect(done.state).toBe("ejected");
    expect(done.verdict).toMatchObject({ kind: "conflict", paths: ["a.txt"] });
    expect(done.verdict.message).toContain("a.txt");
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(moved);
    expect(events("change.ejected")).toContainEqual({ change: 1, verdict: done.verdict });
    // An ejected change can be fixed and landed again.
    await w.g.ok(["checkout", "-q", "feature"], { cwd: dir });
    await w.g.ok(["fetch", "-q", repo.url, "main"], { cwd: dir });
    await w.g.ok(["merge", "-q", "-X", "theirs", "FETCH_HEAD", "-m", "resolve"], { cwd: dir });
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    expect((await get(repo, 1)).patchset).toBe(2);
    expect((await repo.api.c.post(`${changes(repo)}/1/land`)).status).toBe(202);
    expect((await settled(repo, 1)).state).toBe("landed");
  });

  test("a head that moves while queued ejects the change (head moved)", async () => {
    const { repo, dir, main } = await seeded("moved");
    await branch(dir, repo.url, "feature", main, { "c.txt": "c\n" });
    // Hold the queue with a required check nobody reports, so the push comes first.
    await repo.api.putProtection("main", { required_checks: ["never"] });
    await open(repo, { branch: "feature" });
    await repo.api.c.post(`${changes(repo)}/1/land`);
    await until("waiting", async () => (await get(repo, 1)).waiting);
    expect((await get(repo, 1)).waiting).toContain("never");
    const next = await commitFiles(w.g, dir, { "c.txt": "c2\n" }, "again");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    const c = await get(repo, 1);
    expect(c).toMatchObject({ state: "ejected", head: next, patchset: 2 });
    expect(c.verdict.kind).toBe("head_moved");
  });
});

describe("stacks", () => {
  test("landing the top lands the open changes beneath, with included_in", async () => {
    const { repo, dir, main } = await seeded("stack");
    const a = await branch(dir, repo.url, "part-a", main, { "x.txt": "x\n" });
    const b = await branch(dir, repo.url, "part-b", a, { "y.txt": "y\n" });
    const c = await branch(dir, repo.url, "part-c", b, { "z.txt": "z\n" });
    await open(repo, { branch: "part-a" });
    await open(repo, { branch: "part-b", depends_on: 1 });
    await open(repo, { branch: "part-c", depends_on: 2 });
    // The stack's diff shows only its own commits' files against the target.
    expect((await repo.api.c.get(`${changes(repo)}/3/diff`)).body.files.map((f: any) => f.path)).toEqual(["x.txt", "y.txt", "z.txt"]);
    // A cycle is refused.
    const cycle = await repo.api.c.patch(`${changes(repo)}/1`, { depends_on: 3 });
    expect(cycle.status).toBe(422);
    expect(cycle.body.error).toContain("cycle");
    expect((await repo.api.c.post(`${changes(repo)}/3/land`)).status).toBe(202);
    const top = await settled(repo, 3);
    expect(top).toMatchObject({ state: "landed", landed_commit: c, included_in: null });
    expect(await get(repo, 1)).toMatchObject({ state: "landed", landed_commit: c, included_in: 3 });
    expect(await get(repo, 2)).toMatchObject({ state: "landed", landed_commit: c, included_in: 3 });
    const landed = events("change.landed").filter((e) => e.commit === c);
    expect(landed).toEqual([
      { change: 1, commit: c, branch: "main", included_in: 3 },
      { change: 2, commit: c, branch: "main", included_in: 3 },
      { change: 3, commit: c, branch: "main", patchset: 1 },
    ]);
  });

  test("a closed change beneath refuses the land request", async () => {
    const { repo, dir, main } = await seeded("stack-closed");
    const a = await branch(dir, repo.url, "p1", main, { "x.txt": "x\n" });
    await branch(dir, repo.url, "p2", a, { "y.txt": "y\n" });
    await open(repo, { branch: "p1" });
    await open(repo, { branch: "p2", depends_on: 1 });
    expect((await repo.api.c.patch(`${changes(repo)}/1`, { state: "closed" })).body.state).toBe("closed");
    const r = await repo.api.c.post(`${changes(repo)}/2/land`);
    expect(r.status).toBe(409);
    expect(r.body.error).toContain("#1");
    expect((await repo.api.c.patch(`${changes(repo)}/1`, { state: "open" })).body.state).toBe("open");
  });
});

describe("protections", () => {
  test("require_change refuses git push, ref API and commit API, naming the changes route; the lander still lands", async () => {
    const { repo, dir, main } = await seeded("guarded");
    const head = await branch(dir, repo.url, "feature", main, { "c.txt": "c\n" });
    expect((await repo.api.putProtection("main", { require_change: true })).status).toBe(200);
    await w.g.ok(["checkout", "-q", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "direct.txt": "d\n" }, "direct");
    const push = await w.g.run(["push", repo.url, "main"], { cwd: dir });
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain("/changes");
    const ref = await repo.api.putRef("refs/heads/main", { target: head });
    expect(ref.status).toBe(403);
    expect(ref.body.error).toContain("/changes");
    const commit = await repo.api.commit({ branch: "main", message: "m", operations: [put("q", "q\n")] });
    expect(commit.status).toBe(403);
    expect(commit.body.error).toContain("/changes");
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(main);

    await open(repo, { branch: "feature" });
    await repo.api.c.post(`${changes(repo)}/1/land`);
    expect((await settled(repo, 1)).state).toBe("landed");
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(head);
  });

  test("a required check: the change waits with a reason, a real CI run's failure ejects it, its success lands it", async () => {
    const { repo, dir, main } = await seeded("checked");
    const token = await registrationToken(caller(w.server, { cookie: w.owner.cookie }), ORG);
    const home = runnerHome();
    const m = await registerMachine(w.server, token, home.dir, { name: "lander-ci", labels: ["lander"] });
    await using agent = startAgent(m.config, join(home.dir, "work"));
    try {
      await repo.api.putProtection("main", { required_checks: ["test"] });
      const wf = (cmd: string) => `on: push\njobs:\n  test:\n    runs-on: [self-hosted, lander]\n    steps:\n      - run: ${cmd}\n`;
      const bad = await branch(dir, repo.url, "bad", main, { ".svc/workflows/ci.yml": wf("false") });
      await open(repo, { branch: "bad" });
      await repo.api.c.post(`${changes(repo)}/1/land`);
      const ejected = await settled(repo, 1);
      expect(ejected.verdict).toMatchObject({ kind: "check_failed", check: "test", state: "failure" });
      expect(ejected.verdict.message).toContain(bad.slice(0, 12));

      await branch(dir, repo.url, "good", main, { ".svc/workflows/ci.yml": wf("true") });
      await open(repo, { branch: "good" });
      await repo.api.c.post(`${changes(repo)}/2/land`);
      expect((await settled(repo, 2)).state).toBe("landed");
      void agent;
    } finally {
      home.cleanup();
    }
  });
});

describe("races and restarts", () => {
  test("pushes racing the lander are never clobbered; every queued change lands", async () => {
    const { repo, dir, main } = await seeded("race");
    const n = 6;
    for (let i = 1; i <= n; i++) {
      await branch(dir, repo.url, `f${i}`, main, { [`f${i}.txt`]: `${i}\n` });
      await open(repo, { branch: `f${i}` });
    }
    const pushes: string[] = [];
    const racing = (async () => {
      for (let i = 0; i < 8; i++) pushes.push((await commitOk(repo.api, { branch: "main", operations: [put(`direct${i}.txt`, `${i}\n`)] })).commit);
    })();
    for (let i = 1; i <= n; i++) expect((await repo.api.c.post(`${changes(repo)}/${i}/land`)).status).toBe(202);
    await racing;
    for (let i = 1; i <= n; i++) expect((await settled(repo, i)).state).toBe("landed");
    const tip = (await lsRemote(w.g, repo.url))["refs/heads/main"]!;
    await w.g.ok(["fetch", "-q", repo.url, "main"], { cwd: dir });
    const files = (await w.g.ok(["ls-tree", "--name-only", tip], { cwd: dir })).split("\n");
    for (let i = 1; i <= n; i++) expect(files).toContain(`f${i}.txt`);
    for (let i = 0; i < 8; i++) expect(files).toContain(`direct${i}.txt`);
    for (const p of pushes) await w.g.ok(["merge-base", "--is-ancestor", p, tip], { cwd: dir });
  });

  test("a server stopped with changes queued lands them after restart, once", async () => {
    const server = await startServer();
    try {
      const owner = await (await import("../../helpers/content.ts")).person(server, "solo", "owner");
      const api = repoApi(server, "solo", "r", owner.token);
      expect((await caller(server, owner.token).post("/v1/orgs/solo/repos", { name: "r" })).status).toBe(201);
      const base = (await commitOk(api, { branch: "main", operations: [put("a", "a\n")] })).commit;
      expect((await api.putRef("refs/heads/f", { target: base, expected: null })).status).toBe(200);
      const f = (await commitOk(api, { branch: "f", operations: [put("b", "b\n")] })).commit;
      expect((await api.c.post(`${api.base}/changes`, { title: "t", branch: "f" })).status).toBe(201);
      // Stop first, then queue as the land request's transaction would have (the row is the queue).
      await server.stop();
      const db = serverDb(server);
      db.run("UPDATE changes SET state = 'queued', queued_at = 1, queued_head = head");
      db.close();
      const again = await startServer({ dataDir: server.dataDir });
      try {
        const api2 = repoApi(again, "solo", "r", owner.token);
        const c = await until("landed after restart", async () => {
          const r = (await api2.c.get(`${api2.base}/changes/1`)).body;
          return r.state === "landed" ? r : null;
        });
        expect(c.landed_commit).toBe(f);
        const events2 = serverDb(server, { readonly: true });
        expect(events2.query("SELECT count(*) AS n FROM events WHERE kind = 'change.landed'").get()).toEqual({ n: 1 });
        events2.close();
      } finally {
        await again.stop();
      }
    } finally {
      await server.stop();
    }
  });
});

describe("bad input", () => {
  test("unknown branch or target, same branch, missing change, landing a closed change, mirrors, fork sources", async () => {
    const { repo, dir, main } = await seeded("bad");
    await branch(dir, repo.url, "feature", main, { "c.txt": "c\n" });
    const post = (body: Record<string, unknown>) => repo.api.c.post(changes(repo), { title: "t", ...body });
    const unknown = await post({ branch: "nope" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toContain("nope");
    expect((await post({ branch: "feature", target: "nope" })).status).toBe(422);
    expect((await post({ branch: "main" })).status).toBe(422);
    expect((await post({ branch: "../x" })).status).toBe(400);
    expect((await post({ branch: "feature", title: "" })).status).toBe(400);
    expect((await post({ branch: "feature", depends_on: 99 })).status).toBe(422);
    expect((await repo.api.c.get(`${changes(repo)}/99`)).status).toBe(404);
    expect((await repo.api.c.get(`${changes(repo)}/abc`)).status).toBe(404);

    const c = (await post({ branch: "feature" })).body;
    await repo.api.c.patch(`${changes(repo)}/${c.number}`, { state: "closed" });
    const closed = await repo.api.c.post(`${changes(repo)}/${c.number}/land`);
    expect(closed.status).toBe(409);
    expect(closed.body.error).toContain("closed");

    // A viewer may read changes but not open one from a branch here, nor land.
    const viewer = repoApi(w.server, ORG, repo.name, w.viewer.token);
    expect((await viewer.c.get(changes(repo))).status).toBe(200);
    expect((await viewer.c.post(changes(repo), { title: "t", branch: "feature" })).status).toBe(403);
    expect((await viewer.c.post(`${changes(repo)}/${c.number}/land`)).status).toBe(403);
    // An outsider learns nothing about a private repository.
    const outsider = repoApi(w.server, ORG, repo.name, w.outsider.token);
    expect((await outsider.c.get(changes(repo))).status).toBe(404);

    // A source the caller cannot read is the same 404 as a missing one; a readable non-fork is 422.
    const other = await newRepo(w, "not-a-fork");
    const hidden = await outsider.c.post(changes(repo), { title: "t", branch: "feature", source: { org: ORG, repo: other.name } });
    expect(hidden.status).toBe(404);
    const missing = await repo.api.c.post(changes(repo), { title: "t", branch: "feature", source: { org: ORG, repo: "no-such" } });
    expect(missing.status).toBe(404);
    const notFork = await repo.api.c.post(changes(repo), { title: "t", branch: "feature", source: { org: ORG, repo: other.name } });
    expect(notFork.status).toBe(422);
    expect(notFork.body.error).toContain("not a fork");

    // A mirror takes no changes.
    const mirror = await caller(w.server, w.owner.token).post(`/v1/orgs/${ORG}/repos`, {
      name: "mirrored",
      kind: "mirror",
      origin_url: "http://127.0.0.1:9/x.git",
      origin_provider: "generic",
    });
    if (mirror.status === 201) {
      const m = await repoApi(w.server, ORG, "mirrored", w.owner.token).c.post(`/v1/orgs/${ORG}/repos/mirrored/changes`, { title: "t", branch: "main" });
      expect(m.status).toBe(422);
      expect(m.body.error).toContain("mirror");
    }

    // compare: a bad spec, an unknown revision.
    expect((await repo.api.c.get(`${repo.api.base}/compare/main`)).status).toBe(400);
    expect((await repo.api.c.get(`${repo.api.base}/compare/main...nope`)).status).toBe(404);
    const cmp = await repo.api.c.get(`${repo.api.base}/compare/main...feature`);
    expect(cmp.status).toBe(200);
    expect(cmp.body.files.map((f: any) => f.path)).toEqual(["c.txt"]);
  });
});

describe("a change from a fork", () => {
  test("lands into the parent by fast-forward and by merge: the landing brings a pack of what it needs, the parent clones whole", async () => {
    const { repo, dir, main } = await seeded("upstream");
    const api = caller(w.server, w.owner.token);
    expect((await api.post(`/v1/orgs/${ORG}/repos/upstream/forks`, { org: ORG, name: "downstream" })).status).toBe(202);
    await until("the fork to be ready", async () => (await api.get(`/v1/orgs/${ORG}/repos/downstream`)).body.fork_state === "ready");
    const forkUrl = repoUrl(w.server, ORG, "downstream", w.owner.token);
    const source = { org: ORG, repo: "downstream" };

    // A fast-forward: the parent's main moves to the fork's commit.
    const head = await branch(dir, forkUrl, "topic", main, { "c.txt": "from the fork\n" });
    const c = await open(repo, { branch: "topic", source });
    expect(c).toMatchObject({ head, source: { org: ORG, repo: "downstream" } });
    expect((await repo.api.c.post(`${changes(repo)}/${c.number}/land`)).status).toBe(202);
    expect(await settled(repo, c.number)).toMatchObject({ state: "landed", landed_commit: head });
    expect((await lsRemote(w.g, repo.url))["refs/heads/main"]).toBe(head);

    // A merge: the parent moved meanwhile; the merge commit names the change.
    const moved = (await commitOk(repo.api, { branch: "main", message: "upstream moves", operations: [put("d.txt", "d\n")] })).commit;
    const head2 = await branch(dir, forkUrl, "topic2", head, { "e.txt": "e\n" });
    const c2 = await open(repo, { branch: "topic2", source });
    expect((await repo.api.c.post(`${changes(repo)}/${c2.number}/land`)).status).toBe(202);
    const landed = await settled(repo, c2.number);
    expect(landed.state).toBe("landed");
    expect([head2, moved]).not.toContain(landed.landed_commit);

    // The parent serves every object of the landed history: a clone is complete and fsck clean.
    const copy = join(w.g.root, "upstream-after-fork-landings");
    await w.g.ok(["clone", "-q", repo.url, copy]);
    await w.g.ok(["fsck", "--strict", "--no-dangling"], { cwd: copy });
    expect(await w.g.ok(["log", "-1", "--format=%P"], { cwd: copy })).toBe(`${moved} ${head2}`);
    for (const f of ["c.txt", "d.txt", "e.txt"]) expect(await Bun.file(join(copy, f)).exists()).toBe(true);
  }, 120_000);
});
