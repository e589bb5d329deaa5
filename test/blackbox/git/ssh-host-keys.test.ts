// SSH host keys and the advertised SSH address (DECISIONS §0 SVC_SSH_ADDR, SVC_SSH_PUBLIC;
// SPEC §2.1 ssh_clone_url): the fingerprints printed at start are the ones the server presents,
// `svc ssh-host-keys` agrees, a restart keeps them, the private keys are 0600; ssh_clone_url
// follows the configuration. One data dir is reused across restarts.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRepo, setupOwner, type OrgOwner } from "../../helpers/git.ts";
import { client, runSvc, startServer } from "../../helpers/server.ts";
import { registerKey, run, sshExec, sshWorkspace, startSshServer, type SshKey, type SshRunningServer, type SshWorkspace } from "../../helpers/ssh.ts";

setDefaultTimeout(30_000);

let ws: SshWorkspace;
let dataDir: string;
let first: SshRunningServer;
let owner: OrgOwner;
let key: SshKey;
/** What the first server printed, as `{ ED25519: fp, RSA: fp }`. */
let printed: Record<string, string>;

/** `ssh-keyscan -p PORT -t ed25519,rsa HOST | ssh-keygen -lf -` as `{ TYPE: fp }`, plus the raw scan. */
async function keyscan(server: SshRunningServer): Promise<{ fingerprints: Record<string, string>; bits: Record<string, number>; scan: string }> {
  const scan = await run(["ssh-keyscan", "-p", String(server.sshPort), "-t", "ed25519,rsa", server.sshHost], { env: ws.env });
  expect(scan.code).toBe(0);
  const lines = scan.stdout.split("\n").filter((l) => l && !l.startsWith("#"));
  expect(lines.length).toBe(2);
  const listed = await run(["ssh-keygen", "-lf", "-"], { env: ws.env, input: scan.stdout });
  expect(listed.code).toBe(0);
  const fingerprints: Record<string, string> = {};
  const bits: Record<string, number> = {};
  for (const line of listed.stdout.trim().split("\n")) {
    const [size, fp, , type] = line.split(/\s+/);
    const t = type!.replace(/[()]/g, "");
    fingerprints[t] = fp!;
    bits[t] = Number(size);
  }
  return { fingerprints, bits, scan: scan.stdout };
}

/** Whether this machine can listen on the IPv6 loopback. */
function ipv6Loopback(): boolean {
  try {
    const l = Bun.listen({ hostname: "::1", port: 0, socket: { data() {} } });
    l.stop(true);
    return true;
  } catch {
    return false;
  }
}

const asMap = (list: { type: string; fingerprint: string }[]) => Object.fromEntries(list.map((k) => [k.type, k.fingerprint]));

async function repoBody(url: string, token: string, repo: string) {
  const r = await client({ url } as never, { token }).get(`/v1/orgs/${owner.org}/repos/${repo}`);
  expect(r.status).toBe(200);
  return r.body;
}

beforeAll(async () => {
  ws = sshWorkspace();
  dataDir = mkdtempSync(join(tmpdir(), "svc-ssh-hostkeys-"));
  key = await ws.keygen("owner", "ed25519");
  first = await startSshServer({ dataDir });
  printed = asMap(first.hostKeys);
  owner = await setupOwner(first, "hk");
  await createRepo(first, owner, "app");
  await registerKey(first, { cookie: owner.cookie }, "hk", key);
}, 60_000);

