// Checks on changes and commits (issue 28), black-box: a real runner (`svc runner run`) runs a
// workflow pushed with a change's branch; the change's `checks`, GET …/commits/{sha}/checks (full,
// abbreviated, a branch name), the commit list's `checks_state` rollup, the change page's checks box, and masking.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { commitFiles, initRepo } from "../../helpers/git.ts";
import { newRepo, startWorld, type World } from "../../helpers/content.ts";
import { registerMachine, registrationToken, runnerHome, startAgent, until } from "../ci/helpers.ts";
import { caller } from "../../helpers/api.ts";
import { client } from "../../helpers/server.ts";

const ORG = "chk";
let w: World;

beforeAll(async () => {
  w = await startWorld(ORG);
});
afterAll(async () => w.close());

const WORKFLOW = `on: push
jobs:
  lint:
    runs-on: [self-hosted, checks]
    steps:
      - run: "false"
  test:
    runs-on: [self-hosted, checks]
    steps:
      - run: "true"
`;

describe("checks", () => {
  test("a change's checks for its head from a real run; the commit's checks by full, abbreviated and branch revision; the list's rollup", async () => {
    const token = await registrationToken(caller(w.server, { cookie: w.owner.cookie }), ORG);
    const home = runnerHome();
    const m = await registerMachine(w.server, token, home.dir, { name: "checks-ci", labels: ["checks"] });
    await using agent = startAgent(m.config, join(home.dir, "work"));
    try {
      const repo = await newRepo(w, "checked");
      const dir = await initRepo(w.g, "checked");
      await w.g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
      const main = await commitFiles(w.g, dir, { "a.txt": "a\n" }, "seed");
      await w.g.ok(["push", "-q", repo.url, "main"], { cwd: dir });
      await w.g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
      const head = await commitFiles(w.g, dir, { ".svc/workflows/ci.yml": WORKFLOW }, "ci");
      await w.g.ok(["push", "-q", repo.url, "feature"], { cwd: dir });
      const changes = `${repo.api.base}/changes`;
      expect((await repo.api.c.post(changes, { title: "CI", branch: "feature" })).status).toBe(201);

      // Wait for both jobs to finish, as the change shows them.
      const change = await until(
        "both checks to finish",
        async () => {
          const c = (await repo.api.c.get(`${changes}/1`)).body;
          const done = c.checks.filter((k: { state: string }) => k.state === "success" || k.state === "failure");
          return done.length === 2 ? c : null;
        },
        120_000,
      );
      expect(change.checks).toEqual([
        { key: "lint", state: "failure", run_id: expect.any(String), job_id: expect.any(String) },
        { key: "test", state: "success", run_id: expect.any(String), job_id: expect.any(String) },
      ]);
      // The ids name the run and its jobs.
      const run = await repo.api.c.get(`${repo.api.base}/runs/${change.checks[0].run_id}`);
      expect(run.status).toBe(200);
      expect(run.body.commit).toBe(head);

      const full = await repo.api.c.get(`${repo.api.base}/commits/${head}/checks`);
      expect(full.status).toBe(200);
      expect(full.body).toEqual({ checks: change.checks });
      expect((await repo.api.c.get(`${repo.api.base}/commits/${head.slice(0, 10)}/checks`)).body).toEqual(full.body);
      expect((await repo.api.c.get(`${repo.api.base}/commits/feature/checks`)).body).toEqual(full.body);
      // A commit without checks answers an empty list; an unknown one 404.
      expect((await repo.api.c.get(`${repo.api.base}/commits/${main}/checks`)).body).toEqual({ checks: [] });
      expect((await repo.api.c.get(`${repo.api.base}/commits/${"0".repeat(40)}/checks`)).status).toBe(404);
      expect((await repo.api.c.get(`${repo.api.base}/commits/deadbeef00/checks`)).status).toBe(404);
      expect((await repo.api.c.get(`${repo.api.base}/commits/no-such-branch/checks`)).status).toBe(404);

      // The commit list rolls them up, one state per commit.
      const log = await repo.api.log({ ref: "feature" });
      expect(log.status).toBe(200);
      expect(log.body.commits.map((c: { sha: string; checks_state: string | null }) => [c.sha, c.checks_state])).toEqual([
        [head, "failure"],
        [main, null],
      ]);

      // The change page's checks box: each key links to its run, with a link to its job's log; the status box counts the failure.
      const page = await client(w.server, { cookie: w.owner.cookie }).get(`/${ORG}/checked/changes/1`);
      expect(page.status).toBe(200);
      for (const k of change.checks as { key: string; state: string; run_id: string; job_id: string }[]) {
        expect(page.body as string).toContain(`<a href="/${ORG}/checked/runs/${k.run_id}">${k.key}</a> <span class="muted">${k.state}</span>`);
        expect(page.body as string).toContain(`<a href="/${ORG}/checked/runs/${k.run_id}/jobs/${k.job_id}" aria-label="Log of ${k.key}">log</a>`);
      }
      expect(page.body as string).toContain("1 of 2 checks failing");

      // Private: an outsider gets the same 404 as for a repository that does not exist; anonymous 401.
      const outsider = client(w.server, { token: w.outsider.token });
      const hidden = await outsider.get(`${repo.api.base}/commits/${head}/checks`);
      const missing = await outsider.get(`${repo.api.base.replace("checked", "absent")}/commits/${head}/checks`);
      expect(hidden.status).toBe(404);
      expect(hidden.body).toEqual(missing.body);
      expect((await client(w.server).get(`${repo.api.base}/commits/${head}/checks`)).status).toBe(401);
      void agent;
    } finally {
      home.cleanup();
    }
  });
});
