// Reviews and requested reviewers (issue 28), black-box: the real server, a change opened from a
// branch pushed by git, people of every role reviewing through the API, the database read only to
// see the events recorded.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { castPerson, castReviewers, pushMainAndFeature, type Cast } from "../../helpers/cast.ts";
import { mintTokenWithId } from "../../helpers/git.ts";
import { newRepo, startWorld, type TestRepo, type World } from "../../helpers/content.ts";
import { dbRows } from "../ci/helpers.ts";
import { client } from "../../helpers/server.ts";

const ORG = "rev";
let w: World;

const people: Record<string, Cast> = {};

beforeAll(async () => {
  w = await startWorld(ORG);
  const [cast, eve] = await Promise.all([castReviewers(w.server, ORG), castPerson(w.server, `${ORG}-else`, "eve", "owner")]);
  Object.assign(people, cast, { eve });
});
afterAll(async () => w.close());

const as = (who: Cast, via: "token" | "cookie" = "token") => client(w.server, via === "token" ? { token: who.token } : { cookie: who.cookie });

/** A private (or public) repository with main and a branch `feature` pushed by git; ada opens change #1 from it. */
async function opened(name: string, isPublic = false): Promise<{ repo: TestRepo; base: string }> {
  const repo = await newRepo(w, name, isPublic);
  await pushMainAndFeature(w.g, name, repo.url, { "a.txt": "a\nmore\n", "big.txt": Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join("") });
  const base = `${repo.api.base}/changes`;
  const r = await as(people.ada!).post(base, { title: "More a", branch: "feature" });
  expect(r.status).toBe(201);
  return { repo, base: `${base}/1` };
}

