// `svc serve` on PostgreSQL end to end, the control plane: an account made by the CLI, an org's
// repository and token made through the API, a commit through the API queueing a CI job that a
// self-hosted runner's claim receives, and the job's completion.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { caller, type Person, person } from "../../helpers/api.ts";
import { type PostgresDatabase, postgresDatabase } from "../../helpers/postgres.ts";
import { client, mintToken, type RunningServer, startServer } from "../../helpers/server.ts";
import { commitFiles, registrationToken } from "../ci/helpers.ts";

let db: PostgresDatabase;
let server: RunningServer;
let owner: Person;

beforeAll(async () => {
  db = await postgresDatabase();
  server = await startServer({ env: { SVC_DATABASE_URL: db.url, SVC_RUNNER_CLAIM_WAIT_MS: "20000" } });
  owner = await person(server, "acme", "owner@acme.example", "owner");
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  await db?.drop();
});

test("a repository, a token, and a CI job queued by a commit and claimed by a runner", async () => {
  const api = caller(server, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "svc", public: false })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/repos", { name: "SVC", public: false })).status).toBe(409);
  const token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:read"], label: "reader" });
  expect((await client(server, { token }).get("/v1/orgs/acme/repos/svc")).status).toBe(200);

  const reg = await registrationToken(api);
  const m = await client(server, { token: reg }).post("/v1/runners/register", { name: "m1", os: "linux", arch: "x64", labels: ["pg"] });
  expect(m.status).toBe(201);
  const waiting = client(server, { token: m.body.credential }).post("/v1/runners/claim");
  const sha = await commitFiles(api, "svc", {
    ".svc/workflows/ci.yml": "on: push\njobs:\n  unit:\n    runs-on: [self-hosted, pg]\n    steps:\n      - name: one\n        run: echo 1\n",
  });
  const claimed = await waiting;
  expect(claimed.status).toBe(200);
  const runs = (await api.get("/v1/orgs/acme/repos/svc/runs")).body.runs;
  expect(runs.map((r: { commit: string }) => r.commit)).toEqual([sha]);
  const job = client(server, { token: claimed.body.token });
  const base = `/v1/runner/jobs/${claimed.body.job_id}`;
  const done = await job.post(`${base}/complete`, { verdict: "success" });
  expect(done.status).toBe(204);
  expect(server.stderr()).not.toContain('"level":"error"');
});
