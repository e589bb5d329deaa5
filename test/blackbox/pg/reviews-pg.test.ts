// `svc serve` on PostgreSQL, reviews end to end (issue 28): requested reviewers (case-insensitive
// handles), a pending comment published by a review with a line comment, a protection requiring
// an approval (409, then landed by the lander), stale approvals dismissed by a push, dismissal,
// and a commit's checks and rollup.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { caller, type Person, person } from "../../helpers/api.ts";
import { type PostgresDatabase, postgresDatabase } from "../../helpers/postgres.ts";
import { type RunningServer, startServer } from "../../helpers/server.ts";
import { until } from "../ci/helpers.ts";

let db: PostgresDatabase;
let server: RunningServer;
let ada: Person;
let bo: Person;

beforeAll(async () => {
  db = await postgresDatabase();
  server = await startServer({ env: { SVC_DATABASE_URL: db.url } });
  ada = await person(server, "acme", "ada@acme.example", "owner", { handle: "ada" });
  bo = await person(server, "acme", "bo@acme.example", "member", { handle: "bo" });
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  await db?.drop();
});

test("reviewers, a review with a comment, required approvals, stale dismissal and checks on PostgreSQL", async () => {
  const a = caller(server, ada);
  const b = caller(server, bo);
  const R = "/v1/orgs/acme/repos/app";
  expect((await a.post("/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  const commit = async (branch: string, path: string, content: string) => {
    const r = await a.post(`${R}/commits`, { branch, message: path, operations: [{ op: "put", path, content }] });
    expect(r.status).toBe(201);
    return r.body.commit as string;
  };
  const main = await commit("main", "a.txt", "a\n");
  expect((await a.put(`${R}/refs/refs/heads/feature`, { target: main, expected: null })).status).toBe(200);
  await commit("feature", "b.txt", "one\ntwo\n");
  expect((await a.post(`${R}/changes`, { title: "B", branch: "feature" })).status).toBe(201);

  const asked = await a.post(`${R}/changes/1/reviewers`, { handles: ["BO"] });
  expect(asked.status).toBe(200);
  expect(asked.body.reviewers).toEqual([{ user_id: expect.any(String), handle: "bo", state: "requested", requested: true }]);

  expect((await a.put(`${R}/protections/main`, { required_approvals: 1 })).status).toBe(200);
  expect((await a.post(`${R}/changes/1/land`)).body.approval).toEqual({ required: 1, approvals: 0, changes_requested_by: [] });

  // A pending comment: bo's alone (ada gets 404 on it) until bo's review publishes it.
  const draft = await b.post(`${R}/changes/1/comments`, { path: "b.txt", line: 1, body: "pending", draft: true });
  expect(draft.status).toBe(201);
  expect((await a.get(`${R}/changes/1/comments`)).body.comments).toEqual([]);
  expect((await a.patch(`${R}/changes/1/comments/${draft.body.id}`, { resolved: true })).status).toBe(404);
  expect((await b.patch(`${R}/changes/1/comments/${draft.body.id}`, { body: "pending, edited" })).body.draft).toBe(true);
  const review = await b.post(`${R}/changes/1/reviews`, { verdict: "approve", comments: [{ path: "b.txt", line: 2, body: "fine" }] });
  expect(review.status).toBe(201);
  expect(review.body.comments.map((c: { body: string; draft: boolean; review_id: string }) => [c.body, c.draft, c.review_id])).toEqual([
    ["pending, edited", false, review.body.id],
    ["fine", false, review.body.id],
  ]);
  // A push makes the approval stale; approving again counts.
  const head = await commit("feature", "b.txt", "one\ntwo\nthree\n");
  const reviews = (await a.get(`${R}/changes/1/reviews`)).body.reviews;
  expect(reviews.map((r: { dismissed: boolean; dismissed_reason: string | null }) => [r.dismissed, r.dismissed_reason])).toEqual([[true, "stale"]]);
  expect((await a.post(`${R}/changes/1/land`)).status).toBe(409);
  const again = (await b.post(`${R}/changes/1/reviews`, { verdict: "request_changes", body: "three?" })).body;
  expect((await a.post(`${R}/changes/1/reviews/${again.id}/dismiss`, {})).status).toBe(200);
  expect((await b.post(`${R}/changes/1/reviews`, { verdict: "approve" })).status).toBe(201);
  expect((await a.post(`${R}/changes/1/land`)).status).toBe(202);
  const landed = await until("landed", async () => {
    const c = (await a.get(`${R}/changes/1`)).body;
    return c.state === "landed" ? c : null;
  });
  expect(landed).toMatchObject({ landed_commit: head, checks: [] });
  expect(landed.reviewers).toEqual([{ user_id: expect.any(String), handle: "bo", state: "approved", requested: true }]);

  expect((await a.get(`${R}/commits/${head.slice(0, 8)}/checks`)).body).toEqual({ checks: [] });
  expect((await a.get(`${R}/commits?ref=main`)).body.commits.map((c: { checks_state: unknown }) => c.checks_state)).toEqual([null, null, null]);
});
