// Applying suggestions (issue 28), black-box: the real server, suggestions posted as line comments,
// applied through POST …/changes/{n}/suggestions/apply, and the result read back with the real git
// client (content, modes, line endings, trailers, parents).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitFiles, initRepo, lsRemote, repoUrl } from "../../helpers/git.ts";
import { commitOk, newRepo, put, repoApi, startWorld, type Person, type TestRepo, type World } from "../../helpers/content.ts";
import { caller } from "../../helpers/api.ts";
import { dbRows, until } from "../ci/helpers.ts";

const ORG = "sug";
let w: World;

beforeAll(async () => {
  w = await startWorld(ORG);
});
afterAll(async () => w.close());

const FILE = ["one", "two", "three", "four", "five", "six", "seven", "eight"].map((l) => `${l}\n`).join("");

/** A repository with main (a.txt, b.txt) and a change from branch `feature` that edits both. */
async function seeded(name: string, files: Record<string, string | Uint8Array> = { "a.txt": FILE, "b.txt": FILE }) {
  const repo = await newRepo(w, name);
  const dir = await initRepo(w.g, name);
  await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  const main = await commitFiles(w.g, dir, { "base.txt": "base\n" }, "seed");
  await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
  await w.g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
  const head = await commitFiles(w.g, dir, files, "feature");
  await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
  const r = await repo.api.c.post(`${repo.api.base}/changes`, { title: "a change", branch: "feature" });
  if (r.status !== 201) throw new Error(`change: ${r.status} ${JSON.stringify(r.body)}`);
  return { repo, dir, main, head, number: r.body.number as number };
}

const userOf = (p: Person) => dbRows<{ id: string; handle: string; name: string }>(w.server, "SELECT id, handle, name FROM users WHERE email = ?", p.email)[0]!;
const change = async (repo: TestRepo, n: number) => (await repo.api.c.get(`${repo.api.base}/changes/${n}`)).body;
const apply = (repo: TestRepo, n: number, body: Record<string, unknown>, who: Person = w.owner) =>
  repoApi(w.server, ORG, repo.name, who.token).c.post(`${repo.api.base}/changes/${n}/suggestions/apply`, body);

/** Posts a line comment on the new side whose body holds a suggestion, as `who`; answers its id. */
async function suggest(repo: TestRepo, n: number, who: Person, at: { path: string; line: number; start_line?: number }, suggestion: string): Promise<string> {
  const body = `Try this:\n\n\`\`\`suggestion\n${suggestion}\`\`\`\n`;
  const r = await repoApi(w.server, ORG, repo.name, who.token).c.post(`${repo.api.base}/changes/${n}/comments`, { body, side: "new", ...at });
  if (r.status !== 201) throw new Error(`comment: ${r.status} ${JSON.stringify(r.body)}`);
  expect(r.body.suggestion).toMatchObject({ applicable: true, applied_commit: null });
  return r.body.id;
}

/** The comment rows as stored (applied commit, resolution). */
const commentRow = (id: string) =>
  dbRows<{ applied_commit: string | null; resolved: number }>(w.server, "SELECT applied_commit, resolved FROM change_comments WHERE id = ?", id)[0]!;

/** A fresh clone of the repository's `branch` (the real git client reads what the server serves). */
async function cloned(repo: TestRepo, branch = "feature"): Promise<string> {
  const dir = join(w.g.root, `clone-${repo.name}-${crypto.randomUUID()}`);
  await w.g.ok(["clone", "-q", "-b", branch, repo.url, dir]);
  return dir;
}

