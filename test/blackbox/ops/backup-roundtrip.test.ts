// Backup and restore keep everything the running service can show (issue 24 items 2-4): a server
// with pushes, a change, a CI job with a log of several chunks, webhook deliveries and edited
// profiles is backed up while it runs, restored into a new data dir, and every API answer a user
// could read (refs, runs, job logs, webhooks and their deliveries, changes, profiles) is the same
// before and after, and the SSH host keys come along. The backup is private (directory 0700,
// files 0600), it says what it holds per kind of stored file, and `svc fsck` knows every kind: no CI log chunk is an orphan, and a
// damaged or missing log chunk is a problem it names.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { caller, person, type Person } from "../../helpers/api.ts";
import { startReceiver, type Receiver } from "../../helpers/receiver.ts";
import { client, runSvc, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";
import { commitFiles, registrationToken, until } from "../ci/helpers.ts";

let server: RunningServer;
let rx: Receiver;
let owner: Person;
let api: ReturnType<typeof caller>;
let scratch: ReturnType<typeof tempDir>;
let backupDir: string;
let runId: string;
let jobId: string;
/** A 1×1 PNG. */
const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const LOG = ["step one: héllo\n", "step two: ✓ done\n", "a third chunk with a tab\tand more\n"];

/** Every file and directory under `dir` with its permission bits. */
function modesUnder(dir: string, rel = ""): { path: string; dir: boolean; mode: number }[] {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const path = join(rel, e.name);
    const mode = statSync(join(dir, path)).mode & 0o777;
    return e.isDirectory() ? [{ path, dir: true, mode }, ...modesUnder(dir, path)] : [{ path, dir: false, mode }];
  });
}

/** Everything a user could read, as JSON with the server's own addresses (HTTP, SSH) taken out. */
async function answers(on: RunningServer): Promise<Record<string, unknown>> {
  const c = caller(on, owner);
  const base = "/v1/orgs/acme/repos/app";
  const hooks = (await c.get(`${base}/webhooks`)).body;
  const out: Record<string, unknown> = {
    repo: (await c.get(base)).body,
    refs: (await c.get(`${base}/refs`)).body,
    branches: (await c.get(`${base}/branches`)).body,
    commits: (await c.get(`${base}/commits?ref=main`)).body,
    changes: (await c.get(`${base}/changes`)).body,
    change: (await c.get(`${base}/changes/1`)).body,
    patchsets: (await c.get(`${base}/changes/1/patchsets`)).body,
    runs: (await c.get(`${base}/runs`)).body,
    run: (await c.get(`${base}/runs/${runId}`)).body,
    log: await (await fetch(`${on.url}${base}/runs/${runId}/jobs/${jobId}/logs`, { headers: { cookie: owner.cookie } })).text(),
    webhooks: hooks,
    deliveries: await Promise.all(hooks.webhooks.map(async (h: { id: string }) => (await c.get(`${base}/webhooks/${h.id}/deliveries`)).body)),
    user: (await c.get(`/v1/users/${owner.handle}`)).body,
    org: (await c.get("/v1/orgs/acme/profile")).body,
    tokens: (await c.get("/v1/orgs/acme/tokens")).body,
    runners: (await c.get("/v1/orgs/acme/runner-groups")).body,
    // The uploaded avatar (an object of its own kind, issue 33): the same bytes after the restore.
    avatar: Buffer.from(await (await fetch(`${on.url}/avatars/${owner.handle}`)).arrayBuffer()).toString("base64"),
  };
  return JSON.parse(
    JSON.stringify(out)
      .replaceAll(on.url, "<server>")
      .replaceAll(on.ssh ?? "<no ssh>", "<ssh>"),
  );
}

