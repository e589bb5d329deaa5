// Comments after a push (issue 28 plan §3.1 "Outdated"), black-box: real `git push` and a real
// rebase move the change; a comment whose lines were edited is outdated, one whose lines only
// moved follows them. The read right after the push (mapped in memory) agrees with what the
// `change.reanchor` job stores (waited for by polling the stored watermark: an event, not a sleep).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitFiles, initRepo } from "../../helpers/git.ts";
import { newRepo, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { dbRows, until } from "../ci/helpers.ts";

const ORG = "anchors";
let w: World;

beforeAll(async () => {
  w = await startWorld(ORG);
});
afterAll(async () => w.close());

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);
const text = (lines: string[]) => lines.map((l) => `${l}\n`).join("");
const BASE = numbered(30);
/** The change: lines 10 and 20 rewritten. */
const FEATURE = BASE.map((l, i) => (i === 9 ? "LINE TEN" : i === 19 ? "LINE TWENTY" : l));

async function seeded(name: string): Promise<{ repo: TestRepo; dir: string }> {
  const repo = await newRepo(w, name);
  const dir = await initRepo(w.g, name);
  await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(w.g, dir, { "f.txt": text(BASE), "other.txt": "x\n" }, "seed");
  await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
  await w.g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
  await commitFiles(w.g, dir, { "f.txt": text(FEATURE) }, "feature");
  await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
  const r = await repo.api.c.post(`${repo.api.base}/changes`, { title: "ten and twenty", branch: "feature" });
  if (r.status !== 201) throw new Error(`create failed ${r.status} ${JSON.stringify(r.body)}`);
  return { repo, dir };
}