describe("reviews", () => {
  test("approve, request_changes and comment: 201 shapes, listed oldest first, change.reviewed recorded", async () => {
    const { base } = await opened("verdicts");
    const change = (await as(people.ada!).get(base)).body;
    const approve = await as(people.bo!).post(`${base}/reviews`, { verdict: "approve", body: "LGTM" });
    expect(approve.status).toBe(201);
    expect(approve.body).toEqual({
      id: expect.any(String),
      author: { user_id: people.bo!.id, handle: "bo" },
      verdict: "approve",
      body: "LGTM",
      body_html: "<p>LGTM</p>\n",
      patchset: 1,
      head: change.head,
      dismissed: false,
      dismissed_reason: null,
      created_at: expect.any(Number),
      comments: [],
    });
    const rc = await as(people.dee!).post(`${base}/reviews`, { verdict: "request_changes", body: "needs tests" });
    expect(rc.status).toBe(201);
    // A viewer signed in (a session covers repo:write scope) may comment.
    const cm = await as(people.cy!, "cookie").post(`${base}/reviews`, { verdict: "comment", body: "question for @bo about #1 <script>x</script>" });
    expect(cm.status).toBe(201);
    // The body is rendered like a comment's: sanitized, `#N` and `@handle` linked.
    expect(cm.body.body_html).toContain('<a href="/bo">@bo</a>');
    expect(cm.body.body_html).toMatch(/<a href="\/[^"]+\/changes\/1">#1<\/a>/);
    expect(cm.body.body_html).not.toContain("<script>");

    const list = await as(people.ada!).get(`${base}/reviews`);
    expect(list.status).toBe(200);
    expect(list.body.reviews.map((r: { verdict: string; author: { handle: string } }) => [r.author.handle, r.verdict])).toEqual([
      ["bo", "approve"],
      ["dee", "request_changes"],
      ["cy", "comment"],
    ]);
    const events = dbRows<{ payload: string; actor_user_id: string }>(
      w.server,
      "SELECT payload, actor_user_id FROM events WHERE kind = 'change.reviewed' ORDER BY created_at",
    );
    expect(events.map((e) => JSON.parse(e.payload))).toContainEqual({
      change: 1,
      review: { id: approve.body.id, verdict: "approve", author: { user_id: people.bo!.id, handle: "bo" }, patchset: 1 },
      comments: 0,
    });

    // The change shows each reviewer's state.
    const after = (await as(people.ada!).get(base)).body;
    expect(after.reviewers).toEqual([
      { user_id: people.bo!.id, handle: "bo", state: "approved", requested: false },
      { user_id: people.dee!.id, handle: "dee", state: "changes_requested", requested: false },
      { user_id: people.cy!.id, handle: "cy", state: "commented", requested: false },
    ]);
    // A later comment review keeps a standing verdict; a new verdict replaces it.
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "comment", body: "nit" })).status).toBe(201);
    expect((await as(people.dee!).post(`${base}/reviews`, { verdict: "approve" })).status).toBe(201);
    const states = (await as(people.ada!).get(base)).body.reviewers.map((r: { handle: string; state: string }) => `${r.handle}:${r.state}`);
    expect(states).toEqual(["bo:approved", "dee:approved", "cy:commented"]);
  });

  test("a review with 20 line comments is one transaction: all 201 with review_id, or none on a bad item (with its index)", async () => {
    const { base } = await opened("batch");
    const comments = Array.from({ length: 20 }, (_, i) => ({ body: `about line ${i + 1}`, path: "big.txt", line: i + 1 }));
    const bad = await as(people.bo!).post(`${base}/reviews`, {
      verdict: "request_changes",
      body: "see inline",
      comments: [...comments.slice(0, 5), { body: "nowhere", path: "big.txt", line: 999 }, ...comments.slice(5)],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.index).toBe(5);
    expect(bad.body.error).toStartWith("comments[5]: ");
    expect((await as(people.bo!).get(`${base}/reviews`)).body.reviews).toEqual([]);
    expect((await as(people.bo!).get(`${base}/comments`)).body.comments).toEqual([]);
    // A review's comments take no patchset of their own.
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "comment", comments: [{ ...comments[0], patchset: 1 }] })).status).toBe(201);

    const ok = await as(people.bo!).post(`${base}/reviews`, { verdict: "request_changes", body: "see inline", comments });
    expect(ok.status).toBe(201);
    expect(ok.body.comments).toHaveLength(20);
    for (const [i, c] of ok.body.comments.entries())
      expect(c).toMatchObject({ review_id: ok.body.id, path: "big.txt", line: i + 1, patchset: 1, body: `about line ${i + 1}` });
    const listed = (await as(people.ada!).get(`${base}/reviews`)).body.reviews;
    expect(listed[1]).toEqual(ok.body);
    expect((await as(people.ada!).get(`${base}/comments`)).body.comments).toHaveLength(21);
    // One change.reviewed event counting them; no change.commented for a review's own comments.
    const events = dbRows<{ kind: string; payload: string }>(
      w.server,
      "SELECT kind, payload FROM events WHERE kind LIKE 'change.%ed' AND payload LIKE ?",
      `%${ok.body.id}%`,
    );
    expect(events.map((e) => [e.kind, JSON.parse(e.payload).comments])).toEqual([["change.reviewed", 20]]);
  });

  test("refusals: own change, empty comment, unknown verdict, closed change, who may review", async () => {
    const { base } = await opened("refusals");
    const own = await as(people.ada!).post(`${base}/reviews`, { verdict: "approve" });
    expect(own.status).toBe(422);
    expect(own.body.error).toContain("own change");
    expect((await as(people.ada!).post(`${base}/reviews`, { verdict: "request_changes" })).status).toBe(422);
    // The author may comment on their own change.
    expect((await as(people.ada!).post(`${base}/reviews`, { verdict: "comment", body: "context" })).status).toBe(201);
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "comment" })).status).toBe(422);
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "lgtm" })).status).toBe(422);
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "approve", body: "x".repeat(65_537) })).status).toBe(422);

    // A read-only token stays read-only; a service token is no person; outsiders see nothing.
    const ro = await as(people.cy!).post(`${base}/reviews`, { verdict: "comment", body: "hi" });
    expect(ro.status).toBe(403);
    const svc = await mintTokenWithId(w.server, w.owner.cookie, ORG, { scopes: ["repo:write"], label: "svc", kind: "service" });
    expect((await client(w.server, { token: svc.token }).post(`${base}/reviews`, { verdict: "approve" })).status).toBe(403);
    const outsider = await as(people.eve!).post(`${base}/reviews`, { verdict: "approve" });
    const missing = await as(people.eve!).post(`${base.replace("refusals", "nope")}/reviews`, { verdict: "approve" });
    expect(outsider.status).toBe(404);
    expect(outsider.body).toEqual(missing.body);
    expect((await as(people.eve!).get(`${base}/reviews`)).status).toBe(404);
    expect((await client(w.server).get(`${base}/reviews`)).status).toBe(401);
    expect((await client(w.server).post(`${base}/reviews`, { verdict: "approve" })).status).toBe(401);

    // A closed change takes comments, not verdicts.
    expect((await as(people.ada!).patch(base, { state: "closed" })).status).toBe(200);
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "approve" })).status).toBe(409);
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "comment", body: "why closed?" })).status).toBe(201);
  });

  test("dismiss: repository admins only, once; the dismissed approval no longer counts as approved", async () => {
    const { base } = await opened("dismiss");
    const r = (await as(people.bo!).post(`${base}/reviews`, { verdict: "approve" })).body;
    expect((await as(people.bo!).post(`${base}/reviews/${r.id}/dismiss`, {})).status).toBe(403);
    const d = await as(people.dee!).post(`${base}/reviews/${r.id}/dismiss`, { message: "approved the wrong change" });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ id: r.id, dismissed: true, dismissed_reason: "manual", verdict: "approve" });
    expect((await as(people.dee!).post(`${base}/reviews/${r.id}/dismiss`, {})).status).toBe(409);
    expect((await as(people.dee!).post(`${base}/reviews/nope/dismiss`, {})).status).toBe(404);
    const reviewers = (await as(people.ada!).get(base)).body.reviewers;
    expect(reviewers).toEqual([{ user_id: people.bo!.id, handle: "bo", state: "commented", requested: false }]);
  });
});