beforeAll(async () => {
  scratch = tempDir("svc-roundtrip-");
  rx = startReceiver();
  server = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_SSH_ADDR: "127.0.0.1:0" } });
  owner = await person(server, "acme", "owner@acme.example", "owner");
  api = caller(server, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "app", description: "the app" })).status).toBe(201);
  expect((await api.post("/v1/orgs/acme/repos/app/webhooks", { url: `${rx.url}/hook` })).status).toBe(201);
  expect(
    (await api.patch(`/v1/users/${owner.handle}`, { bio: "writes the app", location: "Lisbon", links: [{ label: "site", url: "https://example.com" }] }))
      .status,
  ).toBe(200);
  expect((await api.patch("/v1/orgs/acme/profile", { display_name: "Acme Inc.", description: "makers of the app" })).status).toBe(200);
  const png = await fetch(`${server.url}/v1/user/avatar`, {
    method: "PUT",
    headers: { cookie: owner.cookie, origin: server.url, "content-type": "image/png" },
    body: Buffer.from(PNG_1PX, "base64"),
  });
  expect(png.status).toBe(200);

  // A machine that will claim the job the push queues.
  const token = await registrationToken(api);
  const reg = await client(server, { token }).post("/v1/runners/register", { name: "m1", os: "linux", arch: "x64" });
  expect(reg.status).toBe(201);
  const claim = client(server, { token: reg.body.credential }).post("/v1/runners/claim");
  await commitFiles(api, "app", {
    "README.md": "# app\n",
    ".svc/workflows/ci.yml": "on: push\njobs:\n  test:\n    runs-on: self-hosted\n    steps:\n      - run: echo hi\n",
  });
  const claimed = await claim;
  expect(claimed.status).toBe(200);
  jobId = claimed.body.job_id;
  const job = client(server, { token: claimed.body.token });
  let offset = 0;
  for (const text of LOG) offset = (await job.post(`/v1/runner/jobs/${jobId}/logs`, { offset, text })).body.offset;
  expect((await job.post(`/v1/runner/jobs/${jobId}/steps/0`, { state: "success", exit_code: 0 })).status).toBe(204);
  expect((await job.post(`/v1/runner/jobs/${jobId}/complete`, { verdict: "success" })).status).toBe(204);

  // A change from a branch.
  await commitFiles(api, "app", { "topic.txt": "topic\n" }, "topic");
  expect((await api.post("/v1/orgs/acme/repos/app/changes", { title: "topic", branch: "topic" })).status).toBe(201);

  runId = (await api.get("/v1/orgs/acme/repos/app/runs")).body.runs.find((r: any) => r.jobs.some((j: any) => j.id === jobId)).id;
  await until("the run to finish", async () => (await api.get(`/v1/orgs/acme/repos/app/runs/${runId}`)).body.state === "success");
  // Every event so far delivered (the two pushes, and whatever else was queued).
  await until("webhook deliveries to settle", async () => {
    const hook = (await api.get("/v1/orgs/acme/repos/app/webhooks")).body.webhooks[0];
    const d = (await api.get(`/v1/orgs/acme/repos/app/webhooks/${hook.id}/deliveries`)).body.deliveries;
    return d.length >= 2 && d.length === rx.of("/hook").length && d.every((x: any) => x.status_code === 200);
  });
  backupDir = join(scratch.path, "nightly", "one");
}, 120_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  rx?.stop();
  scratch?.[Symbol.dispose]();
});

describe("svc fsck knows CI logs", () => {
  test("no CI log chunk is reported as an orphan; the repository line counts the job log", async () => {
    const r = await server.cli(["fsck"]);
    expect({ code: r.code, orphans: r.stdout.split("\n").filter((l) => l.startsWith("orphan")) }).toEqual({ code: 0, orphans: [] });
    expect(r.stdout).toContain(`acme/app: ok (`);
    expect(r.stdout).toContain(`1 job log (${LOG.reduce((n, t) => n + Buffer.byteLength(t), 0)} B)`);
  }, 60_000);
});

