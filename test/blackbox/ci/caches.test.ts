// Dependency caches end to end with the real agent (issue 30, DECISIONS §5 "Actions"): the
// built-in actions/cache saves in its post phase and a later run restores it (contents checked by
// a step); a branch restores the default branch's cache but never a third branch's; a key saved
// once is immutable (a second save is a log line, not a failure); actions/cache/restore and
// actions/cache/save with GitHub's outputs; and on S3 (s3rver) the archive's bytes go between the
// agent and the bucket only: the server's object store counters stay flat while a cache moves.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";
import { type CiServer, commitFiles, finishedRun, logOf, startCiServer } from "./helpers.ts";

/** A workflow whose job restores `deps` (key per branch, the `deps-` prefix as restore key), shows it, then writes it anew. */
const CACHE_WORKFLOW = `on: push
jobs:
  build:
    runs-on: [self-hosted, caches]
    steps:
      - id: c
        uses: actions/cache@v4
        with:
          path: |
            deps
            !deps/skip.txt
          key: deps-\${{ github.ref_name }}
          restore-keys: |
            deps-
      - name: show
        run: |
          echo "hit=[\${{ steps.c.outputs.cache-hit }}]"
          echo "restored=[$(cat deps/a.txt 2>/dev/null)] skipped=[$(cat deps/skip.txt 2>/dev/null)]"
          mkdir -p deps/nested
          echo "from \${{ github.ref_name }} \${{ github.sha }}" > deps/a.txt
          echo "never cached" > deps/skip.txt
          echo nested > deps/nested/n.txt
`;

/** Restore and save as separate actions, with their outputs. */
const SPLIT_WORKFLOW = `on: push
jobs:
  split:
    runs-on: [self-hosted, caches]
    steps:
      - id: r
        uses: actions/cache/restore@v4
        with:
          path: |
            deps
            !deps/skip.txt
          key: deps-\${{ github.ref_name }}-nothing
          restore-keys: deps-\${{ github.ref_name }}
      - name: outputs
        run: echo "outs=[\${{ steps.r.outputs.cache-hit }}|\${{ steps.r.outputs.cache-primary-key }}|\${{ steps.r.outputs.cache-matched-key }}] nested=[$(cat deps/nested/n.txt)]"
      - uses: actions/cache/save@v4
        with:
          path: |
            deps
            !deps/skip.txt
          key: deps-\${{ github.ref_name }}
      - name: after
        run: echo "still running"
`;

async function runOnce(ci: CiServer, branch: string, files: Record<string, string>) {
  const sha = await commitFiles(ci.api, "app", { ...files, "marker.txt": `${branch} ${Math.random()}` }, branch);
  const run = await finishedRun(ci.api, "app", sha);
  const log = await logOf(ci.server, ci.owner, "app", run.id, run.jobs[0].id);
  return { sha, run, log };
}

