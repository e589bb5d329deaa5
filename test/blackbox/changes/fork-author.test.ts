// A change from a fork on a public repository (issue 28), black-box: its author has no role in
// the upstream org, yet must be able to answer the review of their own change — reply, comment,
// post a `comment` review, resolve threads, edit and delete their own comments — while another
// signed-in person without a role there still may not comment (403), and approving one's own
// change stays 422.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { commitFiles, initRepo, repoUrl } from "../../helpers/git.ts";
import { newRepo, person, startWorld, type World } from "../../helpers/content.ts";
import { caller, expectError } from "../../helpers/api.ts";
import { until } from "../ci/helpers.ts";

const ORG = "fka";
let w: World;

beforeAll(async () => {
  w = await startWorld(ORG);
});
afterAll(async () => w.close());

test("the author of a change from a fork answers its review; a stranger may not comment", async () => {
  const upstream = await newRepo(w, "up", true);
  const dir = await initRepo(w.g, "up");
  await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  await commitFiles(w.g, dir, { "a.txt": "one\ntwo\nthree\n" }, "seed");
  await w.g.ok(["push", "-q", upstream.url, "main"], { cwd: dir });
  // The outsider (no role in ORG) forks the public repository and opens a change from the fork.
  const author = caller(w.server, { cookie: w.outsider.cookie });
  expect((await author.post(`/v1/orgs/${ORG}/repos/up/forks`, { org: w.outsider.org, name: "down" })).status).toBe(202);
  await until("the fork to be ready", async () => (await author.get(`/v1/orgs/${w.outsider.org}/repos/down`)).body.fork_state === "ready");
  await w.g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
  await commitFiles(w.g, dir, { "a.txt": "one\nTWO\nthree\n" }, "topic");
  await w.g.ok(["push", "-q", repoUrl(w.server, w.outsider.org, "down", w.outsider.token), "topic"], { cwd: dir });
  const opened = await author.post(`${upstream.api.base}/changes`, { title: "from a fork", branch: "topic", source: { org: w.outsider.org, repo: "down" } });
  expect(opened.status).toBe(201);
  const base = `${upstream.api.base}/changes/${opened.body.number}`;

  // A maintainer comments on a line.
  const owner = caller(w.server, { cookie: w.owner.cookie });
  const remark = await owner.post(`${base}/comments`, { body: "Why upper case?", path: "a.txt", line: 2 });
  expect(remark.status).toBe(201);

  // The change's author replies, comments, reviews with a comment, edits and deletes their own, resolves the thread.
  const reply = await author.post(`${base}/comments`, { body: "To match the spec.", in_reply_to: remark.body.id });
  expect(reply.status).toBe(201);
  expect(reply.body.thread_id).toBe(remark.body.id);
  const general = await author.post(`${base}/comments`, { body: "Ready for another look." });
  expect(general.status).toBe(201);
  expect((await author.patch(`${base}/comments/${general.body.id}`, { body: "Ready for another look, thanks." })).status).toBe(200);
  expect((await author.delete(`${base}/comments/${general.body.id}`)).status).toBe(204);
  const review = await author.post(`${base}/reviews`, { verdict: "comment", body: "Addressed.", comments: [{ body: "here", path: "a.txt", line: 2 }] });
  expect(review.status).toBe(201);
  expect(review.body.comments.length).toBe(1);
  const resolved = await author.patch(`${base}/comments/${remark.body.id}`, { resolved: true });
  expect(resolved.status).toBe(200);
  expect(resolved.body.resolved).toBe(true);
  // Still not their own approval, and not someone else's comment to edit or delete.
  expectError(await author.post(`${base}/reviews`, { verdict: "approve" }), 422);
  expect((await author.patch(`${base}/comments/${remark.body.id}`, { body: "mine now" })).status).toBe(403);
  expect((await author.delete(`${base}/comments/${remark.body.id}`)).status).toBe(403);

  // Another signed-in person without a role in ORG reads the public change but may not discuss it.
  const strangerP = await person(w.server, `${ORG}-strangers`, "owner");
  const stranger = caller(w.server, { cookie: strangerP.cookie });
  expect((await stranger.get(`${base}/comments`)).status).toBe(200);
  expectError(await stranger.post(`${base}/comments`, { body: "drive-by" }), 403, /role/);
  expectError(await stranger.post(`${base}/reviews`, { verdict: "comment", body: "drive-by" }), 403, /role/);
  expectError(await stranger.patch(`${base}/comments/${remark.body.id}`, { resolved: false }), 403);
  // So nobody may ask them to review it (they could not): the same 422 as for a handle that names nobody.
  const handleOf = async (p: { cookie: string }) => (await caller(w.server, p).get("/v1/auth/me")).body.handle as string;
  const strangerHandle = await handleOf(strangerP);
  const askStranger = await owner.post(`${base}/reviewers`, { handles: [strangerHandle] });
  const askNobody = await owner.post(`${base}/reviewers`, { handles: ["nobody-at-all"] });
  expectError(askStranger, 422);
  expect(askStranger.body.error).toBe(askNobody.body.error.replace("nobody-at-all", strangerHandle));
  // A viewer of the org may be asked.
  expect((await owner.post(`${base}/reviewers`, { handles: [await handleOf(w.viewer)] })).status).toBe(200);

  // The conversation shows the author's reply; the web page offers them the comment form.
  const listed = (await owner.get(`${base}/comments`)).body.comments.map((c: { id: string }) => c.id);
  expect(listed).toContain(reply.body.id);
  const page = await author.get(`/${ORG}/up/changes/${opened.body.number}`);
  expect(page.status).toBe(200);
  expect(page.body as string).toContain('class="stack-wide general-comment"');
});
