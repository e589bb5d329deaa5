// Who a key acts as over SSH (SPEC §5.5 item 4, §5.6): a personal key is its person, resolved
// from their role on every connection; a deploy key is its token (scopes and repo binding);
// revoking the key, the token or the membership cuts access at the next connection.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { commitFiles, gitSandbox, importHistory, initRepo, mintTokenWithId, type GitSandbox } from "../../helpers/git.ts";
import {
  as,
  gitSshEnv,
  makeRepo,
  postKey,
  registerKey,
  sshExec,
  sshOptions,
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

let server: SshRunningServer;
let ws: SshWorkspace;
let g: GitSandbox;
/** auth: owner, viewer, member, leaver (removed later), demoted (role changes); other: outsider. */
let owner: SshPerson, viewer: SshPerson, member: SshPerson, leaver: SshPerson, demoted: SshPerson, outsider: SshPerson;
const k: Record<string, SshKey> = {};
/** Deploy key record ids and token ids by name. */
const tokenIds: Record<string, string> = {};
const keyIds: Record<string, string> = {};
let tip: string;
let work: string;

const url = (repo: string, org = "auth") => sshUrl(server, org, repo);

/** `git ls-remote` over SSH with `key`: exit code, stderr and the main tip (if listed). */
async function lsRemote(key: SshKey, repo: string, org = "auth") {
  const r = await g.run(["ls-remote", url(repo, org)], { env: gitSshEnv(key) });
  const main = /^([0-9a-f]{40})\trefs\/heads\/main$/m.exec(r.stdout)?.[1] ?? null;
  return { code: r.code, main, stderr: r.stderr };
}

/** Clones with `key`; returns exit code and stderr (and the dir). */
async function tryClone(key: SshKey, repo: string, org = "auth") {
  const dir = g.path("clone");
  const r = await g.run(["clone", "-q", url(repo, org), dir], { env: gitSshEnv(key) });
  return { code: r.code, stderr: r.stderr, dir };
}

/** Pushes a new commit on top of `tip` to `branch` with `key`. */
async function tryPush(key: SshKey, repo: string, branch: string, org = "auth") {
  await g.ok(["checkout", "-q", "--detach", tip], { cwd: work });
  const commit = await commitFiles(g, work, { [`${branch}.txt`]: `${branch} ${Math.random()}\n` }, branch);
  const r = await g.run(["push", url(repo, org), `${commit}:refs/heads/${branch}`], { cwd: work, env: gitSshEnv(key) });
  return { code: r.code, stderr: r.stderr, commit };
}

beforeAll(async () => {
  ws = sshWorkspace();
  g = gitSandbox("svc-ssh-auth-");
  const names = ["owner", "viewer", "member", "leaver", "demoted", "outsider", "read", "write", "bound", "doomed", "foreign", "stranger", "via-token"];
  for (const key of await Promise.all(names.map((n) => ws.keygen(n, "ed25519")))) k[key.name] = key;
  server = await startSshServer();
  owner = await sshPerson(server, "auth", "olga@example.com", "owner");
  [viewer, member, leaver, demoted, outsider] = await Promise.all([
    sshPerson(server, "auth", "vic@example.com", "viewer"),
    sshPerson(server, "auth", "meg@example.com", "member"),
    sshPerson(server, "auth", "lee@example.com", "member"),
    sshPerson(server, "auth", "dee@example.com", "member"),
    sshPerson(server, "other", "oscar@example.com", "owner"),
  ]);
  for (const [who, name] of [
    [owner, "owner"],
    [viewer, "viewer"],
    [member, "member"],
    [leaver, "leaver"],
    [demoted, "demoted"],
  ] as const) {
    keyIds[name] = (await registerKey(server, who, "auth", k[name]!)).id;
  }
  keyIds.outsider = (await registerKey(server, outsider, "other", k.outsider!)).id;
  for (const repo of ["secret", "a", "b"]) await makeRepo(server, owner, "auth", repo);
  await makeRepo(server, owner, "auth", "open", true);
  await makeRepo(server, outsider, "other", "theirs");

  const service = async (name: string, scopes: string[], repo?: string) => {
    tokenIds[name] = (await mintTokenWithId(server, owner.cookie, "auth", { scopes, label: `deploy-${name}`, kind: "service", ...(repo ? { repo } : {}) })).id;
    keyIds[name] = (await registerKey(server, owner, "auth", k[name]!, tokenIds[name])).id;
  };
  await service("read", ["repo:read"]);
  await service("write", ["repo:write"]);
  await service("bound", ["repo:write"], "a");
  await service("doomed", ["repo:read"]);
  tokenIds.foreign = (await mintTokenWithId(server, outsider.cookie, "other", { scopes: ["repo:read"], label: "deploy-foreign", kind: "service" })).id;
  keyIds.foreign = (await registerKey(server, outsider, "other", k.foreign!, tokenIds.foreign)).id;

  work = await initRepo(g);
  tip = await importHistory(g, work, { ref: "refs/heads/main", count: 4 });
  for (const repo of ["secret", "a", "b", "open"]) await g.ok(["push", "-q", url(repo), "main"], { cwd: work, env: gitSshEnv(k.owner!) });
  await g.ok(["push", "-q", url("theirs", "other"), "main"], { cwd: work, env: gitSshEnv(k.outsider!) });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
  ws?.[Symbol.dispose]();
}, 30_000);

describe("personal keys act as their person", () => {
  test("the owner's key clones and pushes", async () => {
    expect(await lsRemote(k.owner!, "secret")).toEqual({ code: 0, main: tip, stderr: "" });
    const p = await tryPush(k.owner!, "secret", "owner-branch");
    expect(p.code).toBe(0);
  });

  test("a viewer's key clones, but its push is refused naming the repo and advising a fork; nothing moves", async () => {
    const c = await tryClone(k.viewer!, "secret");
    expect({ code: c.code, head: c.code === 0 ? await g.ok(["rev-parse", "HEAD"], { cwd: c.dir }) : c.stderr }).toEqual({ code: 0, head: tip });
    const p = await tryPush(k.viewer!, "secret", "viewer-branch");
    expect(p.code).not.toBe(0);
    expect(p.stderr).toContain("auth/secret");
    expect(p.stderr).toMatch(/fork/i);
    const after = await g.run(["ls-remote", url("secret"), "refs/heads/viewer-branch"], { env: gitSshEnv(k.owner!) });
    expect({ code: after.code, stdout: after.stdout }).toEqual({ code: 0, stdout: "" });
  });

  test("a member's key pushes", async () => {
    expect((await tryPush(k.member!, "secret", "member-branch")).code).toBe(0);
  });

  test("an outsider's key (a person of another org) gets 'not found' for a private repo, to read or to push", async () => {
    const c = await tryClone(k.outsider!, "secret");
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain("repository 'auth/secret' not found");
    const p = await tryPush(k.outsider!, "secret", "outsider-branch");
    expect(p.code).not.toBe(0);
    expect(p.stderr).toContain("repository 'auth/secret' not found");
    expect(p.stderr).not.toMatch(/fork/i);
  });

  test("a public repository is cloneable by any registered key; an outsider's push there is refused with the fork advice", async () => {
    const got: Record<string, unknown> = {};
    for (const name of ["outsider", "viewer", "foreign", "read"]) got[name] = (await lsRemote(k[name]!, "open")).main;
    expect(got).toEqual({ outsider: tip, viewer: tip, foreign: tip, read: tip });
    const p = await tryPush(k.outsider!, "open", "outsider-branch");
    expect(p.code).not.toBe(0);
    expect(p.stderr).toContain("auth/open");
    expect(p.stderr).toMatch(/fork/i);
  });

  test("a personal key registered in one org does not open another org's private repos to its person", async () => {
    expect((await lsRemote(k.owner!, "theirs", "other")).code).not.toBe(0);
    expect((await lsRemote(k.outsider!, "theirs", "other")).main).toBe(tip);
  });

  test("a key registered with a repo:read personal token is no stronger than that token: it cannot push", async () => {
    // Token minting forbids a token to create a stronger credential (SPEC §5.3); a key is one too.
    const ro = await mintTokenWithId(server, owner.cookie, "auth", { scopes: ["repo:read"], label: "read-only" });
    const r = await postKey(server, { token: ro.token }, "auth", { public_key: k["via-token"]!.publicKey, label: "via token" });
    expect([201, 403]).toContain(r.status);
    if (r.status !== 201) return;
    const p = await tryPush(k["via-token"]!, "secret", "via-token");
    expect({ registered: r.status, pushed: p.code === 0 }).toEqual({ registered: 201, pushed: false });
  });

  test("a role change applies at the next connection: demoted to viewer, push refused; promoted back, push accepted", async () => {
    expect((await tryPush(k.demoted!, "secret", "demoted-1")).code).toBe(0);
    expect((await as(server, owner).put(`/v1/orgs/auth/members/${demoted.id}`, { role: "viewer" })).status).toBe(200);
    const refused = await tryPush(k.demoted!, "secret", "demoted-2");
    expect({ code: refused.code === 0 ? 0 : "non-zero", fork: /fork/i.test(refused.stderr) }).toEqual({ code: "non-zero", fork: true });
    expect((await lsRemote(k.demoted!, "secret")).main).toBe(tip);
    expect((await as(server, owner).put(`/v1/orgs/auth/members/${demoted.handle}`, { role: "member" })).status).toBe(200);
    expect((await tryPush(k.demoted!, "secret", "demoted-3")).code).toBe(0);
  });
});

describe("deploy keys act as their token", () => {
  test("a repo:read service token's key clones but cannot push", async () => {
    expect((await lsRemote(k.read!, "secret")).main).toBe(tip);
    expect((await tryClone(k.read!, "b")).code).toBe(0);
    const p = await tryPush(k.read!, "secret", "read-branch");
    expect(p.code).not.toBe(0);
    expect(p.stderr).toContain("auth/secret");
    expect((await lsRemote(k.owner!, "secret")).stderr).toBe("");
    const r = await g.run(["ls-remote", url("secret"), "refs/heads/read-branch"], { env: gitSshEnv(k.owner!) });
    expect(r.stdout).toBe("");
  });

  test("a repo:write service token's key pushes", async () => {
    const p = await tryPush(k.write!, "secret", "write-branch");
    expect({ code: p.code, stderr: p.stderr.includes("error") ? p.stderr : "" }).toEqual({ code: 0, stderr: "" });
    const r = await g.run(["ls-remote", url("secret"), "refs/heads/write-branch"], { env: gitSshEnv(k.owner!) });
    expect(r.stdout.split("\t")[0]).toBe(p.commit);
  });

  test("a key for a token bound to repo a reads and pushes a, and gets 'not found' for repo b", async () => {
    expect((await lsRemote(k.bound!, "a")).main).toBe(tip);
    expect((await tryPush(k.bound!, "a", "bound-branch")).code).toBe(0);
    const c = await tryClone(k.bound!, "b");
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain("repository 'auth/b' not found");
    const p = await tryPush(k.bound!, "b", "bound-branch");
    expect(p.code).not.toBe(0);
    expect(p.stderr).toContain("repository 'auth/b' not found");
  });

  test("a key for another org's service token reads only public repos here", async () => {
    expect((await lsRemote(k.foreign!, "open")).main).toBe(tip);
    const c = await tryClone(k.foreign!, "secret");
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain("repository 'auth/secret' not found");
  });
});

describe("revocation cuts the next connection", () => {
  test("a key that was never registered is refused at authentication (Permission denied (publickey))", async () => {
    const r = await lsRemote(k.stranger!, "open");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("Permission denied (publickey)");
    const shell = await sshExec(ws, server, k.stranger!);
    expect({ code: shell.code, denied: shell.stderr.includes("Permission denied (publickey)") }).toEqual({ code: 255, denied: true });
  });

  test("deleting a personal key", async () => {
    expect((await lsRemote(k.member!, "secret")).main).toBe(tip);
    expect((await as(server, member).delete(`/v1/orgs/auth/ssh-keys/${keyIds.member}`)).status).toBe(204);
    const r = await lsRemote(k.member!, "secret");
    expect({ code: r.code === 0 ? 0 : "non-zero", denied: r.stderr.includes("Permission denied (publickey)") }).toEqual({ code: "non-zero", denied: true });
    expect((await lsRemote(k.member!, "open")).code).not.toBe(0);
  });

  test("deleting the token behind a deploy key", async () => {
    expect((await lsRemote(k.doomed!, "secret")).main).toBe(tip);
    expect((await as(server, owner).delete(`/v1/orgs/auth/tokens/${tokenIds.doomed}`)).status).toBe(204);
    const r = await lsRemote(k.doomed!, "secret");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Permission denied \(publickey\)|not found/);
    expect((await lsRemote(k.doomed!, "open")).code).not.toBe(0);
  });

  test("deleting a deploy key", async () => {
    expect((await lsRemote(k.read!, "secret")).main).toBe(tip);
    expect((await as(server, owner).delete(`/v1/orgs/auth/ssh-keys/${keyIds.read}`)).status).toBe(204);
    expect((await lsRemote(k.read!, "secret")).stderr).toContain("Permission denied (publickey)");
  });

  test("removing the person from the org: their key no longer reads the org's private repos", async () => {
    expect((await lsRemote(k.leaver!, "secret")).main).toBe(tip);
    expect((await as(server, owner).delete(`/v1/orgs/auth/members/${leaver.id}`)).status).toBe(204);
    const r = await lsRemote(k.leaver!, "secret");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/not found|Permission denied \(publickey\)/);
    const p = await tryPush(k.leaver!, "secret", "leaver-branch");
    expect(p.code).not.toBe(0);
  });

  test("revoking a key also stops new sessions on an already open connection (multiplexed)", async () => {
    const sock = join(ws.root, "mux.sock");
    const master = Bun.spawn(
      ["ssh", "-o", "LogLevel=DEBUG1", ...sshOptions(k.viewer!), "-M", "-S", sock, "-N", "-p", String(server.sshPort), `git@${server.sshHost}`],
      {
        env: ws.env,
        stdin: "ignore",
        stdout: "ignore",
        stderr: "pipe",
      },
    );
    try {
      // Wait for the master to be ready: it logs once its control socket listens.
      const reader = (master.stderr as ReadableStream<Uint8Array>).getReader();
      let log = "";
      while (!/setting up multiplex master socket|Entering interactive session/.test(log)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`mux master exited: ${log}`);
        log += new TextDecoder().decode(value);
      }
      void (async () => {
        while (!(await reader.read()).done);
      })();
      const viaMux = { GIT_SSH_COMMAND: `ssh -F /dev/null -o ControlMaster=no -o ControlPath=${sock} -o BatchMode=yes -o LogLevel=ERROR` };
      const before = await g.run(["ls-remote", url("secret")], { env: viaMux });
      expect({ code: before.code, main: before.stdout.includes(`${tip}\trefs/heads/main`) }).toEqual({ code: 0, main: true });
      expect((await as(server, viewer).delete(`/v1/orgs/auth/ssh-keys/${keyIds.viewer}`)).status).toBe(204);
      const after = await g.run(["ls-remote", url("secret")], { env: viaMux });
      expect(after.code).not.toBe(0);
      expect(after.stdout).toBe("");
      expect(after.stderr).toMatch(/no longer authorized|not found/);
    } finally {
      master.kill();
      await master.exited;
    }
  });
});