describe("fs store", () => {
  let ci: CiServer;
  beforeAll(async () => {
    ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
    await ci.machine({ name: "cacher", labels: ["caches"] });
  }, 90_000);
  afterAll(() => ci?.[Symbol.asyncDispose]());

  test("run 1 saves, run 2 restores it exactly; a branch falls back to the default branch, never to a third branch; keys are immutable", async () => {
    const wf = { ".svc/workflows/cache.yml": CACHE_WORKFLOW };
    const first = await runOnce(ci, "main", wf);
    expect(first.run.state).toBe("success");
    expect(first.log).toContain("Cache not found for input keys: deps-main, deps-");
    expect(first.log).toContain("hit=[false]");
    expect(first.log).toContain("restored=[] skipped=[]");
    expect(first.log).toContain("Cache saved with key: deps-main");

    const second = await runOnce(ci, "main", wf);
    expect(second.run.state).toBe("success");
    expect(second.log).toContain("Cache restored from key: deps-main");
    expect(second.log).toContain("hit=[true]");
    // The files of run 1, and not the excluded one.
    expect(second.log).toContain(`restored=[from main ${first.sha}] skipped=[]`);
    expect(second.log).toContain("Cache hit occurred on the primary key deps-main, not saving cache.");

    // A third branch: no cache of its own, so main's by the restore key; it saves its own.
    const third = await runOnce(ci, "third", wf);
    expect(third.log).toContain("hit=[false]");
    expect(third.log).toContain(`restored=[from main ${first.sha}]`);
    expect(third.log).toContain("Cache saved with key: deps-third");
    // Another branch falls back to main's (its newest deps- entry), never to the third branch's newer one.
    const feature = await runOnce(ci, "feature", wf);
    expect(feature.log).toContain("Cache restored from key: deps-main");
    expect(feature.log).toContain(`restored=[from main ${first.sha}]`);
    // The third branch again: its own scope first.
    const thirdAgain = await runOnce(ci, "third", wf);
    expect(thirdAgain.log).toContain("hit=[true]");
    expect(thirdAgain.log).toContain(`restored=[from third ${third.sha}]`);

    // restore + save: the outputs; saving an existing key is a log line and the job goes on.
    const split = await runOnce(ci, "main", { ".svc/workflows/cache.yml": SPLIT_WORKFLOW });
    expect(split.run.state).toBe("success");
    expect(split.log).toContain("outs=[false|deps-main-nothing|deps-main] nested=[nested]");
    expect(split.log).toContain("Unable to reserve cache with key deps-main, another job may be creating this cache.");
    expect(split.log).toContain("still running");
  }, 240_000);

  test("fail-on-cache-miss fails the step; lookup-only restores nothing; a key with a comma fails with GitHub's message", async () => {
    const sha = await commitFiles(
      ci.api,
      "app",
      {
        ".svc/workflows/cache.yml": `on: push
jobs:
  edges:
    runs-on: [self-hosted, caches]
    steps:
      - id: look
        uses: actions/cache/restore@v4
        with:
          path: |
            deps
            !deps/skip.txt
          key: deps-main
          lookup-only: true
      - run: echo "look=[\${{ steps.look.outputs.cache-hit }}] present=[$(ls deps 2>/dev/null | wc -l)]"
      - uses: actions/cache/restore@v4
        with:
          path: deps
          key: deps-main
      - id: comma
        continue-on-error: true
        uses: actions/cache@v4
        with:
          path: |
            deps
            !deps/skip.txt
          key: a,b
      - uses: actions/cache/restore@v4
        with:
          path: |
            deps
            !deps/skip.txt
          key: no-such-key
          fail-on-cache-miss: true
`,
      },
      "edges",
    );
    const run = await finishedRun(ci.api, "app", sha);
    const log = await logOf(ci.server, ci.owner, "app", run.id, run.jobs[0].id);
    expect(run.state).toBe("failure");
    expect(log).toContain("Cache found and can be restored from key: deps-main");
    expect(log).toContain("look=[true] present=[0]");
    // The same key over another path list is another cache (the version digests the paths).
    expect(log).toContain("Cache not found for input keys: deps-main\n");
    expect(log).toContain("Key Validation Error: Key cannot contain commas.");
    expect(log).toContain("Failed to restore cache entry. Exiting as fail-on-cache-miss is set. Input key: no-such-key");
  }, 120_000);
  test("a job that fails saves nothing (the post phase saves on success only)", async () => {
    const job = (fail: boolean) => `on: push
jobs:
  broken:
    runs-on: [self-hosted, caches]
    steps:
      - id: c
        uses: actions/cache@v4
        with:
          path: out
          key: broken-key
      - run: |
          echo "hit=[\${{ steps.c.outputs.cache-hit }}]"
          mkdir -p out && echo built > out/a.txt
          ${fail ? "exit 3" : "true"}
`;
    const failed = await runOnce(ci, "broken", { ".svc/workflows/cache.yml": job(true) });
    expect(failed.run.state).toBe("failure");
    expect(failed.log).not.toContain("Cache saved");
    const next = await runOnce(ci, "broken", { ".svc/workflows/cache.yml": job(false) });
    expect(next.run.state).toBe("success");
    expect(next.log).toContain("Cache not found for input keys: broken-key");
    expect(next.log).toContain("hit=[false]");
    expect(next.log).toContain("Cache saved with key: broken-key");
  }, 120_000);
});

