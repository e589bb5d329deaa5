// Raising RENDER_VERSION needs no migration (issue 28): a comment or review row rendered by an older
// renderer (render_version below RENDER_VERSION) is rendered again the first time it is read, on a
// worker thread as at write time, answered fresh, and written back after the read. In-process: the
// real context and services; the stale rows are inserted through the stores.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { User } from "../../../src/db/schema/index.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { createChange } from "../../../src/services/changes/changes.ts";
import { listComments, postComment, RENDER_VERSION } from "../../../src/services/changes/comments.ts";
import { listReviews, postReview } from "../../../src/services/changes/reviews.ts";
import * as cstore from "../../../src/services/changes/store-comments.ts";
import * as rstore from "../../../src/services/changes/store-reviews.ts";
import { changeByNumber } from "../../../src/services/changes/store.ts";
import type { Ctx } from "../../../src/services/context.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createCommit } from "../../../src/services/repos/commits.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { newId } from "../../../src/util/ids.ts";
import { openTestContext } from "../../helpers/context.ts";
import { eventually } from "../../helpers/receiver.ts";

const root = mkdtempSync(join(tmpdir(), "svc-rerender-"));
let ctx: Ctx & { close(): void };
let owner: Principal;
let olga: User;

const session = (user: User): Principal => ({ kind: "session", user, sessionId: "test" });

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: "http://svc.test", SVC_LOG: "error" });
  olga = await createUserWithOrg(ctx, { org: "acme", email: "olga@example.com", name: "Olga", password: "a long enough password", role: "owner" });
  owner = session(olga);
});

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

const STALE = "<p>rendered by an older renderer</p>";

test("a comment and a review stored with an older render_version are answered re-rendered and written back", async () => {
  await createRepo(ctx, owner, "acme", { name: "app" });
  const t = () => (ctx.facts.fresh(), openRepo(ctx, owner, "acme", "app"));
  await createCommit(ctx, await t(), { message: "base", operations: [{ op: "put", path: "base.txt", content: "base\n" }] });
  await createCommit(ctx, await t(), { branch: "feature", message: "feature", operations: [{ op: "put", path: "a.txt", content: "one\ntwo\n" }] });
  const change = await createChange(ctx, await t(), { title: "a change", branch: "feature" });
  // What the current renderer makes of the body (#N, org/repo#N and @handle linked).
  const body = `**see** #${change.number}, acme/app#${change.number} and @${olga.handle}`;
  const current = await postComment(ctx, await t(), change.number, { body });
  const review = await postReview(ctx, await t(), change.number, { verdict: "comment", body });
  expect(review.body_html).toBe(current.body_html);
  expect(current.body_html).toContain(`<a href="/acme/app/changes/${change.number}">acme/app#${change.number}</a>`);

  // Rows as an older renderer left them, inserted through the stores.
  const { repo } = await t();
  const changeRow = (await changeByNumber(ctx.db.read, repo.id, change.number))!;
  const [commentRow] = await cstore.commentsByIds(ctx.db.read, [current.id]);
  const [reviewRow] = await rstore.reviewsOf(ctx.db.read, [changeRow.id]);
  const oldComment = newId();
  const oldReview = newId();
  await ctx.db.transaction(async (tx) => {
    await cstore.insertComments(tx, [
      { ...commentRow!, id: oldComment, threadId: oldComment, bodyHtml: STALE, renderVersion: 0, createdAt: commentRow!.createdAt + 1 },
    ]);
    await rstore.insertReview(tx, { ...reviewRow!, id: oldReview, bodyHtml: STALE, renderVersion: 0, createdAt: reviewRow!.createdAt + 1 });
  });

  // Read: answered fresh.
  const comments = (await listComments(ctx, await t(), change.number, {})).comments;
  expect(comments.find((c) => c.id === oldComment)?.body_html).toBe(current.body_html);
  const reviews = (await listReviews(ctx, await t(), change.number)).reviews;
  expect(reviews.find((r) => r.id === oldReview)?.body_html).toBe(current.body_html);

  // Written back after the read (not inside it): the rows carry the fresh html and this renderer's version.
  const stored = async () => ({
    comment: (await cstore.commentById(ctx.db.read, changeRow.id, oldComment))!,
    review: (await rstore.reviewById(ctx.db.read, changeRow.id, oldReview))!,
  });
  const after = await eventually(
    async () => {
      const s = await stored();
      return s.comment.renderVersion === RENDER_VERSION && s.review.renderVersion === RENDER_VERSION && s;
    },
    30_000,
    "the re-rendered rows to be written back",
  );
  expect([after.comment.bodyHtml, after.review.bodyHtml]).toEqual([current.body_html, review.body_html]);
  // Rows already current were left alone (one write per stale row, not per read).
  expect((await cstore.commentById(ctx.db.read, changeRow.id, current.id))!.renderVersion).toBe(RENDER_VERSION);
});
