// A change from a fork and the target's caches (issue 30, GitHub's rule "a change cannot poison
// main's cache"), with the real agent and real git: the fork's change run comes from its branch
// `main` — the same ref as the target's default branch — and may restore the target's main cache
// (a read GitHub allows), but what it saves lands in the fork's own scope: a later run on the
// target's main never restores it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { caller } from "../../helpers/api.ts";
import { commitFiles, createRepo, gitSandbox, initRepo, repoUrl, setupOwner, type OrgOwner } from "../../helpers/git.ts";
import { type RunningServer, startServer } from "../../helpers/server.ts";
import { type Agent, finishedRun, logOf, registerMachine, registrationToken, runnerHome, startAgent, until } from "./helpers.ts";

const WORKFLOW = `on: [push, pull_request]
jobs:
  deps:
    runs-on: [self-hosted, forks]
    steps:
      - id: poison
        uses: actions/cache/restore@v4
        with:
          path: deps
          key: deps-pull_request
      - id: c
        uses: actions/cache@v4
        with:
          path: deps
          key: deps-\${{ github.event_name }}
          restore-keys: deps-
      - run: |
          echo "poison=[\${{ steps.poison.outputs.cache-matched-key }}] restored=[$(cat deps/a.txt 2>/dev/null)]"
          mkdir -p deps
          echo "by \${{ github.event_name }} \${{ github.sha }}" > deps/a.txt
`;

let server: RunningServer;
let acme: OrgOwner;
let ada: OrgOwner;
let agent: Agent;
const g = gitSandbox("svc-ci-caches-fork-");
const home = runnerHome();
let work: string;

beforeAll(async () => {
  server = await startServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" } });
  [acme, ada] = await Promise.all([setupOwner(server, "acme"), setupOwner(server, "ada")]);
  const api = caller(server, { cookie: acme.cookie });
  const adaApi = caller(server, { cookie: ada.cookie });
  await createRepo(server, acme, "app", true);
  work = await initRepo(g, "work");
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: work });
  await commitFiles(g, work, { "README.md": "app\n" }, "seed");
  await g.ok(["push", "-q", repoUrl(server, "acme", "app", acme.token), "main"], { cwd: work });
  expect((await api.post("/v1/orgs/acme/runner-groups", { name: "forks", allow_public: true })).status).toBe(201);
  const m = await registerMachine(server, await registrationToken(api, "acme", "forks"), home.dir, { name: "agent", labels: ["forks"] });
  agent = startAgent(m.config, join(home.dir, "work"));
  await agent.saw(/waiting for jobs/);
  expect((await adaApi.post("/v1/orgs/acme/repos/app/forks", { org: "ada", name: "app-fork" })).status).toBe(202);
  await until("the fork to be ready", async () => (await adaApi.get("/v1/orgs/ada/repos/app-fork")).body.fork_state === "ready");
}, 90_000);

afterAll(async () => {
  await agent?.stop("SIGKILL");
  await server?.stop();
  home.cleanup();
  g[Symbol.dispose]();
});

test("a fork's change run from its `main` reads the target's main cache but saves only into the fork's scope", async () => {
  const api = caller(server, { cookie: acme.cookie });
  const adaApi = caller(server, { cookie: ada.cookie });
  const log = async (run: any) => logOf(server, { cookie: acme.cookie } as never, "app", run.id, run.jobs[0].id);

  // The target's main saves deps-push.
  const first = await commitFiles(g, work, { ".svc/workflows/ci.yml": WORKFLOW }, "cache workflow");
  await g.ok(["push", "-q", repoUrl(server, "acme", "app", acme.token), "main"], { cwd: work });
  const mainRun = await finishedRun(api, "app", first);
  expect(mainRun.state).toBe("success");
  expect(await log(mainRun)).toContain("Cache saved with key: deps-push");

  // Ada's fork, branch main (the target's default branch's name), a change into acme/app.
  const head = await commitFiles(g, work, { "fork.txt": "from the fork\n" }, "fork change");
  await g.ok(["push", "-q", "-f", repoUrl(server, "ada", "app-fork", ada.token), "main"], { cwd: work });
  const opened = await adaApi.post("/v1/orgs/acme/repos/app/changes", { title: "from a fork", branch: "main", source: { org: "ada", repo: "app-fork" } });
  expect(opened.status).toBe(201);
  expect((await api.post(`/v1/orgs/acme/repos/app/changes/${opened.body.number}/runs`, {})).status).toBe(202);
  const forkRun = await finishedRun(api, "app", head);
  expect(forkRun).toMatchObject({ event: "change", ref: "refs/heads/main", trusted: false, state: "success" });
  const forkLog = await log(forkRun);
  // It may read main's cache (the default branch's, as GitHub allows) …
  expect(forkLog).toContain(`restored=[by push ${first}]`);
  // … and what it saves goes to its own scope.
  expect(forkLog).toContain("Cache saved with key: deps-pull_request");

  // The target's main: the fork's entry is not there, under its key or as a prefix.
  const second = await commitFiles(g, work, { "again.txt": "again\n" }, "again");
  await g.ok(["push", "-q", "-f", repoUrl(server, "acme", "app", acme.token), "main"], { cwd: work });
  const again = await finishedRun(api, "app", second);
  const againLog = await log(again);
  expect(againLog).toContain("Cache not found for input keys: deps-pull_request");
  expect(againLog).toContain(`poison=[] restored=[by push ${first}]`);
}, 120_000);
