// Issue 11, finding "100 half-open SSH connections from one client lock every user out of SSH"
// (the cap on connections that have not authenticated was global only). Now one source address
// holds at most SVC_SSH_MAX_UNAUTHENTICATED_PER_SOURCE of them, counted from the TCP accept,
// and everyone else keeps getting in. Clients are told apart by their local address (127.0.0.x).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { connect, type Socket } from "node:net";
import {
  registerKey,
  sshExec,
  sshPerson,
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
let key: SshKey;
let owner: SshPerson;
const held: Socket[] = [];

beforeAll(async () => {
  server = await startSshServer();
  ws = sshWorkspace();
  owner = await sshPerson(server, "acme", "owner@example.com", "owner");
  key = await ws.keygen("user", "ed25519");
  await registerKey(server, { cookie: owner.cookie }, "acme", key);
}, 60_000);
afterAll(async () => {
  for (const s of held) s.destroy();
  await server?.[Symbol.asyncDispose]();
  ws?.[Symbol.dispose]();
});

/**
 * Opens a connection from `source` that sends its version line (so the SSH library sees a client)
 * and then nothing. Resolves when the server has either answered with its own version line (the
 * connection is being held) or closed it (refused).
 */
function halfOpen(source: string): Promise<{ socket: Socket; held: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: server.sshHost, port: server.sshPort, localAddress: source }, () => socket.write("SSH-2.0-halfopen_0.1\r\n"));
    socket.on("error", () => {});
    socket.once("data", () => resolve({ socket, held: true }));
    socket.once("close", () => resolve({ socket, held: false }));
  });
}

/** An authenticated SSH session from `source`: the greeting, exit 0. */
async function greetedFrom(source: string) {
  const r = await sshExec(ws, server, key, undefined, { options: ["-o", `BindAddress=${source}`, "-o", "ConnectTimeout=20"] });
  return { code: r.code, greeted: r.stderr.includes("successfully authenticated") };
}

describe("half-open connections", () => {
  test("100 from one address: 8 are held, the rest refused at once; another address still signs in (finding: everyone locked out)", async () => {
    const results = [];
    for (let i = 0; i < 100; i++) results.push(await halfOpen("127.0.0.1"));
    held.push(...results.map((r) => r.socket));
    expect(results.filter((r) => r.held).length).toBe(8);
    expect(await greetedFrom("127.0.0.2")).toEqual({ code: 0, greeted: true });
    // The flooding address itself gets nothing more while its 8 stay open …
    expect((await halfOpen("127.0.0.1")).held).toBe(false);
    // … and gets in again once they close.
    for (const r of results) r.socket.destroy();
    const deadline = Date.now() + 15_000;
    let again = await greetedFrom("127.0.0.1");
    while (again.code !== 0 && Date.now() < deadline) again = await greetedFrom("127.0.0.1");
    expect(again).toEqual({ code: 0, greeted: true });
  });

  test("connections that never send a byte count too (before the SSH library sees them)", async () => {
    const silent: Socket[] = [];
    for (let i = 0; i < 8; i++) {
      const s = connect({ host: server.sshHost, port: server.sshPort, localAddress: "127.0.0.3" });
      s.on("error", () => {});
      silent.push(s);
    }
    held.push(...silent);
    await Promise.all(silent.map((s) => new Promise((r) => s.once("connect", r))));
    // Wait until the server has seen all eight (its version line arrives on each).
    await Promise.all(silent.map((s) => new Promise((r) => s.once("data", r))));
    expect((await halfOpen("127.0.0.3")).held).toBe(false);
    expect(await greetedFrom("127.0.0.4")).toEqual({ code: 0, greeted: true });
    for (const s of silent) s.destroy();
  });
});