describe("S3 store (s3rver): the bytes go between the agent and the bucket", () => {
  let s3: S3rverHandle;
  let ci: CiServer;
  const METRICS = "metrics-token-0123456789abcdef0123456789";
  beforeAll(async () => {
    s3 = await startS3rver();
    ci = await startCiServer({
      env: {
        SVC_RUNNER_CLAIM_WAIT_MS: "5000",
        SVC_STORAGE: "s3",
        SVC_S3_ENDPOINT: s3.endpoint,
        SVC_S3_BUCKET: s3.bucket,
        SVC_S3_ACCESS_KEY: s3.accessKey,
        SVC_S3_SECRET_KEY: s3.secretKey,
        SVC_METRICS_TOKEN: METRICS,
      },
      repos: ["app"],
    });
    await ci.machine({ name: "cacher", labels: ["caches"] });
  }, 90_000);
  afterAll(async () => {
    await ci?.[Symbol.asyncDispose]();
    await s3?.stop();
  });

  /** The server's object store byte counters (from /metrics). */
  async function storeBytes(): Promise<{ read: number; written: number }> {
    const text = await (await fetch(`${ci.server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } })).text();
    const value = (name: string) => Number(new RegExp(`^svc_object_store_backend_events_total\\{counter="${name}"\\} (\\d+)`, "m").exec(text)?.[1] ?? 0);
    return { read: value("bytesRead"), written: value("bytesWritten") };
  }

  test("the reserve call binds the upload to the archive's sha256 and size (signed x-amz-checksum-sha256, Content-Length); without sha256 a 400", async () => {
    const sum = "ab".repeat(32);
    const wf = {
      ".svc/workflows/cache.yml": `on: push
jobs:
  ask:
    runs-on: [self-hosted, caches]
    steps:
      - shell: bash
        run: |
          ask() { curl -s -o /tmp/answer.$$ -w "%{http_code}" -X POST -H "authorization: Bearer \${{ github.token }}" -H 'content-type: application/json' \\
            "$GITHUB_SERVER_URL/v1/runner/jobs/$SVC_JOB_ID/caches" -d "$1"; echo " $2 => $(cat /tmp/answer.$$)"; }
          ask '{"key":"bound-1","version":"${"cd".repeat(32)}","size":5,"sha256":"${sum}"}' with
          ask '{"key":"bound-2","version":"${"cd".repeat(32)}","size":5}' without
`,
    };
    const { run, log } = await runOnce(ci, "main", wf);
    expect({ state: run.state, log }).toMatchObject({ state: "success" });
    const with_ = /201 with => (\{.*\})/.exec(log);
    expect(with_).not.toBeNull();
    const upload = JSON.parse(with_![1]!).upload;
    const b64 = Buffer.from(sum, "hex").toString("base64");
    expect(upload.headers).toEqual({ "Content-Length": "5", "x-amz-checksum-sha256": b64 });
    // Presigned for those headers: they are among the signed headers of the bucket's URL.
    const url = new URL(upload.url);
    expect(url.origin).toBe(new URL(s3.endpoint).origin);
    expect(url.searchParams.get("X-Amz-SignedHeaders")?.split(";")).toEqual(expect.arrayContaining(["content-length", "x-amz-checksum-sha256"]));
    expect(log).toContain("400 without => ");
    expect(log).toContain("sha256 (the archive's SHA-256, hex) is required");
  }, 120_000);

  test("a 4 MiB cache saved and restored: svc's store moves only the job logs' bytes", async () => {
    const wf = {
      ".svc/workflows/cache.yml": `on: push
jobs:
  big:
    runs-on: [self-hosted, caches]
    steps:
      - id: c
        uses: actions/cache@v4
        with:
          path: blob
          key: blob-v1
      - run: |
          echo "hit=[\${{ steps.c.outputs.cache-hit }}]"
          if [ ! -f blob/data ]; then mkdir -p blob && head -c 4194304 /dev/urandom > blob/data; fi
          echo "sum=[$(sha256sum blob/data | cut -c1-64)]"
`,
    };
    const before = await storeBytes();
    const first = await runOnce(ci, "main", wf);
    expect(first.log).toContain("Cache saved with key: blob-v1");
    const second = await runOnce(ci, "main", wf);
    expect(second.log).toContain("hit=[true]");
    const sum = (log: string) => /sum=\[([0-9a-f]{64})\]/.exec(log)?.[1];
    expect(sum(second.log)).toBe(sum(first.log)!);
    const after = await storeBytes();
    // A 4 MiB archive of random bytes cannot compress: had it passed through svc, the counters would move by megabytes.
    // They move by the job logs (a few KiB) and git's packs of the two pushes.
    expect(after.written - before.written).toBeLessThan(256 * 1024);
    expect(after.read - before.read).toBeLessThan(256 * 1024);
  }, 180_000);
});