describe("reviewers", () => {
  test("request, list with state, remove; 422 unknown, cannot read (same message), the author, > 20", async () => {
    const { base } = await opened("reviewers");
    const asked = await as(people.ada!).post(`${base}/reviewers`, { handles: ["bo", "CY"] });
    expect(asked.status).toBe(200);
    expect(asked.body).toEqual({
      reviewers: [
        { user_id: people.bo!.id, handle: "bo", state: "requested", requested: true },
        { user_id: people.cy!.id, handle: "cy", state: "requested", requested: true },
      ],
    });
    // Asking again changes nothing.
    expect((await as(people.ada!).post(`${base}/reviewers`, { handles: ["bo"] })).body.reviewers).toHaveLength(2);

    const unknown = await as(people.ada!).post(`${base}/reviewers`, { handles: ["nobody-here"] });
    const cannotRead = await as(people.ada!).post(`${base}/reviewers`, { handles: ["eve"] });
    expect(unknown.status).toBe(422);
    expect(cannotRead.status).toBe(422);
    expect(cannotRead.body.error).toBe(unknown.body.error.replace("nobody-here", "eve"));
    expect((await as(people.ada!).post(`${base}/reviewers`, { handles: ["ada"] })).status).toBe(422);
    expect((await as(people.ada!).post(`${base}/reviewers`, { handles: [] })).status).toBe(400);
    expect((await as(people.ada!).post(`${base}/reviewers`, { handles: Array.from({ length: 21 }, (_, i) => `p${i}`) })).status).toBe(400);
    // A viewer who is not the author may not ask.
    expect((await as(people.cy!, "cookie").post(`${base}/reviewers`, { handles: ["dee"] })).status).toBe(403);

    // bo approves: state approved, still requested.
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "approve" })).status).toBe(201);
    const change = (await as(people.ada!).get(base)).body;
    expect(change.reviewers).toEqual([
      { user_id: people.bo!.id, handle: "bo", state: "approved", requested: true },
      { user_id: people.cy!.id, handle: "cy", state: "requested", requested: true },
    ]);
    expect((await as(people.ada!).get(`${base}/reviewers`)).body.reviewers).toEqual(change.reviewers);

    expect((await as(people.bo!).delete(`${base}/reviewers/cy`)).status).toBe(204);
    expect((await as(people.bo!).delete(`${base}/reviewers/cy`)).status).toBe(404);
    expect((await as(people.ada!).get(`${base}/reviewers`)).body.reviewers.map((r: { handle: string }) => r.handle)).toEqual(["bo"]);
  });
});

