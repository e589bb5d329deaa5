// Git over SSH with the real OpenSSH client and real git (SPEC §5.6): clone, fetch and push with
// every accepted key type and both protocol versions, the path forms git sends, and what the
// front door does with anything that is not a git service (no shell, no forwarding, clear refusals).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { caller } from "../../helpers/api.ts";
import { clone, commitFiles, fsck, gitSandbox, importHistory, initRepo, localRefs, mintTokenWithId, type GitSandbox } from "../../helpers/git.ts";
import { startReceiver, type Receiver } from "../../helpers/receiver.ts";
import {
  gitSshEnv,
  makeRepo,
  registerKey,
  scpUrl,
  sshExec,
  sshPerson,
  sshUrl,
  sshWorkspace,
  startSshServer,
  type SshKey,
  type SshPerson,
  type SshRunningServer,
  type SshWorkspace,
} from "../../helpers/ssh.ts";

// Real git over real ssh: a few seconds per test, more on a busy machine.
setDefaultTimeout(60_000);

const KEY_TYPES: [string, string, number?][] = [
  ["ed25519", "ed25519"],
  ["ecdsa-256", "ecdsa", 256],
  ["ecdsa-384", "ecdsa", 384],
  ["ecdsa-521", "ecdsa", 521],
  ["rsa-2048", "rsa", 2048],
  ["rsa-4096", "rsa", 4096],
];

let server: SshRunningServer;
let ws: SshWorkspace;
let g: GitSandbox;
let owner: SshPerson;
const keys: Record<string, SshKey> = {};
let deployKey: SshKey;
let seedTip: string;
let rx: Receiver;

/** git with `key` over SSH and protocol `version`. */
function git(key: SshKey, version: 0 | 2, port?: number) {
  const env = gitSshEnv(key, port);
  const pre = ["-c", `protocol.version=${version}`];
  return {
    run: (args: string[], cwd?: string, extra: Record<string, string> = {}) => g.run([...pre, ...args], { cwd, env: { ...env, ...extra } }),
    ok: (args: string[], cwd?: string) => g.ok([...pre, ...args], { cwd, env }),
  };
}

/** The server's refs through `git ls-remote` over SSH. */
async function remoteRefs(key: SshKey, url: string): Promise<Record<string, string>> {
  const out = await git(key, 2).ok(["ls-remote", "--heads", "--tags", url]);
  return Object.fromEntries(
    out
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t").reverse() as [string, string]),
  );
}

beforeAll(async () => {
  ws = sshWorkspace();
  g = gitSandbox("svc-ssh-git-");
  const made = await Promise.all([...KEY_TYPES.map(([name, type, bits]) => ws.keygen(name, type, bits)), ws.keygen("deploy", "ed25519")]);
  for (const k of made) keys[k.name] = k;
  deployKey = keys.deploy!;
  rx = startReceiver();
  // The webhook receiver is on loopback.
  server = await startSshServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1" } });
  owner = await sshPerson(server, "sg", "sol@example.com", "owner");
  for (const [name] of KEY_TYPES) await registerKey(server, owner, "sg", keys[name]!);
  const token = await mintTokenWithId(server, owner.cookie, "sg", { scopes: ["repo:read"], label: "ci-bot", kind: "service" });
  await registerKey(server, owner, "sg", deployKey, token.id);
  await makeRepo(server, owner, "sg", "app");
  await makeRepo(server, owner, "sg", "dotted.name");
  await makeRepo(server, owner, "sg", "big");
}, 60_000);

afterAll(async () => {
  rx?.stop();
  await server?.stop();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
}, 30_000);

