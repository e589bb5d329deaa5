// git over smart HTTP against a bucket that throttles and drops connections (the fault proxy
// in front of s3rver): real clones and pushes get through the faults; when the bucket keeps
// failing, git reports the storage error and nothing half-done is left (no cut-off pack taken
// for a clone, no ref moved by a failed push, no upload left open).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { Client } from "minio";
import { commitFiles, createRepo, fsck, gitSandbox, initRepo, lsRemote, repoUrl, setupOwner, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";
import { spawnFaultProxy, type FaultProxyHandle } from "../../helpers/fault-proxy.ts";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

// Real git against a real server, with the server's retries backing off for seconds.
setDefaultTimeout(120_000);

describe("git on a faulty bucket", () => {
  let s3: S3rverHandle;
  let proxy: FaultProxyHandle;
  let server: RunningServer;
  let g: GitSandbox;
  let owner: OrgOwner;
  let url: string;
  let work: string;

  async function openUploads(): Promise<string[]> {
    const u = new URL(s3.endpoint);
    const c = new Client({
      endPoint: u.hostname,
      port: Number(u.port),
      useSSL: false,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      region: "us-east-1",
      pathStyle: true,
    });
    return (await c.listIncompleteUploadsQuery(s3.bucket, "", "", "", "")).uploads.map((x) => x.key);
  }

  async function expectFsckClean(dir: string) {
    const r = await fsck(g, dir);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  }

  beforeAll(async () => {
    s3 = await startS3rver();
    proxy = await spawnFaultProxy(s3.endpoint);
    server = await startServer({
      env: { SVC_STORAGE: "s3", SVC_S3_ENDPOINT: proxy.endpoint, SVC_S3_BUCKET: s3.bucket, SVC_S3_ACCESS_KEY: s3.accessKey, SVC_S3_SECRET_KEY: s3.secretKey },
    });
    g = gitSandbox();
    owner = await setupOwner(server, "acme");
    await createRepo(server, owner, "big");
    url = repoUrl(server, "acme", "big", owner.token);
    // Incompressible content, so the stored pack is several MiB: streamed in more than one read.
    work = await initRepo(g);
    await commitFiles(g, work, { "data.bin": randomBytes(3 * 1024 * 1024), README: "hello\n" }, "first");
    await commitFiles(g, work, { "more.bin": randomBytes(1024 * 1024) }, "second");
    await g.ok(["push", "-q", url, "main"], { cwd: work });
  }, 120_000);

  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
    await proxy?.stop();
    await s3?.stop();
    g?.[Symbol.dispose]();
  }, 30_000);

  for (const version of [2, 0] as const) {
    test(`protocol v${version}: a clone whose pack reads keep failing mid-stream ends with the storage error, not a cut-off pack`, async () => {
      // The first ranged read of the pack gets through, every later one is throttled for good.
      await proxy.configure({ slowDown: 1, reset: 0, match: { method: "GET", pathIncludes: ".pack", fromByte: 1 } });
      await proxy.resetStats();
      const dst = g.path(`failed-v${version}`);
      const r = await g.run(["-c", `protocol.version=${version}`, "clone", "--bare", url, dst]);
      const stats = await proxy.stats();
      await proxy.configure({ slowDown: 0, match: null });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("object storage is unavailable");
      expect(existsSync(dst)).toBe(false);
      // Pack bytes did go out before the failure: the error came mid-stream.
      expect(stats.bytesDown).toBeGreaterThanOrEqual(1024 * 1024);
      expect(stats.slowDowns).toBeGreaterThan(1);

      // The repository itself is fine: once the bucket behaves, the same clone works.
      const ok = g.path(`ok-v${version}`);
      await g.ok(["-c", `protocol.version=${version}`, "clone", "--bare", url, ok]);
      await expectFsckClean(ok);
    });
  }

  test("a clone whose pack index cannot be read is refused with 503 before any output", async () => {
    await createRepo(server, owner, "cold");
    const coldUrl = repoUrl(server, "acme", "cold", owner.token);
    await g.ok(["push", "-q", coldUrl, "main"], { cwd: work });
    // A restart empties the idx cache, so the clone must read the idx from the bucket.
    await server.stop();
    server = await startServer({ env: server.env, dataDir: server.dataDir });
    const freshUrl = repoUrl(server, "acme", "cold", owner.token);
    await proxy.configure({ slowDown: 1, match: { method: "GET", pathIncludes: ".idx" } });
    const r = await g.run(["clone", "--bare", freshUrl, g.path("cold-failed")]);
    await proxy.configure({ slowDown: 0, match: null });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("503");
    url = repoUrl(server, "acme", "big", owner.token);
  });

  test("clones, fetches and pushes get through SlowDown answers and dropped connections", async () => {
    // Every request is refused the first time (SlowDown, then a reset for the push), and a share
    // of the retries too.
    await proxy.configure({ seed: 11, slowDown: 0.2, reset: 0.05, match: null, firstTry: "slowDown" });
    await proxy.resetStats();
    const c = g.path("through-faults");
    await g.ok(["clone", "--bare", url, c]);
    await expectFsckClean(c);
    const tip = await commitFiles(g, work, { "third.bin": randomBytes(200_000) }, "third");
    await proxy.configure({ firstTry: "reset" });
    await g.ok(["push", "-q", url, "main"], { cwd: work });
    await proxy.configure({ firstTry: "slowDown" });
    await g.ok(["fetch", "-q", url, "+refs/heads/*:refs/heads/*"], { cwd: c });
    expect(await g.ok(["rev-parse", "refs/heads/main"], { cwd: c })).toBe(tip);
    await expectFsckClean(c);
    const stats = await proxy.stats();
    await proxy.configure({ slowDown: 0, reset: 0, firstTry: null });
    expect(stats.slowDowns).toBeGreaterThan(0);
    expect(stats.resets).toBeGreaterThan(0);
  });

  test("svc gc through a throttling bucket leaves one pack holding everything", async () => {
    await proxy.configure({ seed: 4, slowDown: 0.2, reset: 0.05, firstTry: "slowDown" });
    const r = await server.cli(["gc", "--repo", "acme/big"]);
    await proxy.configure({ slowDown: 0, reset: 0, firstTry: null });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ repo: "acme/big", packs_replaced: expect.any(Number) });
    expect(JSON.parse(r.stdout.trim()).packs_replaced).toBeGreaterThan(1);
    const c = g.path("after-gc");
    await g.ok(["clone", "--bare", url, c]);
    await expectFsckClean(c);
    expect(await g.ok(["rev-parse", "refs/heads/main"], { cwd: c })).toBe(await g.ok(["rev-parse", "HEAD"], { cwd: work }));
  });

  test("a push whose upload keeps failing is refused, the ref stays, and no upload is left open", async () => {
    const before = await lsRemote(g, url);
    await commitFiles(g, work, { "big.bin": randomBytes(9 * 1024 * 1024) }, "too big for one PUT");
    // Multipart: the second part is reset every time.
    await proxy.configure({ slowDown: 0, reset: 1, match: { method: "PUT", pathIncludes: "partNumber=2" } });
    const r = await g.run(["push", url, "main"], { cwd: work });
    await proxy.configure({ reset: 0, match: null });
    expect(r.code).not.toBe(0);
    expect(await lsRemote(g, url)).toEqual(before);
    expect(await openUploads()).toEqual([]);

    // Once the bucket behaves the same push goes through.
    await g.ok(["push", "-q", url, "main"], { cwd: work });
    expect((await lsRemote(g, url))["refs/heads/main"]).toBe(await g.ok(["rev-parse", "HEAD"], { cwd: work }));
  });
});
