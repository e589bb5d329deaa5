// The first branch pushed becomes the default (DECISIONS §5; issue 24 item 1): a repository made
// with the default `main` that receives an existing project's `master` (real git, over HTTP and
// over SSH) points HEAD at master, so `git clone` checks it out without "remote HEAD refers to
// nonexistent ref"; later pushes never move it; the commit and ref APIs follow the same rule; a
// repository page whose default branch is missing shows an existing branch with a notice, never
// a 404.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { caller } from "../../helpers/api.ts";
import { commitFiles, gitSandbox, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { mintToken } from "../../helpers/server.ts";
import {
  gitSshEnv,
  makeRepo,
  registerKey,
  sshPerson,
  sshUrl,
  sshWorkspace,
  startSshServer,
  type SshPerson,
  type SshRunningServer,
  type SshWorkspace,
} from "../../helpers/ssh.ts";

let server: SshRunningServer;
let g: GitSandbox;
let ws: SshWorkspace;
let owner: SshPerson;
let token: string;
let api: ReturnType<typeof caller>;

beforeAll(async () => {
  server = await startSshServer();
  g = gitSandbox();
  ws = sshWorkspace();
  owner = await sshPerson(server, "acme", "owner@acme.example", "owner");
  token = await mintToken(server, owner.cookie, "acme", { scopes: ["repo:write", "org:admin"], label: "t" });
  api = caller(server, owner);
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
});

/** A local project whose only branch is `master`, with one commit. */
async function legacyProject(): Promise<string> {
  const dir = g.path("legacy");
  await g.ok(["init", "-q", "-b", "master", dir]);
  await commitFiles(g, dir, { "README.md": "legacy\n" }, "first");
  return dir;
}

/** Clones `url`; answers the clone's checked-out branch, whether README.md is there, and git's stderr. */
async function cloneOf(url: string, env: Record<string, string> = {}): Promise<{ branch: string; readme: boolean; stderr: string }> {
  const dir = g.path("clone");
  const r = await g.run(["clone", url, dir], { env });
  expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
  const branch = (await g.run(["symbolic-ref", "--short", "HEAD"], { cwd: dir })).stdout.trim();
  return { branch, readme: existsSync(join(dir, "README.md")), stderr: r.stderr };
}

describe("a first push of master", () => {
  for (const transport of ["http", "ssh"] as const) {
    test(`over ${transport}: master becomes the default; clone checks it out without a warning; a later push of main does not move it`, async () => {
      const name = `legacy-${transport}`;
      const created = await makeRepo(server, owner, "acme", name);
      expect(created.default_branch).toBe("main");
      const dir = await legacyProject();
      let url: string;
      let env: Record<string, string> = {};
      if (transport === "http") url = repoUrl(server, "acme", name, token);
      else {
        const key = await ws.keygen(`k-${name}`, "ed25519");
        await registerKey(server, owner, "acme", key);
        url = sshUrl(server, "acme", name);
        env = gitSshEnv(key);
      }
      await g.ok(["push", "-q", url, "master"], { cwd: dir, env });

      expect((await api.get(`/v1/orgs/acme/repos/${name}`)).body.default_branch).toBe("master");
      const symref = await g.ok(["ls-remote", "--symref", url, "HEAD"], { env });
      expect(symref.split("\n")[0]).toBe("ref: refs/heads/master\tHEAD");
      const c = await cloneOf(url, env);
      expect(c).toEqual({ branch: "master", readme: true, stderr: expect.not.stringContaining("nonexistent ref") });

      // Later pushes, of other branches or of main itself, never move an existing default.
      await g.ok(["push", "-q", url, "master:main", "master:dev"], { cwd: dir, env });
      expect((await api.get(`/v1/orgs/acme/repos/${name}`)).body.default_branch).toBe("master");
    }, 60_000);
  }

  test("a push of several branches at once prefers main, then master", async () => {
    await makeRepo(server, owner, "acme", "several");
    const dir = await legacyProject();
    await g.ok(["push", "-q", repoUrl(server, "acme", "several", token), "master:aaa", "master:master", "master:zzz"], { cwd: dir });
    expect((await api.get("/v1/orgs/acme/repos/several")).body.default_branch).toBe("master");
  }, 60_000);
});

describe("the commit and ref APIs", () => {
  test("the first commit on a branch of an empty repository makes it the default; a ref created while the default is missing becomes it", async () => {
    await makeRepo(server, owner, "acme", "by-api");
    const made = await api.post("/v1/orgs/acme/repos/by-api/commits", {
      branch: "trunk",
      message: "first",
      operations: [{ op: "put", path: "README.md", content: "hi\n" }],
    });
    expect(made.status).toBe(201);
    expect((await api.get("/v1/orgs/acme/repos/by-api")).body.default_branch).toBe("trunk");
    // A second branch leaves it.
    expect((await api.put("/v1/orgs/acme/repos/by-api/refs/refs/heads/other", { target: made.body.commit, expected: null })).status).toBe(200);
    expect((await api.get("/v1/orgs/acme/repos/by-api")).body.default_branch).toBe("trunk");
    // A default that names no branch (set by an admin) is replaced by the next branch created.
    expect((await api.patch("/v1/orgs/acme/repos/by-api", { default_branch: "gone" })).status).toBe(200);
    expect((await api.put("/v1/orgs/acme/repos/by-api/refs/refs/heads/release", { target: made.body.commit, expected: null })).status).toBe(200);
    expect((await api.get("/v1/orgs/acme/repos/by-api")).body.default_branch).toBe("release");
  }, 60_000);
});

describe("a repository page whose default branch is missing", () => {
  test("shows an existing branch with a notice, not a 404", async () => {
    await makeRepo(server, owner, "acme", "orphaned");
    const made = await api.post("/v1/orgs/acme/repos/orphaned/commits", {
      branch: "master",
      message: "first",
      operations: [{ op: "put", path: "README.md", content: "# Orphaned readme\n" }],
    });
    expect(made.status).toBe(201);
    expect((await api.patch("/v1/orgs/acme/repos/orphaned", { default_branch: "main" })).status).toBe(200);
    for (const path of ["/acme/orphaned", "/acme/orphaned/commits"]) {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie: owner.cookie } });
      const html = await res.text();
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(html).toContain("The default branch main does not exist; showing branch master.");
    }
    const home = await (await fetch(`${server.url}/acme/orphaned`, { headers: { cookie: owner.cookie } })).text();
    expect(home).toContain("Orphaned readme");
  }, 60_000);
});
