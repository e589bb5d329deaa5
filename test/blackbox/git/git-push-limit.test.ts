// SVC_GIT_MAX_PUSH (DECISIONS §4): a push over the limit fails with a reason git prints, over
// smart HTTP (streamed or with a declared length) and over SSH, and nothing of it is stored; a
// push under the limit goes through; a malformed limit is a boot failure.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { commitFiles, gitSandbox, initRepo, lsRemote, repoUrl, setupOwner, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";
import { runSvc } from "../../helpers/server.ts";
import {
  gitSshEnv,
  makeRepo,
  registerKey,
  sshPerson,
  sshUrl,
  sshWorkspace,
  startSshServer,
  type SshKey,
  type SshPerson,
  type SshRunningServer,
  type SshWorkspace,
} from "../../helpers/ssh.ts";

setDefaultTimeout(60_000);

const LIMIT = "256k";
const MESSAGE = "push exceeds the maximum size of 256 KiB";

let server: SshRunningServer;
let g: GitSandbox;
let ws: SshWorkspace;
let owner: OrgOwner;
let person: SshPerson;
let key: SshKey;
let big: string;
let small: string;

/** Every pack file stored for any repository, and anything left in the server's temp dir. */
function storedFiles(): { packs: string[]; tmp: string[] } {
  const packs: string[] = [];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (/\.(pack|idx)$/.test(e.name)) packs.push(join(dir, e.name));
    }
  };
  walk(join(server.dataDir, "objects"));
  const tmpDir = join(server.dataDir, "tmp");
  return { packs, tmp: existsSync(tmpDir) ? readdirSync(tmpDir) : [] };
}

beforeAll(async () => {
  server = await startSshServer({ env: { SVC_GIT_MAX_PUSH: LIMIT } });
  g = gitSandbox("svc-push-limit-");
  ws = sshWorkspace();
  owner = await setupOwner(server, "lim");
  person = await sshPerson(server, "lim", "pat@example.com", "admin");
  key = await ws.keygen("pat", "ed25519");
  await registerKey(server, person, "lim", key);
  for (const name of ["http-streamed", "http-declared", "over-ssh", "fits"]) await makeRepo(server, person, "lim", name);
  // 1 MiB of random bytes: a pack of about 1 MiB, four times the limit.
  big = await initRepo(g, "big");
  await commitFiles(g, big, { "data.bin": randomBytes(1024 * 1024) }, "too big");
  small = await initRepo(g, "small");
  await commitFiles(g, small, { README: "small enough\n" }, "fits");
}, 60_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
}, 30_000);

describe("a push over SVC_GIT_MAX_PUSH", () => {
  test("over HTTP, streamed (chunked): git prints the reason, nothing is stored", async () => {
    const before = storedFiles();
    const r = await g.run(["push", repoUrl(server, "lim", "http-streamed", owner.token), "HEAD:refs/heads/main"], { cwd: big });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(MESSAGE);
    expect(r.stderr).toContain("[remote rejected] HEAD -> main");
    expect(r.stderr).not.toContain("curl 65");
    expect(await lsRemote(g, repoUrl(server, "lim", "http-streamed", owner.token))).toEqual({});
    expect(storedFiles()).toEqual(before);
  });

  test("over HTTP with a declared length (a large http.postBuffer): refused before the pack is read", async () => {
    const before = storedFiles();
    const r = await g.run(["-c", "http.postBuffer=67108864", "push", repoUrl(server, "lim", "http-declared", owner.token), "HEAD:refs/heads/main"], {
      cwd: big,
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(MESSAGE);
    expect(await lsRemote(g, repoUrl(server, "lim", "http-declared", owner.token))).toEqual({});
    expect(storedFiles()).toEqual(before);
  });

  test("over SSH: git prints the reason, nothing is stored", async () => {
    const before = storedFiles();
    const env = gitSshEnv(key);
    const r = await g.run(["push", sshUrl(server, "lim", "over-ssh"), "HEAD:refs/heads/main"], { cwd: big, env });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(MESSAGE);
    const refs = await g.run(["ls-remote", sshUrl(server, "lim", "over-ssh")], { env });
    expect(refs.code).toBe(0);
    expect(refs.stdout.trim()).toBe("");
    expect(storedFiles()).toEqual(before);
  });

  test("a push under the limit still goes through, on both transports", async () => {
    await g.ok(["push", repoUrl(server, "lim", "fits", owner.token), "HEAD:refs/heads/main"], { cwd: small });
    const tip = await g.ok(["rev-parse", "HEAD"], { cwd: small });
    expect((await lsRemote(g, repoUrl(server, "lim", "fits", owner.token)))["refs/heads/main"]).toBe(tip);
    await g.ok(["push", sshUrl(server, "lim", "fits"), "HEAD:refs/heads/second"], { cwd: small, env: gitSshEnv(key) });
    expect((await lsRemote(g, repoUrl(server, "lim", "fits", owner.token)))["refs/heads/second"]).toBe(tip);
  });
});

test("a malformed SVC_GIT_MAX_PUSH is a boot failure (exit 2, one line naming it)", async () => {
  const r = await runSvc(["serve"], { SVC_DATA_DIR: join(g.root, "never"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_GIT_MAX_PUSH: "lots" });
  expect(r.code).toBe(2);
  expect(r.stderr.trim().split("\n").length).toBe(1);
  expect(r.stderr).toContain("SVC_GIT_MAX_PUSH");
});