describe("applying suggestions", () => {
  test("one suggestion: a commit by the applier with the new content, a Co-authored-by trailer, the thread resolved, a new patchset", async () => {
    const { repo, head, number } = await seeded("one");
    const bo = userOf(w.member);
    const id = await suggest(repo, number, w.member, { path: "a.txt", start_line: 2, line: 3 }, "TWO\nTHREE\nand a half\n");
    const r = await apply(repo, number, { comment_ids: [id] });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ commit: expect.stringMatching(/^[0-9a-f]{40}$/), branch: "feature", applied: [id] });
    const commit = r.body.commit as string;

    const dir = await cloned(repo);
    expect(await w.g.ok(["rev-parse", "HEAD"], { cwd: dir })).toBe(commit);
    expect(await w.g.ok(["rev-parse", "HEAD^"], { cwd: dir })).toBe(head);
    expect(await w.g.ok(["show", "HEAD:a.txt"], { cwd: dir })).toBe("one\nTWO\nTHREE\nand a half\nfour\nfive\nsix\nseven\neight");
    expect(await w.g.ok(["log", "-1", "--format=%an <%ae>", "HEAD"], { cwd: dir })).toBe(`${w.owner.name} <${w.owner.email}>`);
    const host = new URL(w.server.url).hostname;
    expect(await w.g.ok(["log", "-1", "--format=%B", "HEAD"], { cwd: dir })).toBe(
      `Apply suggestion from @${bo.handle}\n\nCo-authored-by: ${bo.name} <${bo.handle}@users.noreply.${host}>`,
    );
    expect(await w.g.ok(["log", "-1", "--format=%(trailers:key=Co-authored-by,valueonly)", "HEAD"], { cwd: dir })).toBe(
      `${bo.name} <${bo.handle}@users.noreply.${host}>`,
    );
    await w.g.ok(["fsck", "--strict"], { cwd: dir });

    expect(await change(repo, number)).toMatchObject({ head: commit, patchset: 2 });
    expect(commentRow(id)).toEqual({ applied_commit: commit, resolved: 1 });
    const listed = (await repo.api.c.get(`${repo.api.base}/changes/${number}/comments`)).body.comments.find((c: { id: string }) => c.id === id);
    expect(listed).toMatchObject({ resolved: true, suggestion: { applicable: false, applied_commit: commit } });
    // Applied once: again is 422, and nothing moves.
    const again = await apply(repo, number, { comment_ids: [id] });
    expect(again.status).toBe(422);
    expect(again.body.error).toContain("already applied");
    expect((await lsRemote(w.g, repo.url))["refs/heads/feature"]).toBe(commit);
  });

  test("three suggestions on two files: one commit, one parent, exactly those hunks; suggester = applier adds no trailer", async () => {
    const { repo, head, number } = await seeded("three");
    const ids = [
      await suggest(repo, number, w.member, { path: "a.txt", line: 1 }, "ONE\n"),
      await suggest(repo, number, w.owner, { path: "a.txt", start_line: 6, line: 8 }, ""),
      await suggest(repo, number, w.admin, { path: "b.txt", line: 4 }, "4\n4b\n"),
    ];
    const r = await apply(repo, number, { comment_ids: ids });
    expect(r.status).toBe(201);
    const dir = await cloned(repo);
    expect(await w.g.ok(["rev-list", "--parents", "-1", "HEAD"], { cwd: dir })).toBe(`${r.body.commit} ${head}`);
    expect(await w.g.ok(["diff", "--numstat", "HEAD^", "HEAD"], { cwd: dir })).toBe("1\t4\ta.txt\n2\t1\tb.txt");
    expect(await w.g.ok(["show", "HEAD:a.txt"], { cwd: dir })).toBe("ONE\ntwo\nthree\nfour\nfive");
    expect(await w.g.ok(["show", "HEAD:b.txt"], { cwd: dir })).toBe("one\ntwo\nthree\n4\n4b\nfive\nsix\nseven\neight");
    const message = await w.g.ok(["log", "-1", "--format=%B", "HEAD"], { cwd: dir });
    const [member, admin] = [userOf(w.member), userOf(w.admin)];
    expect(message.split("\n")[0]).toBe("Apply suggestions from code review");
    const trailers = await w.g.ok(["log", "-1", "--format=%(trailers:key=Co-authored-by,valueonly)", "HEAD"], { cwd: dir });
    expect(trailers.split("\n").map((l) => l.split(" <")[0])).toEqual([member.name, admin.name]);
    for (const id of ids) expect(commentRow(id).applied_commit).toBe(r.body.commit);
  });

  test("a CRLF file keeps CRLF and no final newline; an executable keeps its mode; the caller's message is used", async () => {
    const repo = await newRepo(w, "crlf");
    const dir = await initRepo(w.g, "crlf");
    await w.g.ok(["config", "core.autocrlf", "false"], { cwd: dir });
    await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "base.txt": "base\n" }, "seed");
    await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
    await w.g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
    writeFileSync(join(dir, "win.txt"), "alpha\r\nbeta\r\ngamma");
    writeFileSync(join(dir, "run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(dir, "run.sh"), 0o755);
    await w.g.ok(["add", "-A"], { cwd: dir });
    await w.g.ok(["commit", "-q", "-m", "files"], { cwd: dir });
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    const number = (await repo.api.c.post(`${repo.api.base}/changes`, { title: "crlf", branch: "feature" })).body.number;
    const ids = [
      await suggest(repo, number, w.member, { path: "win.txt", start_line: 2, line: 3 }, "BETA\nGAMMA\nDELTA\n"),
      await suggest(repo, number, w.member, { path: "run.sh", line: 2 }, "echo hello\n"),
    ];
    const r = await apply(repo, number, { comment_ids: ids, message: "Take the review's wording" });
    expect(r.status).toBe(201);
    const clone = await cloned(repo);
    const bytes = await w.g.ok(["cat-file", "blob", "HEAD:win.txt"], { cwd: clone });
    expect(JSON.stringify(bytes)).toBe(JSON.stringify("alpha\r\nBETA\r\nGAMMA\r\nDELTA"));
    expect(await w.g.ok(["ls-tree", "HEAD", "run.sh"], { cwd: clone })).toStartWith("100755 blob ");
    expect(await w.g.ok(["show", "HEAD:run.sh"], { cwd: clone })).toBe("#!/bin/sh\necho hello");
    const member = userOf(w.member);
    expect(await w.g.ok(["log", "-1", "--format=%B", "HEAD"], { cwd: clone })).toStartWith(`Take the review's wording\n\nCo-authored-by: ${member.name} <`);
  });

  test("lines moved by a push but unchanged apply where they are now; lines changed by a push are 409 with the head", async () => {
    const { repo, dir, number } = await seeded("moved");
    const moved = await suggest(repo, number, w.member, { path: "a.txt", start_line: 4, line: 5 }, "FOUR\nFIVE\n");
    const changed = await suggest(repo, number, w.member, { path: "b.txt", line: 2 }, "TWO\n");
    // Two lines inserted above a.txt's commented lines; b.txt's commented line rewritten.
    const head2 = await commitFiles(w.g, dir, { "a.txt": `zero\nhalf\n${FILE}`, "b.txt": FILE.replace("two\n", "two!\n") }, "move");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    expect(await change(repo, number)).toMatchObject({ head: head2, patchset: 2 });

    const stale = await apply(repo, number, { comment_ids: [changed] });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ error: expect.stringContaining("changed since"), current: head2, comment_id: changed, path: "b.txt" });

    const r = await apply(repo, number, { comment_ids: [moved] });
    expect(r.status).toBe(201);
    const clone = await cloned(repo);
    expect(await w.g.ok(["show", "HEAD:a.txt"], { cwd: clone })).toBe("zero\nhalf\none\ntwo\nthree\nFOUR\nFIVE\nsix\nseven\neight");
    expect(await w.g.ok(["rev-parse", "HEAD^"], { cwd: clone })).toBe(head2);
  });

  test("a head that moved since the caller looked is 409 with the current head; nothing is written", async () => {
    const { repo, head, number } = await seeded("raced");
    const id = await suggest(repo, number, w.member, { path: "a.txt", line: 1 }, "ONE\n");
    const pushed = (await commitOk(repo.api, { branch: "feature", operations: [put("c.txt", "c\n")] })).commit;
    const r = await apply(repo, number, { comment_ids: [id], head });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ error: expect.stringContaining("moved"), current: pushed });
    expect((await lsRemote(w.g, repo.url))["refs/heads/feature"]).toBe(pushed);
    expect(commentRow(id)).toEqual({ applied_commit: null, resolved: 0 });
  });

  test("refusals: overlapping 422, a plain comment 422, another change's comment 422, a viewer 403, anonymous 401", async () => {
    const { repo, number } = await seeded("refused");
    const a = await suggest(repo, number, w.member, { path: "a.txt", start_line: 2, line: 4 }, "x\n");
    const b = await suggest(repo, number, w.member, { path: "a.txt", start_line: 4, line: 5 }, "y\n");
    const overlap = await apply(repo, number, { comment_ids: [a, b] });
    expect(overlap.status).toBe(422);
    expect(overlap.body.error).toContain("overlapping");

    const plain = await repo.api.c.post(`${repo.api.base}/changes/${number}/comments`, { body: "just a remark", path: "a.txt", line: 1, side: "new" });
    expect(plain.status).toBe(201);
    const notSuggestion = await apply(repo, number, { comment_ids: [plain.body.id] });
    expect(notSuggestion.status).toBe(422);
    expect(notSuggestion.body.error).toContain("not a suggestion");

    const other = await seeded("refused-other");
    const elsewhere = await suggest(other.repo, other.number, w.member, { path: "a.txt", line: 1 }, "z\n");
    const foreign = await apply(repo, number, { comment_ids: [elsewhere] });
    expect(foreign.status).toBe(422);
    expect(foreign.body.error).toContain("not a comment of change");

    const viewer = await apply(repo, number, { comment_ids: [a] }, w.viewer);
    expect(viewer.status).toBe(403);
    const anonymous = await caller(w.server).post(`${repo.api.base}/changes/${number}/suggestions/apply`, { comment_ids: [a] });
    expect(anonymous.status).toBe(401);
    expect((await apply(repo, number, { comment_ids: [] })).status).toBe(400);
    expect((await apply(repo, 999, { comment_ids: [a] })).status).toBe(404);
    expect(commentRow(a)).toEqual({ applied_commit: null, resolved: 0 });
  });

  test("a symbolic link, a file that is not UTF-8 and a file turned binary since are 422 naming the file; nothing is written", async () => {
    const latin = Uint8Array.from([...Buffer.from("caf"), 0xe9, 0x0a, ...Buffer.from("two\n")]);
    const { repo, dir, number } = await seeded("kinds", { "a.txt": FILE, "latin.txt": latin });
    symlinkSync("a.txt", join(dir, "link"));
    await commitFiles(w.g, dir, {}, "a link");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    const link = await suggest(repo, number, w.member, { path: "link", line: 1 }, "b.txt\n");
    const notUtf8 = await suggest(repo, number, w.member, { path: "latin.txt", line: 2 }, "TWO\n");
    const turned = await suggest(repo, number, w.member, { path: "a.txt", line: 1 }, "ONE\n");
    const head = await commitFiles(w.g, dir, { "a.txt": `one\0${FILE}` }, "binary now");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    expect(await change(repo, number)).toMatchObject({ head, patchset: 3 });

    const refused = async (id: string) => {
      const r = await apply(repo, number, { comment_ids: [id] });
      return { status: r.status, error: r.body.error };
    };
    expect(await refused(link)).toEqual({ status: 422, error: "link is a symbolic link; suggestions apply to text files" });
    expect(await refused(notUtf8)).toEqual({ status: 422, error: "latin.txt is not UTF-8 text; suggestions apply to text files" });
    expect(await refused(turned)).toEqual({ status: 422, error: "a.txt is a binary file; suggestions apply to text files" });
    // One refused comment refuses the whole batch.
    expect((await apply(repo, number, { comment_ids: [notUtf8, link] })).status).toBe(422);
    expect((await lsRemote(w.g, repo.url))["refs/heads/feature"]).toBe(head);
    for (const id of [link, notUtf8, turned]) expect(commentRow(id)).toEqual({ applied_commit: null, resolved: 0 });
  });

  test("a change from a fork the applier cannot write to is 403 naming the fork", async () => {
    const upstream = await newRepo(w, "up", true);
    const dir = await initRepo(w.g, "up");
    await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "base.txt": "base\n" }, "seed");
    await w.g.ok(["push", "-q", upstream.url, "main"], { cwd: dir });
    // The outsider forks the public repository into their own org and opens a change from it.
    // A session: the outsider's token is bound to their own org.
    const outsider = caller(w.server, { cookie: w.outsider.cookie });
    const forked = await outsider.post(`/v1/orgs/${ORG}/repos/up/forks`, { org: w.outsider.org, name: "down" });
    expect(forked.status).toBe(202);
    await until("the fork to be ready", async () => (await outsider.get(`/v1/orgs/${w.outsider.org}/repos/down`)).body.fork_state === "ready");
    const forkUrl = repoUrl(w.server, w.outsider.org, "down", w.outsider.token);
    await w.g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
    await commitFiles(w.g, dir, { "a.txt": FILE }, "topic");
    await w.g.ok(["push", "-q", forkUrl, "topic"], { cwd: dir });
    const opened = await outsider.post(`${upstream.api.base}/changes`, {
      title: "from a fork",
      branch: "topic",
      source: { org: w.outsider.org, repo: "down" },
    });
    expect(opened.status).toBe(201);
    const id = await suggest(upstream, opened.body.number, w.owner, { path: "a.txt", line: 1 }, "ONE\n");
    const r = await apply(upstream, opened.body.number, { comment_ids: [id] });
    expect(r.status).toBe(403);
    expect(r.body.error).toContain(`${w.outsider.org}/down`);
    // The fork's owner may apply it: the commit lands on the fork's branch.
    const own = await outsider.post(`${upstream.api.base}/changes/${opened.body.number}/suggestions/apply`, { comment_ids: [id] });
    expect(own.status).toBe(201);
    expect((await lsRemote(w.g, forkUrl))["refs/heads/topic"]).toBe(own.body.commit);
  });
});
