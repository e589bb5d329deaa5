// A push over SSH moves an open change's head like any other push (the changes subscriber sits
// under every transport, inside the push's transaction), and the change then lands.
import { expect, test } from "bun:test";
import { commitFiles, gitSandbox } from "../../helpers/git.ts";
import { caller } from "../../helpers/api.ts";
import { gitSshEnv, makeRepo, registerKey, sshPerson, sshUrl, sshWorkspace, startSshServer } from "../../helpers/ssh.ts";
import { until } from "../ci/helpers.ts";

test("patchsets grow on SSH pushes; the change lands", async () => {
  await using server = await startSshServer();
  using ws = sshWorkspace();
  using g = gitSandbox();
  const owner = await sshPerson(server, "acme", "owner@acme.example", "owner");
  await makeRepo(server, owner, "acme", "app");
  const key = await ws.keygen("owner", "ed25519");
  await registerKey(server, owner, "acme", key);
  const api = caller(server, owner);
  const url = sshUrl(server, "acme", "app");
  const env = gitSshEnv(key);

  const dir = g.path("work");
  await g.ok(["init", "-q", "-b", "main", dir]);
  await commitFiles(g, dir, { "a.txt": "a\n" }, "seed");
  await g.ok(["push", "-q", url, "main"], { cwd: dir, env });
  await g.ok(["checkout", "-q", "-b", "topic"], { cwd: dir });
  const h1 = await commitFiles(g, dir, { "b.txt": "b\n" }, "one");
  await g.ok(["push", "-q", url, "topic"], { cwd: dir, env });
  const created = await api.post("/v1/orgs/acme/repos/app/changes", { title: "topic", branch: "topic" });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ head: h1, patchset: 1 });

  const h2 = await commitFiles(g, dir, { "b.txt": "b2\n" }, "two");
  await g.ok(["push", "-q", url, "topic"], { cwd: dir, env });
  expect((await api.get("/v1/orgs/acme/repos/app/changes/1")).body).toMatchObject({ head: h2, patchset: 2 });
  const h3 = await commitFiles(g, dir, { "c.txt": "c\n" }, "three");
  await g.ok(["push", "-q", url, "topic"], { cwd: dir, env });
  expect((await api.get("/v1/orgs/acme/repos/app/changes/1")).body).toMatchObject({ head: h3, patchset: 3 });

  expect((await api.post("/v1/orgs/acme/repos/app/changes/1/land", {})).status).toBe(202);
  const landed = await until("landed", async () => {
    const c = (await api.get("/v1/orgs/acme/repos/app/changes/1")).body;
    return c.state === "landed" ? c : null;
  });
  expect(landed.landed_commit).toBe(h3);
  const remote = await g.ok(["ls-remote", url, "refs/heads/main"], { cwd: dir, env });
  expect(remote.split("\t")[0]).toBe(h3);
}, 60_000);
