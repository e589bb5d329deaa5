// Pushes from git clients other than C git (issue 24 defect 8): libgit2 (pygit2) and dulwich over
// SSH and HTTP, isomorphic-git over HTTP (it has no SSH). libgit2, dulwich and JGit keep their
// side of an SSH connection open until the report arrives; svc used to wait for end of input, so
// both sides waited until the idle timeout. A pack is complete at its checksum: the report must
// come then. Each push here finishes (or the test times out), and the ref lands.
//
// Needs Debian's python3-pygit2 and python3-dulwich (scripts/install-test-tools.sh) under
// /usr/bin/python3; a client that is not installed is skipped, saying so.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import * as fs from "node:fs";
import { join } from "node:path";
import git from "isomorphic-git";
import http from "isomorphic-git/http/node";
import { commitFiles, gitSandbox, importHistory, initRepo, lsRemote, mintTokenWithId, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import {
  makeRepo,
  registerKey,
  run,
  sshPerson,
  sshUrl,
  sshWorkspace,
  sshOptions,
  startSshServer,
  type SshKey,
  type SshPerson,
  type SshRunningServer,
  type SshWorkspace,
} from "../../helpers/ssh.ts";

setDefaultTimeout(120_000);

const PYTHON = "/usr/bin/python3";
const SCRIPT = join(import.meta.dir, "interop-push.py");

let server: SshRunningServer;
let ws: SshWorkspace;
let g: GitSandbox;
let owner: SshPerson;
let token: string;
let key: SshKey;
let work: string;
let tip: string;

async function hasModule(name: string): Promise<boolean> {
  if (!existsSync(PYTHON)) return false;
  return (await run([PYTHON, "-c", `import ${name}`])).code === 0;
}

beforeAll(async () => {
  ws = sshWorkspace("svc-interop-ssh-");
  g = gitSandbox("svc-interop-");
  key = await ws.keygen("ecdsa", "ecdsa", 256);
  server = await startSshServer();
  owner = await sshPerson(server, "io", "ines@example.com", "owner");
  await registerKey(server, owner, "io", key);
  token = (await mintTokenWithId(server, owner.cookie, "io", { scopes: ["repo:read", "repo:write"], label: "interop" })).token;
  await makeRepo(server, owner, "io", "app");
  work = await initRepo(g);
  tip = await importHistory(g, work, { ref: "refs/heads/main", count: 30 });
  // The first push with C git; the other clients then send packs of new commits on top.
  await g.ok(["push", "-q", repoUrl(server, "io", "app", token), "main"], { cwd: work });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
});

/** A new commit on a branch of its own, in the local repository; returns its id. */
async function newBranch(name: string): Promise<string> {
  await g.ok(["checkout", "-q", "-B", name, "main"], { cwd: work });
  const oid = await commitFiles(g, work, { [`${name}.txt`]: `${name}\n`.repeat(50) }, `commit for ${name}`);
  await g.ok(["checkout", "-q", "main"], { cwd: work });
  return oid;
}

async function python(client: "pygit2" | "dulwich", url: string, branch: string, ssh: boolean) {
  const env: Record<string, string> = { ...ws.env, ...(ssh && client === "dulwich" ? { GIT_SSH_COMMAND: ["ssh", ...sshOptions(key)].join(" ") } : {}) };
  const r = await run([PYTHON, SCRIPT, client, work, url, `refs/heads/${branch}`, `refs/heads/${branch}`, ...(ssh && client === "pygit2" ? [key.path] : [])], {
    env,
  });
  if (r.code !== 0) throw new Error(`${client} push exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { ok: boolean; status: Record<string, string | null> };
}

for (const client of ["pygit2", "dulwich"] as const) {
  describe(client, () => {
    for (const transport of ["ssh", "http"] as const) {
      test(`push over ${transport}: the report comes at the pack's checksum and the ref lands`, async () => {
        if (!(await hasModule(client))) {
          console.warn(`skipped: ${PYTHON} cannot import ${client} (Debian's python3-${client}; scripts/install-test-tools.sh installs it)`);
          return;
        }
        const branch = `${client}-${transport}`;
        const oid = await newBranch(branch);
        const url = transport === "ssh" ? sshUrl(server, "io", "app") : repoUrl(server, "io", "app", token);
        const result = await python(client, url, branch, transport === "ssh");
        expect(result).toEqual({ ok: true, status: { [`refs/heads/${branch}`]: null } });
        expect((await lsRemote(g, repoUrl(server, "io", "app", token)))[`refs/heads/${branch}`]).toBe(oid);
      });
    }
  });
}

describe("isomorphic-git (HTTP only: it has no SSH)", () => {
  test("push over http: the ref lands", async () => {
    const branch = "iso-http";
    const oid = await newBranch(branch);
    const r = await git.push({
      fs,
      http,
      dir: work,
      gitdir: join(work, ".git"),
      url: `${server.url}/io/app.git`,
      ref: branch,
      remoteRef: `refs/heads/${branch}`,
      onAuth: () => ({ username: "x", password: token }),
    });
    expect(r.ok).toBe(true);
    expect((await lsRemote(g, repoUrl(server, "io", "app", token)))[`refs/heads/${branch}`]).toBe(oid);
    expect(tip).toMatch(/^[0-9a-f]{40}$/);
  });
});