async function comment(repo: TestRepo, body: Record<string, unknown>) {
  const r = await repo.api.c.post(`${repo.api.base}/changes/1/comments`, body);
  if (r.status !== 201) throw new Error(`comment failed ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string };
}

type Shown = { outdated: boolean; current_line: number | null; current_start_line: number | null; patchset: number; line: number | null };
async function shown(repo: TestRepo): Promise<Map<string, Shown>> {
  const r = await repo.api.c.get(`${repo.api.base}/changes/1/comments`);
  expect(r.status).toBe(200);
  return new Map(
    (r.body.comments as (Shown & { id: string })[]).map((c) => [
      c.id,
      { outdated: c.outdated, current_line: c.current_line, current_start_line: c.current_start_line, patchset: c.patchset, line: c.line },
    ]),
  );
}

/** Waits until the job stored every line comment of the repository's change on `patchset`. */
async function reanchored(ids: string[], patchset: number): Promise<void> {
  await until(`comments anchored on patchset ${patchset}`, () => {
    const rows = dbRows<{ anchored_patchset: number }>(
      w.server,
      `SELECT anchored_patchset FROM change_comments WHERE id IN (${ids.map(() => "?").join(",")})`,
      ...ids,
    );
    return rows.length === ids.length && rows.every((r) => r.anchored_patchset === patchset);
  });
}

async function pushFeature(dir: string, repo: TestRepo, lines: string[], extra: Record<string, string> = {}) {
  await commitFiles(w.g, dir, { "f.txt": text(lines), ...extra }, "more");
  await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
}

describe("after a push", () => {
  test("edited lines: outdated (still listed on patchset 1); moved lines: followed; untouched file: same line; the read before the job agrees with the job", async () => {
    const { repo, dir } = await seeded("push");
    const ten = await comment(repo, { body: "ten", path: "f.txt", line: 10 });
    const twenty = await comment(repo, { body: "twenty", path: "f.txt", start_line: 18, line: 20 });
    const general = await comment(repo, { body: "overall" });

    // Patchset 2: line 10 edited again, two lines inserted at the top.
    const second = ["new a", "new b", ...FEATURE.map((l, i) => (i === 9 ? "LINE TEN, again" : l))];
    await pushFeature(dir, repo, second);
    expect((await repo.api.c.get(`${repo.api.base}/changes/1`)).body.patchset).toBe(2);
    const early = await shown(repo);
    expect(early.get(ten.id)).toEqual({ outdated: true, current_line: null, current_start_line: null, patchset: 1, line: 10 });
    expect(early.get(twenty.id)).toEqual({ outdated: false, current_line: 22, current_start_line: 20, patchset: 1, line: 20 });
    expect(early.get(general.id)).toMatchObject({ outdated: false, current_line: null });
    await reanchored([ten.id, twenty.id], 2);
    expect(await shown(repo)).toEqual(early);
    expect(dbRows(w.server, "SELECT outdated, cur_line, cur_start_line FROM change_comments WHERE id = ?", twenty.id)).toEqual([
      { outdated: 0, cur_line: 22, cur_start_line: 20 },
    ]);

    // Patchset 3 leaves f.txt alone: the same lines; outdated stays outdated.
    await commitFiles(w.g, dir, { "other.txt": "y\n" }, "other");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    const third = await shown(repo);
    expect(third.get(twenty.id)).toMatchObject({ outdated: false, current_line: 22, current_start_line: 20 });
    expect(third.get(ten.id)).toMatchObject({ outdated: true });
    await reanchored([ten.id, twenty.id], 3);
    expect(await shown(repo)).toEqual(third);

    // Patchset 4 puts line 10 back as it was on patchset 1: outdated is sticky (as GitHub).
    await pushFeature(
      dir,
      repo,
      second.map((l) => (l === "LINE TEN, again" ? "LINE TEN" : l)),
    );
    expect((await shown(repo)).get(ten.id)).toMatchObject({ outdated: true });
    // A new comment on the current patchset is where it was made.
    const fresh = await comment(repo, { body: "now", path: "f.txt", line: 22 });
    expect((await shown(repo)).get(fresh.id)).toEqual({ outdated: false, current_line: 22, current_start_line: null, patchset: 4, line: 22 });
  });

  test("drafts made on patchset 1 and published after a push stay anchored there: edited lines outdated, moved ones followed, stored by the job", async () => {
    const { repo, dir } = await seeded("drafts");
    const ten = await comment(repo, { body: "ten", path: "f.txt", line: 10, draft: true });
    const twenty = await comment(repo, { body: "twenty", path: "f.txt", line: 20, draft: true });
    // The drafts wait while the push moves the change (the job maps published comments only).
    await pushFeature(dir, repo, ["new a", ...FEATURE.map((l, i) => (i === 9 ? "LINE TEN, again" : l))]);
    expect((await repo.api.c.get(`${repo.api.base}/changes/1`)).body.patchset).toBe(2);
    const review = await repo.api.c.post(`${repo.api.base}/changes/1/reviews`, { verdict: "comment" });
    expect(review.status).toBe(201);
    expect(review.body.patchset).toBe(2);
    const after = await shown(repo);
    expect(after.get(ten.id)).toEqual({ outdated: true, current_line: null, current_start_line: null, patchset: 1, line: 10 });
    expect(after.get(twenty.id)).toEqual({ outdated: false, current_line: 21, current_start_line: null, patchset: 1, line: 20 });
    // The review queued the re-anchoring of the drafts it published.
    await reanchored([ten.id, twenty.id], 2);
    expect(await shown(repo)).toEqual(after);
  });

  test("a deleted file outdates its comments", async () => {
    const { repo, dir } = await seeded("deleted");
    const c = await comment(repo, { body: "ten", path: "f.txt", line: 20 });
    await w.g.ok(["rm", "-q", "f.txt"], { cwd: dir });
    await w.g.ok(["commit", "-q", "-m", "drop f"], { cwd: dir });
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    expect((await shown(repo)).get(c.id)).toMatchObject({ outdated: true, current_line: null });
    await reanchored([c.id], 2);
    expect((await shown(repo)).get(c.id)).toMatchObject({ outdated: true, current_line: null });
  });

  test("old side after a rebase onto a target that changed the lines: outdated; old lines the target only moved: followed", async () => {
    const { repo, dir } = await seeded("rebase");
    const kept = await comment(repo, { body: "old ten", path: "f.txt", line: 10, side: "old" });
    const touched = await comment(repo, { body: "old 17-18", path: "f.txt", start_line: 17, line: 18, side: "old" });
    // The target gains a header line and edits line 17; the feature is rebased onto it.
    await w.g.ok(["checkout", "-q", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "f.txt": text(["header", ...BASE.map((l, i) => (i === 16 ? "MAIN SEVENTEEN" : l))]) }, "target moves");
    await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
    await w.g.ok(["checkout", "-q", "feature"], { cwd: dir });
    await w.g.ok(["rebase", "-q", "main"], { cwd: dir });
    await w.g.ok(["push", "-q", "-f", repo.url, "feature"], { cwd: dir });
    const change = (await repo.api.c.get(`${repo.api.base}/changes/1`)).body;
    expect(change.patchset).toBe(2);
    const after = await shown(repo);
    expect(after.get(kept.id)).toEqual({ outdated: false, current_line: 11, current_start_line: null, patchset: 1, line: 10 });
    expect(after.get(touched.id)).toMatchObject({ outdated: true, current_line: null });
    await reanchored([kept.id, touched.id], 2);
    expect(await shown(repo)).toEqual(after);
  });
});

describe("big files (diffed on a worker thread)", () => {
  test("the hunk check and the mapping after a push work past the 64 KiB the event loop takes", async () => {
    const repo = await newRepo(w, "big");
    const dir = await initRepo(w.g, "big");
    const big = numbered(5000);
    await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
    await commitFiles(w.g, dir, { "big.txt": text(big) }, "seed");
    await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
    await w.g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
    const changed = big.map((l, i) => (i === 2999 ? "LINE 3000" : l));
    await commitFiles(w.g, dir, { "big.txt": text(changed) }, "feature");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    expect((await repo.api.c.post(`${repo.api.base}/changes`, { title: "big", branch: "feature" })).status).toBe(201);
    const far = await repo.api.c.post(`${repo.api.base}/changes/1/comments`, { body: "far", path: "big.txt", line: 100 });
    expect(far.status).toBe(422);
    expect(far.body.error).toMatch(/not part of the diff/);
    const c = await comment(repo, { body: "here", path: "big.txt", start_line: 2998, line: 3000 });
    await commitFiles(w.g, dir, { "big.txt": text(["top 1", "top 2", ...changed]) }, "shift");
    await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
    expect((await shown(repo)).get(c.id)).toMatchObject({ outdated: false, current_start_line: 3000, current_line: 3002 });
    await reanchored([c.id], 2);
    expect((await shown(repo)).get(c.id)).toMatchObject({ outdated: false, current_start_line: 3000, current_line: 3002 });
  });
});