describe("clone, fetch and push", () => {
  test("an empty repository clones over SSH (with the empty-repository warning)", async () => {
    const r = await git(keys.ed25519!, 2).run(["clone", sshUrl(server, "sg", "app"), g.path("empty")]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringContaining("empty repository") });
  });

  test("the first push over SSH creates main", async () => {
    const dir = await initRepo(g);
    seedTip = await importHistory(g, dir, { ref: "refs/heads/main", count: 12 });
    await git(keys.ed25519!, 0).ok(["push", "-q", sshUrl(server, "sg", "app"), "main"], dir);
    expect(await remoteRefs(keys.ed25519!, sshUrl(server, "sg", "app"))).toEqual({ "refs/heads/main": seedTip });
  });

  for (const [name] of KEY_TYPES) {
    test(`${name}: clone v0 and v2, push v0 and v2, fetch v0 and v2, fsck`, async () => {
      const key = keys[name]!;
      const url = sshUrl(server, "sg", "app");
      const branch = `refs/heads/by-${name}`;

      // Clone with each protocol, and check which one was spoken.
      const dirs: Record<0 | 2, string> = { 0: g.path(`${name}-v0`), 2: g.path(`${name}-v2`) };
      for (const v of [0, 2] as const) {
        const r = await git(key, v).run(["clone", url, dirs[v]], undefined, { GIT_TRACE_PACKET: "1" });
        expect({ v, code: r.code }).toEqual({ v, code: 0 });
        expect({ v, spokeV2: /packet:\s+\S+< version 2$/m.test(r.stderr) }).toEqual({ v, spokeV2: v === 2 });
        expect(await g.ok(["rev-parse", "HEAD"], { cwd: dirs[v] })).toBe(seedTip);
      }

      // Push from the v0 clone with v0; fetch it into the v2 clone with v2.
      const a = await commitFiles(g, dirs[0], { [`${name}/a.txt`]: `pushed by ${name} over v0\n` }, `${name} v0`);
      await git(key, 0).ok(["push", "-q", "origin", `HEAD:${branch}`], dirs[0]);
      await git(key, 2).ok(["fetch", "-q", "origin", `+${branch}:refs/remotes/origin/by`], dirs[2]);
      expect(await g.ok(["rev-parse", "refs/remotes/origin/by"], { cwd: dirs[2] })).toBe(a);

      // Push on top of it from the v2 clone with v2 set; fetch back into the v0 clone with v0.
      await g.ok(["checkout", "-q", "-b", "by", "refs/remotes/origin/by"], { cwd: dirs[2] });
      const b = await commitFiles(g, dirs[2], { [`${name}/b.txt`]: `pushed by ${name} over v2\n` }, `${name} v2`);
      await git(key, 2).ok(["push", "-q", "origin", `HEAD:${branch}`], dirs[2]);
      await git(key, 0).ok(["fetch", "-q", "origin", `+${branch}:refs/remotes/origin/by`], dirs[0]);
      expect(await g.ok(["rev-parse", "refs/remotes/origin/by"], { cwd: dirs[0] })).toBe(b);

      expect((await remoteRefs(key, url))[branch]).toBe(b);
      for (const v of [0, 2] as const) {
        const f = await fsck(g, dirs[v]);
        expect({ v, code: f.code, stderr: f.stderr }).toEqual({ v, code: 0, stderr: "" });
      }
    });
  }

  test("a non-fast-forward push is rejected; --force, branch deletion and tags go through", async () => {
    const key = keys.ed25519!;
    const dir = await clone(g, sshUrl(server, "sg", "app"), [], { env: gitSshEnv(key) });
    await g.ok(["reset", "-q", "--hard", "HEAD~1"], { cwd: dir });
    const side = await commitFiles(g, dir, { "side.txt": "side\n" }, "side");
    const nonFf = await git(key, 0).run(["push", "origin", "HEAD:refs/heads/by-ed25519"], dir);
    expect(nonFf.code).not.toBe(0);
    expect(nonFf.stderr).toMatch(/rejected|non-fast-forward|fetch first/);
    await git(key, 0).ok(["push", "-q", "--force", "origin", "HEAD:refs/heads/by-ed25519"], dir);
    await g.ok(["tag", "-a", "-m", "v1", "v1.0"], { cwd: dir });
    await git(key, 0).ok(["push", "-q", "origin", "v1.0", ":refs/heads/by-rsa-2048"], dir);
    const refs = await remoteRefs(key, sshUrl(server, "sg", "app"));
    expect({ forced: refs["refs/heads/by-ed25519"], deleted: refs["refs/heads/by-rsa-2048"], tag: refs["refs/tags/v1.0"] }).toEqual({
      forced: side,
      deleted: undefined,
      tag: await g.ok(["rev-parse", "v1.0"], { cwd: dir }),
    });
  });

  test("a push of several megabytes and its clone survive SSH flow control", async () => {
    const key = keys["rsa-2048"]!;
    const dir = await initRepo(g);
    const blob = randomBytes(6 * 1024 * 1024);
    const tip = await commitFiles(g, dir, { "blob.bin": blob, "readme.md": "big\n" }, "big");
    await git(key, 0).ok(["push", "-q", sshUrl(server, "sg", "big"), "main"], dir);
    const back = g.path("big");
    await git(key, 2).ok(["clone", "-q", sshUrl(server, "sg", "big"), back]);
    expect(await g.ok(["rev-parse", "HEAD"], { cwd: back })).toBe(tip);
    expect(Buffer.compare(Buffer.from(await Bun.file(`${back}/blob.bin`).arrayBuffer()), blob)).toBe(0);
    expect((await fsck(g, back)).code).toBe(0);
  });

  test("eight clones at once over SSH all complete and agree", async () => {
    const dirs = Array.from({ length: 8 }, () => g.path("parallel"));
    const results = await Promise.all(
      dirs.map((d, i) => git(keys[KEY_TYPES[i % KEY_TYPES.length]![0]]!, i % 2 ? 2 : 0).run(["clone", "-q", sshUrl(server, "sg", "app"), d])),
    );
    expect(results.map((r) => r.code)).toEqual(Array(8).fill(0));
    const heads = await Promise.all(dirs.map((d) => g.ok(["rev-parse", "HEAD"], { cwd: d })));
    expect(new Set(heads)).toEqual(new Set([seedTip]));
  });

  test('an SSH push emits a push event with { via: "ssh" }, delivered to the repository\'s webhook; a refused push emits none', async () => {
    const repo = await makeRepo(server, owner, "sg", "evented");
    const hook = await caller(server, owner).post("/v1/orgs/sg/repos/evented/webhooks", { url: `${rx.url}/evented` });
    expect(hook.status).toBe(201);
    rx.secret("/evented", hook.body.secret);
    const dir = await initRepo(g);
    await commitFiles(g, dir, { "e.txt": "event\n" }, "evented");
    // The read-only deploy key is refused; then a push over SSH, then a commit through the API.
    // One hook receives events in order, so once the API's delivery is in, every earlier one is.
    expect((await git(deployKey, 0).run(["push", "-q", sshUrl(server, "sg", "evented"), "main"], dir)).code).not.toBe(0);
    await git(keys.ed25519!, 0).ok(["push", "-q", sshUrl(server, "sg", "evented"), "main"], dir);
    const api = await caller(server, owner).post("/v1/orgs/sg/repos/evented/commits", {
      branch: "main",
      message: "after",
      operations: [{ op: "put", path: "f.txt", content: "f\n" }],
    });
    expect(api.status).toBe(201);
    await rx.until(() => rx.of("/evented").some((d) => d.body?.payload?.via === "api"));
    expect(rx.of("/evented").map((d) => ({ signed: d.signed, event: d.event, body: d.body }))).toEqual([
      { signed: true, event: "push", body: { event: "push", repo_id: repo.id, payload: { via: "ssh" } } },
      { signed: true, event: "push", body: { event: "push", repo_id: repo.id, payload: { via: "api", commit: api.body.commit, branch: "main" } } },
    ]);
  });
});

