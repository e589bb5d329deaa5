// Operating several nodes (issue 27, DECISIONS §5 "Several nodes"): every node presents the same
// SSH host key (kept in the database, not in a node's data dir), as a client behind a TCP
// balancer must see it.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startCluster, type Cluster } from "../helpers/cluster.ts";
import { run, sshWorkspace, type SshWorkspace } from "../helpers/ssh.ts";
import type { RunningServer } from "../helpers/server.ts";

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

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 2, env: { SVC_SSH_ADDR: "127.0.0.1:0" } });
    ws = sshWorkspace();
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    ws?.[Symbol.dispose]();
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
});