describe("pending comments", () => {
  type C = { id: string; body: string; draft: boolean; review_id: string | null };
  const bodies = (r: { body: { comments: C[] } }) => r.body.comments.map((c) => c.body);

  test("a draft is its author's alone: listed to them with draft true, 404 to everyone else, no event; edit and delete it, resolve 422", async () => {
    const { base } = await opened("drafts-seen", true);
    const pub = await as(people.bo!).post(`${base}/comments`, { body: "published", path: "big.txt", line: 3 });
    expect(pub.status).toBe(201);
    expect(pub.body.draft).toBe(false);
    const d = await as(people.bo!).post(`${base}/comments`, { body: "pending on 5 @cy", path: "big.txt", line: 5, draft: true });
    expect(d.status).toBe(201);
    expect(d.body).toMatchObject({ draft: true, review_id: null, path: "big.txt", line: 5, resolved: false });
    const general = await as(people.bo!).post(`${base}/comments`, { body: "pending overall", draft: true });
    const reply = await as(people.bo!).post(`${base}/comments`, { body: "pending reply", in_reply_to: pub.body.id, draft: true });
    expect([general.status, reply.status]).toEqual([201, 201]);
    expect(reply.body).toMatchObject({ draft: true, thread_id: pub.body.id });

    // Listed to bo (flagged), to nobody else: another member, a viewer, anonymous on this public repository.
    const mine = await as(people.bo!).get(`${base}/comments`);
    expect(mine.body.comments.map((c: C) => [c.body, c.draft])).toEqual([
      ["published", false],
      ["pending on 5 @cy", true],
      ["pending overall", true],
      ["pending reply", true],
    ]);
    for (const other of [as(people.ada!), as(people.cy!, "cookie"), client(w.server)])
      expect(bodies(await other.get(`${base}/comments`))).toEqual(["published"]);
    // Another person's draft id is 404, as a missing comment: edit, resolve, delete, reply to it.
    const missing = await as(people.dee!).patch(`${base}/comments/nope`, { body: "x" });
    expect(missing.status).toBe(404);
    for (const r of [
      await as(people.dee!).patch(`${base}/comments/${d.body.id}`, { body: "x" }),
      await as(people.dee!).patch(`${base}/comments/${d.body.id}`, { resolved: true }),
      await as(people.dee!).delete(`${base}/comments/${d.body.id}`),
    ]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual(missing.body);
    }
    expect((await as(people.ada!).post(`${base}/comments`, { body: "hm", in_reply_to: d.body.id })).status).toBe(422);
    // Its author cannot reply to it either (edit it instead); nor resolve it.
    const ownReply = await as(people.bo!).post(`${base}/comments`, { body: "and", in_reply_to: d.body.id, draft: true });
    expect(ownReply.status).toBe(422);
    expect(ownReply.body.error).toContain("pending");
    const resolve = await as(people.dee!, "token").patch(`${base}/comments/${general.body.id}`, { resolved: true });
    expect(resolve.status).toBe(404);
    expect((await as(people.bo!).patch(`${base}/comments/${d.body.id}`, { resolved: true })).status).toBe(422);
    // The author edits (not marked edited: nobody saw it) and deletes.
    const edited = await as(people.bo!).patch(`${base}/comments/${d.body.id}`, { body: "pending on line 5" });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ body: "pending on line 5", draft: true, edited_at: null });
    expect((await as(people.bo!).delete(`${base}/comments/${general.body.id}`)).status).toBe(204);
    expect(bodies(await as(people.bo!).get(`${base}/comments`))).toEqual(["published", "pending on line 5", "pending reply"]);
    // A pending suggestion does not apply until published: 422 to its author, "no comment" to others.
    const sug = await as(people.bo!).post(`${base}/comments`, { body: "```suggestion\nLINE 6\n```", path: "big.txt", line: 6, draft: true });
    expect(sug.status).toBe(201);
    expect(sug.body.suggestion).toMatchObject({ applicable: false });
    const applyOwn = await as(people.bo!).post(`${base}/suggestions/apply`, { comment_ids: [sug.body.id] });
    expect(applyOwn.status).toBe(422);
    expect(applyOwn.body.error).toContain("pending");
    const applyOther = await as(people.dee!).post(`${base}/suggestions/apply`, { comment_ids: [sug.body.id] });
    expect(applyOther.status).toBe(422);
    expect(applyOther.body.error).toContain("is not a comment");
    // Drafts record nothing: no change.commented (only the published comment's).
    const events = dbRows<{ payload: string }>(w.server, "SELECT payload FROM events WHERE kind = 'change.commented' AND payload LIKE ?", `%${pub.body.id}%`);
    expect(events).toHaveLength(1);
    expect(dbRows(w.server, "SELECT id FROM events WHERE payload LIKE ? OR payload LIKE ?", `%${d.body.id}%`, `%${reply.body.id}%`)).toEqual([]);
    expect(dbRows(w.server, "SELECT id FROM thread_activity WHERE summary LIKE ?", `%${d.body.id}%`)).toEqual([]);
    // A read-only token writes no draft; anonymous 401.
    expect((await as(people.cy!).post(`${base}/comments`, { body: "ro", draft: true })).status).toBe(403);
    expect((await client(w.server).post(`${base}/comments`, { body: "anon", draft: true })).status).toBe(401);
  });

  test("a review publishes the reviewer's drafts with its own comments: review_id set, draft false, one change.reviewed counting them", async () => {
    const { base } = await opened("drafts-published");
    const root = (await as(people.ada!).post(`${base}/comments`, { body: "why 30 lines?", path: "big.txt", line: 30 })).body;
    const d1 = (await as(people.bo!).post(`${base}/comments`, { body: "pending one", path: "big.txt", line: 2, draft: true })).body;
    const d2 = (await as(people.bo!).post(`${base}/comments`, { body: "pending reply", in_reply_to: root.id, draft: true })).body;
    // Someone else's drafts stay theirs.
    const dee = (await as(people.dee!).post(`${base}/comments`, { body: "dee pending", path: "big.txt", line: 4, draft: true })).body;
    // A review item cannot itself be a draft.
    const bad = await as(people.bo!).post(`${base}/reviews`, { verdict: "comment", comments: [{ body: "x", draft: true }] });
    expect(bad.status).toBe(422);
    expect(bad.body.index).toBe(0);
    // A verdict refused leaves the drafts pending.
    expect((await as(people.ada!).post(`${base}/reviews`, { verdict: "approve" })).status).toBe(422);

    // A comment review with no body and no items is fine when drafts are pending.
    const review = await as(people.bo!).post(`${base}/reviews`, { verdict: "approve", comments: [{ body: "inline too", path: "big.txt", line: 7 }] });
    expect(review.status).toBe(201);
    expect(review.body.comments.map((c: C) => [c.id, c.body, c.draft, c.review_id])).toEqual([
      [d1.id, "pending one", false, review.body.id],
      [d2.id, "pending reply", false, review.body.id],
      [expect.any(String), "inline too", false, review.body.id],
    ]);
    const everyone = await as(people.ada!).get(`${base}/comments`);
    const published = everyone.body.comments.filter((c: C) => c.review_id === review.body.id);
    expect(published.map((c: C) => c.body).sort()).toEqual(["inline too", "pending one", "pending reply"]);
    // The reply joined its thread.
    expect(published.find((c: { id: string }) => c.id === d2.id)).toMatchObject({ thread_id: root.id, in_reply_to: root.id });
    expect(everyone.body.comments.some((c: C) => c.id === dee.id)).toBe(false);
    expect((await as(people.ada!).get(`${base}/reviews`)).body.reviews[0].comments).toHaveLength(3);
    const events = dbRows<{ kind: string; payload: string }>(w.server, "SELECT kind, payload FROM events WHERE payload LIKE ?", `%${review.body.id}%`);
    expect(events.map((e) => [e.kind, JSON.parse(e.payload).comments])).toEqual([["change.reviewed", 3]]);
    expect(
      dbRows(w.server, "SELECT id FROM events WHERE kind = 'change.commented' AND (payload LIKE ? OR payload LIKE ?)", `%${d1.id}%`, `%${d2.id}%`),
    ).toEqual([]);
    // Nothing left pending for bo; dee's draft is still dee's.
    expect((await as(people.bo!).get(`${base}/comments`)).body.comments.filter((c: C) => c.draft)).toEqual([]);
    expect((await as(people.dee!).get(`${base}/comments`)).body.comments.filter((c: C) => c.draft).map((c: C) => c.id)).toEqual([dee.id]);
    // Published, it resolves like any thread.
    expect((await as(people.ada!).patch(`${base}/comments/${d1.id}`, { resolved: true })).status).toBe(200);

    // A comment review with nothing but drafts publishes them; with nothing at all it is 422.
    const d3 = (await as(people.dee!).post(`${base}/comments`, { body: "second dee", draft: true })).body;
    const only = await as(people.dee!).post(`${base}/reviews`, { verdict: "comment" });
    expect(only.status).toBe(201);
    expect(only.body.comments.map((c: C) => c.id)).toEqual([dee.id, d3.id]);
    expect((await as(people.dee!).post(`${base}/reviews`, { verdict: "comment" })).status).toBe(422);
  });

  test("drafts on a closed change stay pending; a verdict is refused (409, drafts kept), a comment review publishes them; at most 100 with the review's own", async () => {
    const { base } = await opened("drafts-closed");
    const d = (await as(people.bo!).post(`${base}/comments`, { body: "pending", path: "big.txt", line: 2, draft: true })).body;
    expect((await as(people.ada!).patch(base, { state: "closed" })).status).toBe(200);
    expect((await as(people.bo!).post(`${base}/comments`, { body: "pending 2", draft: true })).status).toBe(201);
    expect((await as(people.bo!).post(`${base}/reviews`, { verdict: "approve" })).status).toBe(409);
    expect((await as(people.bo!).get(`${base}/comments`)).body.comments.map((c: C) => c.draft)).toEqual([true, true]);
    // 99 comments with 2 pending is 101: refused, nothing published.
    const many = Array.from({ length: 99 }, (_, i) => ({ body: `n${i}` }));
    const over = await as(people.bo!).post(`${base}/reviews`, { verdict: "comment", comments: many });
    expect(over.status).toBe(422);
    expect(over.body.error).toContain("2 pending");
    const ok = await as(people.bo!).post(`${base}/reviews`, { verdict: "comment", body: "closing notes" });
    expect(ok.status).toBe(201);
    expect(ok.body.comments.map((c: C) => [c.body, c.draft])).toEqual([
      ["pending", false],
      ["pending 2", false],
    ]);
    expect(ok.body.comments[0].id).toBe(d.id);
  });
});