describe("a backup", () => {
  let before: Record<string, unknown>;
  let manifest: any;
  beforeAll(async () => {
    before = await answers(server);
    const b = await server.cli(["backup", "--to", backupDir]);
    expect({ code: b.code, stderr: b.stderr }).toEqual({ code: 0, stderr: "" });
    manifest = JSON.parse(readFileSync(join(backupDir, "manifest.json"), "utf8"));
  }, 60_000);

  test("holds the CI log chunks beside the packs, and counts each kind", () => {
    const logKeys = manifest.objects.map((o: { key: string }) => o.key).filter((k: string) => k.includes("/ci-logs/"));
    expect(logKeys).toHaveLength(LOG.length);
    expect(manifest.kinds["ci-log"]).toEqual({ files: LOG.length, bytes: LOG.reduce((n, t) => n + Buffer.byteLength(t), 0) });
    expect(manifest.kinds.pack.files).toBeGreaterThanOrEqual(2);
    expect(manifest.version).toBe(2);
    expect(manifest.kinds.avatar.files).toBe(1);
  });

  test("is private: the target directory and every directory under it 0700, every file 0600", () => {
    const modes = [{ path: ".", dir: true, mode: statSync(backupDir).mode & 0o777 }, ...modesUnder(backupDir)];
    const wrong = modes.filter((m) => m.mode !== (m.dir ? 0o700 : 0o600)).map((m) => `${m.path} ${m.mode.toString(8)}`);
    expect(wrong).toEqual([]);
    expect(modes.some((m) => m.path === "svc.db")).toBe(true);
  });

  describe("restored into a new data dir", () => {
    let restored: RunningServer;
    let dataDir: string;
    beforeAll(async () => {
      dataDir = join(scratch.path, "restored");
      const r = await runSvc(["restore", "--from", backupDir], { SVC_DATA_DIR: dataDir, SVC_LOG: "warn" });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      restored = await startServer({ dataDir, env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1", SVC_SSH_ADDR: "127.0.0.1:0" } });
    }, 60_000);
    afterAll(async () => {
      await restored?.[Symbol.asyncDispose]();
    });

    test("every answer a user could read is the same as before the backup, the job log included", async () => {
      const after = await answers(restored);
      expect(after.log).toBe(LOG.join(""));
      expect(after).toEqual(before);
    }, 60_000);

    test("the SSH host keys came along: clients see the same host", () => {
      expect(server.hostKeys.length).toBe(2);
      expect(restored.hostKeys).toEqual(server.hostKeys);
      expect(manifest.data_files.map((f: { key: string }) => f.key).sort()).toEqual([
        "data/ssh_host_ed25519_key",
        "data/ssh_host_ed25519_key.pub",
        "data/ssh_host_rsa_key",
        "data/ssh_host_rsa_key.pub",
      ]);
    });

    test("svc fsck on it is clean, with no orphans", async () => {
      const r = await restored.cli(["fsck"]);
      expect({ code: r.code, orphans: r.stdout.split("\n").filter((l) => l.startsWith("orphan")) }).toEqual({ code: 0, orphans: [] });
    }, 60_000);

    test("fsck names a damaged, a missing and a stray log chunk", async () => {
      const logDir = (await readdirSync(join(dataDir, "objects", "repos")))
        .map((id) => join(dataDir, "objects", "repos", id, "ci-logs", jobId))
        .find((d) => {
          try {
            return readdirSync(d).length > 0;
          } catch {
            return false;
          }
        })!;
      const chunks = readdirSync(logDir).sort();
      // Same size, not UTF-8 any more.
      const first = join(logDir, chunks[0]!);
      const bytes = readFileSync(first);
      bytes[bytes.length - 2] = 0xff;
      writeFileSync(first, bytes);
      rmSync(join(logDir, chunks[1]!));
      appendFileSync(join(logDir, "000000009999-strayxyz"), "stray\n");
      const r = await restored.cli(["fsck"]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`log of job test (${jobId}, run ${runId}): chunk at byte 0 is not UTF-8 text (contents changed)`);
      expect(r.stdout).toContain(`log of job test (${jobId}, run ${runId}): chunk at byte ${Buffer.byteLength(LOG[0]!)} missing`);
      expect(r.stdout).toMatch(/^orphan repos\/[a-z0-9]+\/ci-logs\/[a-z0-9]+\/000000009999-strayxyz \(6 B\): ci-log: no log chunk row/m);
    }, 60_000);
  });
});

describe("an S3 backup target must be private", () => {
  test("s3rver answers unsigned reads, so the backup is refused before anything is written, unless --allow-public-target", async () => {
    const { startS3rver } = await import("../../helpers/s3rver.ts");
    await using s3 = await startS3rver();
    const creds = { SVC_S3_ENDPOINT: s3.endpoint, SVC_S3_ACCESS_KEY: s3.accessKey, SVC_S3_SECRET_KEY: s3.secretKey };
    const refused = await server.cli(["backup", "--to", "s3://svc-backups/open"], creds);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("s3://svc-backups/open can be read without credentials");
    const listed = await fetch(`${s3.endpoint}/svc-backups?list-type=2&prefix=open/`);
    expect(await listed.text()).not.toContain("<Key>");
    const allowed = await server.cli(["backup", "--to", "s3://svc-backups/open", "--allow-public-target"], creds);
    expect({ code: allowed.code, stderr: allowed.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);
});
