// The issue forms past the per-person creation limit (SVC_ISSUE_RATE_LIMIT): the page again with
// the service's reason, 429 and its Retry-After, what was typed kept, nothing created.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../../helpers/server.ts";
import { mintTokenWithId } from "../../../helpers/git.ts";
import { csrfOf, getPage, postForm } from "../../../helpers/web.ts";

let server: RunningServer;
let cookie = "";
let token = "";

beforeAll(async () => {
  server = await startServer({ env: { SVC_ISSUE_RATE_LIMIT: "2" } });
  const u = await createUser(server, { org: "rl", handle: "ada", email: "ada@rl.example" });
  cookie = await login(server, u.email, u.password);
  token = (await mintTokenWithId(server, cookie, "rl", { scopes: ["repo:write"], label: "rl" })).token;
  expect((await client(server, { token }).post("/v1/orgs/rl/repos", { name: "app", public: true })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

test("the third issue or comment in an hour is the form again with 429, Retry-After and the reason", async () => {
  const csrf = csrfOf((await getPage(server, "/rl/app/issues/new", cookie)).text);
  expect((await postForm(server, "/rl/app/issues", { csrf, title: "One" }, { cookie })).status).toBe(303);
  expect((await postForm(server, "/rl/app/issues/1/comments", { csrf, body: "First comment" }, { cookie })).status).toBe(303);
  const issue = await postForm(server, "/rl/app/issues", { csrf, title: "Two", body: "typed text kept" }, { cookie });
  expect(issue.status).toBe(429);
  expect(Number(issue.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(issue.text).toContain("too many issues and comments in the last hour");
  expect(issue.text).toContain("typed text kept");
  const comment = await postForm(server, "/rl/app/issues/1/comments", { csrf, body: "Second <b>comment</b>" }, { cookie });
  expect(comment.status).toBe(429);
  expect(Number(comment.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(comment.text).toContain("too many issues and comments in the last hour");
  expect(comment.text).toContain(">Second &lt;b&gt;comment&lt;/b&gt;</textarea>");
  const api = client(server, { token });
  expect((await api.get("/v1/orgs/rl/repos/app/issues?state=all")).body.issues.length).toBe(1);
  expect((await api.get("/v1/orgs/rl/repos/app/issues/1/comments")).body.comments.length).toBe(1);
});
