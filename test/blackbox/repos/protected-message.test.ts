// The protected-branch refusal names the real address to open a change at (issue 24 item 6): not
// `POST /v1/orgs/{org}/repos/{repo}/changes` with its placeholders unfilled. Over git push (what
// git prints after `remote:`/`!`) and over the commit API.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { caller, person, type Person } from "../../helpers/api.ts";
import { commitFiles, gitSandbox, initRepo, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { mintToken, startServer, type RunningServer } from "../../helpers/server.ts";

let server: RunningServer;
let g: GitSandbox;
let owner: Person;
let token: string;

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox();
  owner = await person(server, "acme", "owner@acme.example", "owner");
  token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:write"], label: "git" });
  const api = caller(server, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "Widgets" })).status).toBe(201);
  expect(
    (await api.post("/v1/orgs/acme/repos/Widgets/commits", { branch: "main", message: "seed", operations: [{ op: "put", path: "a.txt", content: "a\n" }] }))
      .status,
  ).toBe(201);
  expect((await api.put("/v1/orgs/acme/repos/Widgets/protections/main", { require_change: true })).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

const WANT = "protected branch main: direct updates are refused; land your commits through a change (POST /v1/orgs/acme/repos/Widgets/changes)";

test("git push to a branch that requires a change prints the filled-in address", async () => {
  const dir = await initRepo(g, "w");
  const url = repoUrl(server, "acme", "Widgets", token);
  await g.ok(["fetch", "-q", url, "main"], { cwd: dir });
  await g.ok(["checkout", "-q", "-b", "main", "FETCH_HEAD"], { cwd: dir });
  await commitFiles(g, dir, { "b.txt": "b\n" }, "direct");
  const r = await g.run(["push", url, "main"], { cwd: dir });
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(WANT);
  expect(r.stderr).not.toContain("{org}");
}, 60_000);

test("the commit API answers the same sentence", async () => {
  const r = await caller(server, owner).post("/v1/orgs/acme/repos/Widgets/commits", {
    branch: "main",
    message: "direct",
    operations: [{ op: "put", path: "c.txt", content: "c\n" }],
  });
  expect({ status: r.status, error: r.body.error }).toEqual({ status: 403, error: WANT });
}, 60_000);
