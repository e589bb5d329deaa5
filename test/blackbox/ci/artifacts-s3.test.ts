// Artifacts on S3 (s3rver) with the real agent (issue 30): the zip goes from the runner straight
// to the bucket on a presigned PUT and back on a presigned GET, so svc's object store counters
// (bytesRead, bytesWritten, from /metrics) stay flat while 4 MiB move; the API's zip answers 302
// to a short-lived presigned URL of the bucket, whose bytes are the artifact.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Person } from "../../helpers/api.ts";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";
import type { RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, finishedRun, jobsBy, logOf, pushWorkflow, startCiServer } from "./helpers.ts";

const TOKEN = "scrape-the-artifacts-0123456789";
const MiB = 1024 * 1024;

let s3: S3rverHandle;
let ci: CiServer;
let server: RunningServer;
let owner: Person;
let api: Api;

beforeAll(async () => {
  s3 = await startS3rver();
  ci = await startCiServer({
    env: {
      SVC_RUNNER_CLAIM_WAIT_MS: "5000",
      SVC_METRICS_TOKEN: TOKEN,
      SVC_STORAGE: "s3",
      SVC_S3_ENDPOINT: s3.endpoint,
      SVC_S3_BUCKET: s3.bucket,
      SVC_S3_ACCESS_KEY: s3.accessKey,
      SVC_S3_SECRET_KEY: s3.secretKey,
    },
    repos: ["app"],
  });
  ({ server, owner, api } = ci);
  await ci.machine({ name: "s3art", labels: ["s3art"] });
}, 90_000);

afterAll(async () => {
  await ci?.[Symbol.asyncDispose]();
  await s3?.stop();
});

/** svc's object store byte counters, from /metrics. */
async function storeBytes(): Promise<{ read: number; written: number }> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  const sample = (counter: string) => {
    const series = `svc_object_store_backend_events_total{counter="${counter}"} `;
    const line = text.split("\n").find((l) => l.startsWith(series));
    return line ? Number(line.slice(series.length)) : 0;
  };
  return { read: sample("bytesRead"), written: sample("bytesWritten") };
}

const WORKFLOW = `on: push
jobs:
  make:
    runs-on: [self-hosted, s3art]
    steps:
      - run: |
          mkdir out
          head -c ${4 * MiB} /dev/urandom > out/blob.bin
          echo "made $(sha256sum out/blob.bin | cut -c1-64)"
      - uses: actions/upload-artifact@v4
        with:
          name: blob
          path: out
          compression-level: 0
      - run: |
          curl -s -X POST -H "authorization: Bearer \${{ github.token }}" -H 'content-type: application/json' "$GITHUB_SERVER_URL/v1/runner/jobs/$SVC_JOB_ID/artifacts" \\
            -d '{"name":"probe","size":3,"sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}' | grep -o '"headers":{[^}]*}'
  use:
    needs: make
    runs-on: [self-hosted, s3art]
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: blob
      - run: echo "got $(sha256sum blob.bin | cut -c1-64)"
`;

describe("artifacts on S3", () => {
  test("the bytes go runner → bucket → runner on presigned URLs: svc's store counters stay flat; the API zip is a 302 to the bucket", async () => {
    const before = await storeBytes();
    const sha = await pushWorkflow(api, "app", WORKFLOW);
    const run = await finishedRun(api, "app", sha, 90_000);
    const jobs = jobsBy(run);
    const made = /made ([0-9a-f]{64})/.exec(await logOf(server, owner, "app", run.id, jobs.make.id))?.[1];
    const got = /got ([0-9a-f]{64})/.exec(await logOf(server, owner, "app", run.id, jobs.use.id))?.[1];
    expect({ state: run.state, same: !!made && made === got }).toEqual({ state: "success", same: true });
    // The presigned PUT signs the reserved sha256, so the bucket refuses another body (sha256("abc") in base64).
    expect(await logOf(server, owner, "app", run.id, jobs.make.id)).toContain(
      '"headers":{"x-amz-checksum-sha256":"ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="}',
    );
    const [artifact] = (await api.get(`/v1/orgs/acme/repos/app/runs/${run.id}/artifacts`)).body.artifacts;
    expect(artifact.size).toBeGreaterThan(4 * MiB);
    const during = await storeBytes();
    expect(during.written).toBeGreaterThan(before.written);
    // Logs, packs of the pushed commit and the like pass through svc; the 4 MiB zip (twice) does not.
    expect({ read: during.read - before.read < MiB, written: during.written - before.written < MiB }).toEqual({ read: true, written: true });

    const res = await fetch(`${server.url}/v1/orgs/acme/repos/app/artifacts/${artifact.id}/zip`, { headers: { cookie: owner.cookie }, redirect: "manual" });
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    expect(location.startsWith(`${s3.endpoint}/`)).toBe(true);
    expect(location).toContain("X-Amz-Signature=");
    const bucket = await fetch(location);
    // The bucket names the file as the fs answer does (S3's response-content-disposition, in the signature).
    expect(bucket.headers.get("content-disposition")).toBe(`attachment; filename="blob.zip"; filename*=UTF-8''blob.zip`);
    const zip = new Uint8Array(await bucket.arrayBuffer());
    expect(zip.byteLength).toBe(artifact.size);
    const after = await storeBytes();
    expect(after.read - during.read).toBeLessThan(64 * 1024);
    // The usage counts it like any stored byte.
    expect((await api.get("/v1/orgs/acme/usage")).body.storage_bytes).toBeGreaterThanOrEqual(artifact.size);
  });
});