describe("path forms", () => {
  test("git clones from ssh://…/org/repo.git, ssh://…/org/repo, and scp-like org/repo.git and org/repo", async () => {
    const key = keys.ed25519!;
    const urls = {
      "ssh .git": sshUrl(server, "sg", "app"),
      "ssh bare": sshUrl(server, "sg", "app", false),
      "scp .git": scpUrl(server, "sg", "app"),
      "scp bare": scpUrl(server, "sg", "app").replace(/\.git$/, ""),
    };
    const got: Record<string, unknown> = {};
    for (const [form, url] of Object.entries(urls)) {
      const dir = g.path("form");
      const r = await g.run(["clone", "-q", url, dir], { env: gitSshEnv(key, server.sshPort) });
      got[form] = r.code === 0 ? await g.ok(["rev-parse", "HEAD"], { cwd: dir }) : r.stderr;
    }
    expect(got).toEqual(Object.fromEntries(Object.keys(urls).map((f) => [f, seedTip])));
  });

  test("pushes work through the bare and scp-like forms too", async () => {
    const key = keys.ed25519!;
    const dir = await clone(g, sshUrl(server, "sg", "app", false), [], { env: gitSshEnv(key) });
    const one = await commitFiles(g, dir, { "form1.txt": "1\n" }, "form 1");
    await g.ok(["push", "-q", sshUrl(server, "sg", "app", false), "HEAD:refs/heads/form-bare"], { cwd: dir, env: gitSshEnv(key) });
    const two = await commitFiles(g, dir, { "form2.txt": "2\n" }, "form 2");
    await g.ok(["push", "-q", scpUrl(server, "sg", "app"), "HEAD:refs/heads/form-scp"], { cwd: dir, env: gitSshEnv(key, server.sshPort) });
    const refs = await remoteRefs(key, sshUrl(server, "sg", "app"));
    expect({ bare: refs["refs/heads/form-bare"], scp: refs["refs/heads/form-scp"] }).toEqual({ bare: one, scp: two });
  });

  test("the exec path may be quoted or not, with or without a leading slash and .git", async () => {
    const key = keys.ed25519!;
    const forms = ["'sg/app.git'", "'/sg/app.git'", "'sg/app'", "'/sg/app'", "sg/app.git", "/sg/app"];
    const got: Record<string, unknown> = {};
    for (const form of forms) {
      // A v0 advertisement, then a flush from us: "nothing wanted", and the server ends.
      const r = await sshExec(ws, server, key, `git-upload-pack ${form}`, { input: "0000" });
      got[form] = { code: r.code, main: r.stdout.includes(`${seedTip} refs/heads/main`) };
    }
    expect(got).toEqual(Object.fromEntries(forms.map((f) => [f, { code: 0, main: true }])));
  });

  test("a repository name with dots resolves (org/dotted.name.git is dotted.name)", async () => {
    const key = keys.ed25519!;
    const dir = await initRepo(g);
    const tip = await commitFiles(g, dir, { "x.txt": "x\n" }, "x");
    await g.ok(["push", "-q", sshUrl(server, "sg", "dotted.name"), "main"], { cwd: dir, env: gitSshEnv(key) });
    expect(await remoteRefs(key, sshUrl(server, "sg", "dotted.name"))).toEqual({ "refs/heads/main": tip });
    expect(await remoteRefs(key, sshUrl(server, "sg", "dotted.name", false))).toEqual({ "refs/heads/main": tip });
  });

  test("an unknown repository or org is 'not found', exit 1", async () => {
    const key = keys.ed25519!;
    const repo = await sshExec(ws, server, key, "git-upload-pack 'sg/nope.git'");
    const org = await sshExec(ws, server, key, "git-receive-pack '/nobody/app.git'");
    expect([repo, org].map((r) => ({ code: r.code, stderr: r.stderr, stdout: r.stdout }))).toEqual([
      { code: 1, stderr: "ERROR: repository 'sg/nope' not found\n", stdout: "" },
      { code: 1, stderr: "ERROR: repository 'nobody/app' not found\n", stdout: "" },
    ]);
    const viaGit = await git(key, 2).run(["ls-remote", sshUrl(server, "sg", "nope")]);
    expect(viaGit.code).not.toBe(0);
    expect(viaGit.stderr).toContain("repository 'sg/nope' not found");
  });
});

