// A push over SSH starts workflows like any other push (the CI subscriber sits under every
// transport, inside the push's transaction).
import { expect, test } from "bun:test";
import { commitFiles, gitSandbox } from "../../helpers/git.ts";
import { client } from "../../helpers/server.ts";
import { gitSshEnv, makeRepo, registerKey, sshPerson, sshUrl, sshWorkspace, startSshServer } from "../../helpers/ssh.ts";
import { caller } from "../../helpers/api.ts";
import { claimJob, registerRaw, waitForRun } from "./helpers.ts";

test("git push over SSH queues the workflow's job for a waiting machine", async () => {
  await using server = await startSshServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "15000" } });
  using ws = sshWorkspace();
  using g = gitSandbox();
  const owner = await sshPerson(server, "acme", "owner@acme.example", "owner");
  await makeRepo(server, owner, "acme", "app");
  const key = await ws.keygen("owner", "ed25519");
  await registerKey(server, owner, "acme", key);
  const api = caller(server, owner);
  const machine = await registerRaw(server, api, "m", ["ssh-lane"]);
  const waiting = claimJob(server, machine.credential);

  const dir = g.path("work");
  await g.ok(["init", "-q", dir]);
  const sha = await commitFiles(g, dir, {
    ".svc/workflows/ci.yml": "on: push\njobs:\n  over-ssh:\n    runs-on: [self-hosted, ssh-lane]\n    steps:\n      - run: echo\n",
  });
  await g.ok(["push", "-q", sshUrl(server, "acme", "app"), "HEAD:refs/heads/main"], { cwd: dir, env: gitSshEnv(key) });

  const c = await waiting;
  expect(c.status).toBe(200);
  const d = await client(server, { token: c.body.token }).get(`/v1/runner/jobs/${c.body.job_id}`);
  expect(d.body).toMatchObject({ key: "over-ssh", commit: sha, ref: "refs/heads/main", repo: "acme/app" });
  const run = await waitForRun(api, "app", sha, "the run");
  expect(run).toMatchObject({ event: "push", state: "running", jobs: [{ key: "over-ssh", state: "running", runner: { name: "m" } }] });
}, 60_000);
