// Operating several nodes (issue 27, DECISIONS §5 "Several nodes"): every node presents the same
// SSH host key (kept in the database, not in a node's data dir), as a client behind a TCP
// balancer must see it; `svc fsck` checks the cluster's database and bucket while nodes write.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, type Cluster } from "../helpers/cluster.ts";
import { clone, commitFiles, createRepo, type GitSandbox, gitSandbox, type OrgOwner, repoUrl, setupOwner } from "../helpers/git.ts";
import { run, sshWorkspace, type SshWorkspace } from "../helpers/ssh.ts";
import { type RunningServer, runSvc } from "../helpers/server.ts";

setDefaultTimeout(120_000);

/** `ssh-keyscan` of a node's SSH port through `ssh-keygen -lf -`: `{ TYPE: SHA256:… }`. */
async function keyscan(ws: SshWorkspace, node: RunningServer): Promise<Record<string, string>> {
  const colon = node.ssh!.lastIndexOf(":");
  const scan = await run(["ssh-keyscan", "-p", node.ssh!.slice(colon + 1), "-t", "ed25519,rsa", node.ssh!.slice(0, colon)], { env: ws.env });
  expect(scan.code).toBe(0);
  const listed = await run(["ssh-keygen", "-lf", "-"], { env: ws.env, input: scan.stdout });
  expect(listed.code).toBe(0);
  const out: Record<string, string> = {};
  for (const line of listed.stdout.trim().split("\n")) {
    const [, fp, , type] = line.split(/\s+/);
    out[type!.replace(/[()]/g, "")] = fp!;
  }
  return out;
}

describe("two nodes over PostgreSQL: operations", () => {
  let cluster: Cluster;
  let ws: SshWorkspace;
  let g: GitSandbox;
  let owner: OrgOwner;
  let scratch: string;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 2, env: { SVC_SSH_ADDR: "127.0.0.1:0" } });
    ws = sshWorkspace();
    g = gitSandbox();
    scratch = mkdtempSync(join(tmpdir(), "svc-cluster-ops-"));
    owner = await setupOwner(cluster.node(0), "ops");
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    ws?.[Symbol.dispose]();
    g?.[Symbol.dispose]();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  test("both nodes present the same SSH host keys, and no node keeps them in its data dir", async () => {
    const [a, b] = [cluster.node(0), cluster.node(1)];
    expect(a.hostKeys.map((k) => k.type)).toEqual(["ED25519", "RSA"]);
    expect(b.hostKeys).toEqual(a.hostKeys);
    const printed = Object.fromEntries(a.hostKeys.map((k) => [k.type, k.fingerprint]));
    expect(await keyscan(ws, a)).toEqual(printed);
    expect(await keyscan(ws, b)).toEqual(printed);
    for (const n of [a, b]) expect(existsSync(join(n.dataDir, "ssh_host_ed25519_key"))).toBe(false);
  });

  test("a restarted node presents the same keys; `svc ssh-host-keys` prints them", async () => {
    const before = cluster.node(1).hostKeys;
    await cluster.kill(1, "SIGTERM");
    const b = await cluster.restart(1);
    expect(b.hostKeys).toEqual(before);
    const cli = await b.cli(["ssh-host-keys"]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe(before.map((k) => `${k.type} ${k.fingerprint}\n`).join(""));
  });

  test("svc fsck over the cluster's database and bucket is clean while another node takes pushes", async () => {
    await createRepo(cluster.node(0), owner, "busy");
    const url = (i: number) => repoUrl(cluster.node(i), "ops", "busy", owner.token);
    const dir = await clone(g, url(0));
    await commitFiles(g, dir, { "README.md": "0\n" }, "c0");
    await g.ok(["push", "-q", url(0), "HEAD:refs/heads/main"], { cwd: dir });
    const pushes = (async () => {
      for (let i = 1; i <= 4; i++) {
        await commitFiles(g, dir, { "README.md": `${i}\n`, [`f${i}.txt`]: `${i}\n` }, `c${i}`);
        await g.ok(["push", "-q", url(1), "HEAD:refs/heads/main"], { cwd: dir });
      }
    })();
    const fsck = runSvc(["fsck"], { ...cluster.env, SVC_DATA_DIR: join(scratch, "fsck"), SVC_LOG: "error" });
    const [r] = await Promise.all([fsck, pushes]);
    expect(r.stderr).toContain("0 with problems");
    expect(r.stdout).toMatch(/^ops\/busy: .*ok/m);
    expect(r.code).toBe(0);
    // and once the pushes are in
    const after = await runSvc(["fsck", "--repo", "ops/busy"], { ...cluster.env, SVC_DATA_DIR: join(scratch, "fsck"), SVC_LOG: "error" });
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/^ops\/busy: .*ok \(\d+ packs, \d+ objects, 1 refs\)/m);
  });
});