describe("commands other than git", () => {
  test("no command: a greeting naming the person's handle on stderr, exit 0, nothing on stdout", async () => {
    const r = await sshExec(ws, server, keys.ed25519!);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: "" });
    expect(r.stderr).toContain(owner.handle);
    expect(r.stderr).toMatch(/does not provide shell access/);
  });

  test("no shell behind the greeting: commands typed on stdin are not run, even with a forced pty", async () => {
    const plain = await sshExec(ws, server, keys.ed25519!, undefined, { input: "echo PWNED-$((6*7))\nexit 3\n" });
    const tty = await sshExec(ws, server, keys["ecdsa-256"]!, undefined, { input: "echo PWNED-$((6*7))\nexit 3\n", options: ["-tt"] });
    for (const r of [plain, tty]) {
      expect(r.code).toBe(0);
      expect(r.stdout + r.stderr).not.toContain("PWNED-42");
      expect(r.stdout + r.stderr).toContain(owner.handle);
    }
  });

  test("with a deploy key the greeting names the token's label", async () => {
    const r = await sshExec(ws, server, deployKey);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: "" });
    expect(r.stderr).toContain("ci-bot");
    expect(r.stderr).not.toContain(owner.handle);
  });

  test("`ls` and other commands are refused with a clear message and a non-zero exit", async () => {
    for (const command of ["ls", "sh -c id", "git-upload-archive 'sg/app.git'", "scp -f /etc/passwd"]) {
      const r = await sshExec(ws, server, keys.ed25519!, command);
      expect({ command, code: r.code === 0 ? 0 : "non-zero", stdout: r.stdout }).toEqual({ command, code: "non-zero", stdout: "" });
      expect(r.stderr).toMatch(/git-upload-pack and git-receive-pack/);
      expect(r.stderr).not.toContain("root:");
    }
  });

  test("subsystems (sftp) are refused", async () => {
    const r = await sshExec(ws, server, keys.ed25519!, "sftp", { options: ["-s"] });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
  });

  test("the server is no proxy: stdio forwarding (-W) to its own HTTP port is refused", async () => {
    const http = new URL(server.url);
    const r = await sshExec(ws, server, keys.ed25519!, undefined, {
      options: ["-W", `${http.hostname}:${http.port}`],
      input: "GET /v1/health HTTP/1.0\r\n\r\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout).not.toContain("HTTP/1");
  });

  test("malformed git commands are refused without crashing; a clone still works afterwards", async () => {
    const commands = [
      "git-upload-pack",
      "git-upload-pack ''",
      "git-upload-pack 'a/b/c'",
      "git-receive-pack '../../etc'",
      "git-upload-pack '../sg/app.git'",
      "git-upload-pack 'sg/../app.git'",
      "git-upload-pack 'sg/app.git' extra",
      `git-upload-pack '${"a".repeat(10 * 1024)}'`,
      `git-upload-pack 'sg/${"a".repeat(10 * 1024)}.git'`,
    ];
    const results = await Promise.all(commands.map((c) => sshExec(ws, server, keys.ed25519!, c)));
    results.forEach((r, i) => {
      const label = commands[i]!.slice(0, 40);
      expect({ label, failed: r.code !== 0, stdout: r.stdout }).toEqual({ label, failed: true, stdout: "" });
      expect(r.stderr.length).toBeGreaterThan(0);
      // A refusal may quote the request, but never more than the request itself.
      expect(r.stderr.length).toBeLessThan(commands[i]!.length + 200);
      expect(r.stderr).not.toContain("internal error");
    });
    expect(server.proc.exitCode).toBeNull();
    const dir = g.path("after");
    await git(keys.ed25519!, 2).ok(["clone", "-q", sshUrl(server, "sg", "app"), dir]);
    expect(await localRefs(g, dir)).toHaveProperty("refs/heads/main", seedTip);
  });
});
