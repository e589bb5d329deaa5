// SIGKILL in the middle of a push, restart on the same data dir: the repository is at its old
// tip, a fresh clone is clean, and pushing works again. The push goes through a local TCP proxy
// that counts the bytes git sends and kills the server once part of the pack has gone through.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from "bun:test";
import { randomBytes } from "node:crypto";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import {
  clone,
  commitFiles,
  createRepo,
  fsck,
  gitSandbox,
  importHistory,
  initRepo,
  lsRemote,
  repoUrl,
  setupOwner,
  type GitSandbox,
} from "../../helpers/git.ts";
import { startServer, tempDir, type RunningServer } from "../../helpers/server.ts";

// Real git against a real server: seconds per test, more on a busy machine.
setDefaultTimeout(120_000);

const data = tempDir("svc-crash-");
let g: GitSandbox;
let first: RunningServer | undefined;
let second: RunningServer | undefined;

beforeAll(() => {
  g = gitSandbox();
});

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  g?.[Symbol.dispose]();
  data[Symbol.dispose]();
});

/** A TCP proxy to `target` that calls `onThreshold` once, after `threshold` client bytes went upstream. */
function byteProxy(target: URL, threshold: number, onThreshold: () => Promise<void>): Promise<{ port: number; sent(): number; close(): void }> {
  let sent = 0;
  let fired = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((down) => {
    const up = createConnection({ host: target.hostname, port: Number(target.port) });
    sockets.add(down).add(up);
    down.on("data", (chunk: Buffer) => {
      if (fired) return;
      sent += chunk.length;
      if (!up.write(chunk)) {
        down.pause();
        up.once("drain", () => down.resume());
      }
      if (sent >= threshold) {
        fired = true;
        down.pause();
        void onThreshold().finally(() => {
          for (const s of sockets) s.destroy();
        });
      }
    });
    up.on("data", (chunk: Buffer) => down.write(chunk));
    const end = () => {
      down.destroy();
      up.destroy();
    };
    up.on("close", end).on("error", end);
    down.on("close", end).on("error", end);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      resolve({ port, sent: () => sent, close: () => server.close() });
    });
  });
}

test("SIGKILL during a 30 MB push leaves the old tip; after restart a clone is clean and pushes work", async () => {
  const victim = (first = await startServer({ dataDir: data.path }));
  const owner = await setupOwner(victim, "acme");
  await createRepo(victim, owner, "crashy");
  const url = repoUrl(victim, "acme", "crashy", owner.token);
  const dir = await initRepo(g);
  const oldTip = await importHistory(g, dir, { ref: "refs/heads/main", count: 20 });
  await g.ok(["push", "-q", url, "main"], { cwd: dir });

  // 30 MB of incompressible data: git streams it as a chunked POST well past the threshold.
  const bigTip = await commitFiles(g, dir, { "r1.bin": randomBytes(10 << 20), "r2.bin": randomBytes(10 << 20), "r3.bin": randomBytes(10 << 20) }, "big");
  let killed: number | null = null;
  const proxy = await byteProxy(new URL(victim.url), 8 << 20, async () => {
    victim.proc.kill("SIGKILL");
    killed = await victim.proc.exited;
  });
  try {
    const proxied = repoUrl({ url: `http://127.0.0.1:${proxy.port}` }, "acme", "crashy", owner.token);
    const push = await g.run(["push", proxied, "main"], { cwd: dir });
    expect(push.code).not.toBe(0);
    expect(proxy.sent()).toBeGreaterThanOrEqual(8 << 20);
    expect(killed).not.toBeNull();
    expect(victim.proc.signalCode).toBe("SIGKILL");
  } finally {
    proxy.close();
  }

  second = await startServer({ dataDir: data.path });
  const url2 = repoUrl(second, "acme", "crashy", owner.token);
  expect(await lsRemote(g, url2)).toEqual({ "refs/heads/main": oldTip });
  const c = await clone(g, url2);
  expect(await g.ok(["rev-parse", "HEAD"], { cwd: c })).toBe(oldTip);
  const check = await fsck(g, c);
  expect({ code: check.code, stderr: check.stderr }).toEqual({ code: 0, stderr: "" });

  // Nothing was left locked or half-published: the same push now goes through.
  const again = await g.run(["push", url2, "main"], { cwd: dir });
  expect(again).toMatchObject({ code: 0 });
  expect(await lsRemote(g, url2)).toEqual({ "refs/heads/main": bigTip });
  const c2 = await clone(g, url2);
  expect(await fsck(g, c2)).toMatchObject({ code: 0 });
  expect(await g.ok(["rev-parse", "HEAD"], { cwd: c2 })).toBe(bigTip);
});