afterAll(async () => {
  await first?.stop();
  ws?.[Symbol.dispose]();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

describe("host keys", () => {
  test("start prints one ED25519 and one RSA fingerprint, before the listening line", () => {
    expect(first.hostKeys.map((k) => k.type)).toEqual(["ED25519", "RSA"]);
    for (const k of first.hostKeys) expect(k.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(first.banner.trimEnd().split("\n").at(-1)).toBe(`listening http=${first.url} ssh=127.0.0.1:${first.sshPort}`);
    expect(first.sshPort).toBeGreaterThan(0);
  });

  test("the printed fingerprints are the keys the server presents (ssh-keyscan | ssh-keygen -lf -)", async () => {
    const { fingerprints, bits } = await keyscan(first);
    expect(fingerprints).toEqual(printed);
    expect(bits.ED25519).toBe(256);
    expect(bits.RSA).toBeGreaterThanOrEqual(2048);
  });

  test("`svc ssh-host-keys` on the same data dir prints the same fingerprints", async () => {
    const r = await first.cli(["ssh-host-keys"]);
    expect(r.code).toBe(0);
    const listed = Object.fromEntries(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(" ") as [string, string]),
    );
    expect(listed).toEqual(printed);
  });

  test("the private key files are mode 0600; nothing half-written is left behind", () => {
    const names = readdirSync(dataDir).filter((n) => n.startsWith("ssh_host_"));
    expect(names.filter((n) => !n.endsWith(".pub")).sort()).toEqual(["ssh_host_ed25519_key", "ssh_host_rsa_key"]);
    expect(names.filter((n) => n.includes(".tmp"))).toEqual([]);
    for (const n of ["ssh_host_ed25519_key", "ssh_host_rsa_key"]) expect({ n, mode: statSync(join(dataDir, n)).mode & 0o777 }).toEqual({ n, mode: 0o600 });
  });

  test("a client that pins the scanned host keys connects (StrictHostKeyChecking=yes)", async () => {
    const { scan } = await keyscan(first);
    const knownHosts = join(ws.root, "known_hosts");
    writeFileSync(knownHosts, scan);
    const r = await sshExec(ws, first, key, undefined, { options: ["-o", "StrictHostKeyChecking=yes", "-o", `UserKnownHostsFile=${knownHosts}`] });
    expect({ code: r.code, greeted: r.stderr.startsWith("Hi ") }).toEqual({ code: 0, greeted: true });
  });

  test("a restart on the same data dir keeps the host keys: same lines, same scan, pinned clients still connect", async () => {
    const knownHosts = join(ws.root, "known_hosts");
    const oldPort = first.sshPort;
    const pinned = (await keyscan(first)).scan;
    await first.stop();
    first = await startSshServer({ dataDir });
    expect(asMap(first.hostKeys)).toEqual(printed);
    expect((await keyscan(first)).fingerprints).toEqual(printed);
    // The pinned entries name the old port: move them to the new one, keeping the old keys.
    writeFileSync(knownHosts, pinned.replaceAll(`[127.0.0.1]:${oldPort} `, `[127.0.0.1]:${first.sshPort} `));
    const r = await sshExec(ws, first, key, undefined, { options: ["-o", "StrictHostKeyChecking=yes", "-o", `UserKnownHostsFile=${knownHosts}`] });
    expect({ code: r.code, stderr: r.stderr.slice(0, 200) }).toEqual({ code: 0, stderr: expect.stringMatching(/^Hi /) });
  });

  test("`svc ssh-host-keys` on a fresh data dir creates the keys that serve then uses", async () => {
    const fresh = mkdtempSync(join(tmpdir(), "svc-ssh-fresh-"));
    try {
      const env = { SVC_DATA_DIR: fresh };
      const a = await runSvc(["ssh-host-keys"], env);
      const b = await runSvc(["ssh-host-keys"], env);
      expect({ code: a.code, same: a.stdout === b.stdout, lines: a.stdout.trim().split("\n").length }).toEqual({ code: 0, same: true, lines: 2 });
      const listed = Object.fromEntries(
        a.stdout
          .trim()
          .split("\n")
          .map((l) => l.split(" ") as [string, string]),
      );
      await using server = await startSshServer({ dataDir: fresh });
      expect(asMap(server.hostKeys)).toEqual(listed);
      expect((await keyscan(server)).fingerprints).toEqual(listed);
      expect(listed).not.toEqual(printed);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });
});

describe("ssh_clone_url", () => {
  test("with SVC_SSH_ADDR on port 0 it names the bound address: ssh://git@127.0.0.1:PORT/org/repo.git", async () => {
    const body = await repoBody(first.url, owner.token, "app");
    expect({ ssh_clone_url: body.ssh_clone_url, clone_url: body.clone_url }).toEqual({
      ssh_clone_url: `ssh://git@127.0.0.1:${first.sshPort}/hk/app.git`,
      clone_url: `${first.url}/hk/app.git`,
    });
    const list = await client(first, { token: owner.token }).get("/v1/orgs/hk/repos");
    expect(list.status).toBe(200);
    expect(list.body.repos.find((r: any) => r.name === "app").ssh_clone_url).toBe(body.ssh_clone_url);
  });

  test("a repository created now carries it in the create response too", async () => {
    const r = await client(first, { token: owner.token }).post("/v1/orgs/hk/repos", { name: "fresh.repo", public: false });
    expect({ status: r.status, ssh_clone_url: r.body.ssh_clone_url }).toEqual({
      status: 201,
      ssh_clone_url: `ssh://git@127.0.0.1:${first.sshPort}/hk/fresh.repo.git`,
    });
  });

  test("SVC_SSH_PUBLIC overrides the host:port written into it, not the listening address", async () => {
    await first.stop();
    first = await startSshServer({ dataDir, env: { SVC_SSH_PUBLIC: "git.example.com:2222" } });
    expect(first.ssh).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(first.sshPort).not.toBe(2222);
    const body = await repoBody(first.url, owner.token, "app");
    expect(body.ssh_clone_url).toBe("ssh://git@git.example.com:2222/hk/app.git");
    expect(asMap(first.hostKeys)).toEqual(printed);
  });

  test("an IPv6 SVC_SSH_PUBLIC keeps its brackets: ssh://git@[2001:db8::1]:2222/org/repo.git", async () => {
    await first.stop();
    first = await startSshServer({ dataDir, env: { SVC_SSH_PUBLIC: "[2001:db8::1]:2222" } });
    const body = await repoBody(first.url, owner.token, "app");
    expect(body.ssh_clone_url).toBe("ssh://git@[2001:db8::1]:2222/hk/app.git");
    const parsed = new URL(body.ssh_clone_url);
    expect({ hostname: parsed.hostname, port: parsed.port }).toEqual({ hostname: "[2001:db8::1]", port: "2222" });
  });

  test.skipIf(!ipv6Loopback())("listening on [::1]: the listening line and ssh_clone_url both bracket the address", async () => {
    await first.stop();
    first = await startSshServer({ dataDir, env: { SVC_SSH_ADDR: "[::1]:0" } });
    const port = first.banner.match(/ssh=\S*?(\d+)\n/)![1];
    expect(first.banner).toContain(`ssh=[::1]:${port}\n`);
    const body = await repoBody(first.url, owner.token, "app");
    expect(body.ssh_clone_url).toBe(`ssh://git@[::1]:${port}/hk/app.git`);
  });

  test("without SVC_SSH_ADDR it is null and the listening line says ssh=off", async () => {
    await first.stop();
    await using server = await startServer({ dataDir });
    expect(server.ssh).toBeNull();
    const body = await repoBody(server.url, owner.token, "app");
    expect(body).toHaveProperty("ssh_clone_url", null);
  });

  test("SVC_SSH_PUBLIC without SVC_SSH_ADDR is a boot failure: exit 2, one line on stderr", async () => {
    const r = await runSvc(["serve"], { SVC_DATA_DIR: dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_SSH_PUBLIC: "git.example.com:2222" });
    expect({ code: r.code, lines: r.stderr.trim().split("\n").length, stdout: r.stdout }).toEqual({ code: 2, lines: 1, stdout: "" });
    expect(r.stderr).toContain("SVC_SSH_PUBLIC");
    expect(existsSync(dataDir)).toBe(true);
  });
});
