// Health and Prometheus metrics seen from outside (DECISIONS §4): /healthz and /readyz for load
// balancers, /metrics off unless SVC_METRICS_TOKEN is set and then behind a bearer token, with
// request counts per route template, git operations with bytes, SQLite and object-store
// latencies, queue gauges and the process; /readyz 503 when the object store stops answering.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, runSvc, startServer, tempDir, type RunningServer } from "../../helpers/server.ts";
import { clone, commitFiles, createRepo, gitSandbox, initRepo, repoUrl, setupOwner, type GitSandbox, type OrgOwner } from "../../helpers/git.ts";
import { startS3rver } from "../../helpers/s3rver.ts";

const TOKEN = "scrape-me-if-you-can-0123456789";

/** The value of one sample line (`name{labels} value`), or null when absent. */
function sample(text: string, series: string): number | null {
  for (const line of text.split("\n")) if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  return null;
}

async function scrape(server: RunningServer): Promise<string> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

describe("health", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer();
  }, 30_000);
  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
  });

  test("GET /healthz answers 200 while the process runs, uncached", async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "ok" });
  });

  test("GET /readyz answers 200 with each check ok", async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", object_store: "ok" } });
  });

  test("health answers need no credential, and a bad one does not matter", async () => {
    const res = await fetch(`${server.url}/healthz`, { headers: { authorization: "Bearer nonsense" } });
    expect(res.status).toBe(200);
  });

  test("GET /v1/docs is a page from the binary: no CDN, no external script, style or font", async () => {
    const res = await fetch(`${server.url}/v1/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("/v1/openapi.json");
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|cdn\.|unpkg|jsdelivr/i);
    // What the page renders from is there too.
    const spec = await (await fetch(`${server.url}/v1/openapi.json`)).json();
    expect(Object.keys(spec.paths)).toContain("/v1/orgs/{org}/repos");
    expect(Object.keys(spec.paths)).toContain("/readyz");
  });

  test("without SVC_METRICS_TOKEN there is no /metrics (404), whatever the credential", async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });
});

describe("readiness follows the object store", () => {
  test("/readyz turns 503 (object_store failing) when the S3 store goes away; /healthz stays 200", async () => {
    await using s3 = await startS3rver();
    await using server = await startServer({
      env: { SVC_STORAGE: "s3", SVC_S3_ENDPOINT: s3.endpoint, SVC_S3_BUCKET: s3.bucket, SVC_S3_ACCESS_KEY: s3.accessKey, SVC_S3_SECRET_KEY: s3.secretKey },
    });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    await s3.stop();
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.status).toBe("unavailable");
    expect(body.checks.database).toBe("ok");
    expect(["failing", "timeout"]).toContain(body.checks.object_store);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 60_000);
});

describe("metrics with SVC_METRICS_TOKEN", () => {
  let server: RunningServer;
  let owner: OrgOwner;
  let g: GitSandbox;
  beforeAll(async () => {
    server = await startServer({ env: { SVC_METRICS_TOKEN: TOKEN } });
    g = gitSandbox();
    owner = await setupOwner(server, "metered");
    await createRepo(server, owner, "gauge");
    const work = await initRepo(g);
    await commitFiles(g, work, { "README.md": "# metered\n", "src/a.txt": "a".repeat(5000) });
    await g.ok(["push", "-q", repoUrl(server, "metered", "gauge", owner.token), "main"], { cwd: work });
    const dir = await clone(g, repoUrl(server, "metered", "gauge", owner.token));
    expect(await g.ok(["log", "--format=%s", "-1"], { cwd: dir })).toBe("change");
    await client(server, { token: owner.token }).get("/v1/orgs/metered/repos/gauge");
    await client(server, { token: owner.token }).get("/v1/orgs/metered/repos/no-such-repo");
  }, 60_000);
  afterAll(async () => {
    g?.[Symbol.dispose]();
    await server?.[Symbol.asyncDispose]();
  });

  test("no credential, a wrong token, or another scheme: 401 with a Bearer challenge", async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${btoa(`x:${TOKEN}`)}`]) {
      const res = await fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(await res.text()).not.toContain("svc_http_requests_total");
    }
  });

  test("the right token: Prometheus text with HELP and TYPE lines", async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await res.text();
    expect(text).toContain("# TYPE svc_http_requests_total counter\n");
    expect(text).toContain("# TYPE svc_http_request_duration_seconds histogram\n");
    for (const line of text.split("\n"))
      if (line && !line.startsWith("#")) expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? (-?[0-9.e+-]+|[+-]Inf|NaN)$/);
  });

  test("requests are counted per route template and status, never per raw path", async () => {
    const text = await scrape(server);
    expect(sample(text, 'svc_http_requests_total{method="GET",route="/v1/orgs/:org/repos/:repo",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_http_requests_total{method="GET",route="/v1/orgs/:org/repos/:repo",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_http_requests_total{method="POST",route="/:org/:repo.git/git-receive-pack",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_http_requests_total{method="POST",route="/:org/:repo.git/git-upload-pack",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain("no-such-repo");
    expect(text).not.toContain("metered/gauge");
    expect(sample(text, 'svc_http_request_duration_seconds_count{method="GET",route="/v1/orgs/:org/repos/:repo",status="200"}')).toBeGreaterThanOrEqual(1);
  });

  test("unknown paths share one label", async () => {
    await fetch(`${server.url}/some/random/path-${Date.now()}`);
    const text = await scrape(server);
    expect(text).toMatch(/svc_http_requests_total\{method="GET",route="unrouted",status="404"\} [1-9]/);
    expect(text).not.toContain("random/path");
  });

  test("git operations by kind, with bytes", async () => {
    const text = await scrape(server);
    expect(sample(text, 'svc_operations_total{kind="git.push"}')).toBe(1);
    expect(sample(text, 'svc_operation_bytes_total{kind="git.push"}')).toBeGreaterThan(100);
    expect(sample(text, 'svc_operations_total{kind="git.clone"}')).toBe(1);
    expect(sample(text, 'svc_operation_bytes_total{kind="git.clone"}')).toBeGreaterThan(100);
  });

  test("SQLite and object-store latencies, queues, mail outbox and the process", async () => {
    const text = await scrape(server);
    expect(sample(text, 'svc_sqlite_statement_duration_seconds_count{connection="read"}')).toBeGreaterThan(0);
    expect(sample(text, 'svc_sqlite_statement_duration_seconds_count{connection="write"}')).toBeGreaterThan(0);
    expect(sample(text, 'svc_sqlite_transaction_duration_seconds_count{outcome="commit"}')).toBeGreaterThan(0);
    expect(sample(text, "svc_sqlite_transaction_wait_seconds_count")).toBeGreaterThan(0);
    expect(sample(text, 'svc_object_store_request_duration_seconds_count{op="putFile",outcome="ok"}')).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/svc_object_store_request_duration_seconds_count\{op="(getRange|get)",outcome="ok"\} [1-9]/);
    expect(sample(text, "svc_mail_outbox_pending")).toBe(0);
    expect(sample(text, "svc_mail_outbox_failed")).toBe(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    expect(text).toContain("# TYPE svc_jobs_pending gauge\n");
  });

  test("runner claims waiting: a long-poll counts while it is held, and stops counting when the machine hangs up", async () => {
    const admin = client(server, { cookie: owner.cookie });
    const reg = await admin.post("/v1/orgs/metered/runners/registration-token", {});
    expect(reg.status).toBe(201);
    const machine = await client(server, { token: reg.body.token }).post("/v1/runners/register", { name: "gauge-01", os: "linux", arch: "x64" });
    expect(machine.status).toBe(201);
    const waiting = async () => sample(await scrape(server), "svc_runner_claims_waiting");
    expect(await waiting()).toBe(0);
    const hangUp = new AbortController();
    const claim = fetch(`${server.url}/v1/runners/claim`, {
      method: "POST",
      headers: { authorization: `Bearer ${machine.body.credential}` },
      signal: hangUp.signal,
    }).catch(() => null);
    // The claim is held for SVC_RUNNER_CLAIM_WAIT_MS (20 s): poll the gauge until it shows it.
    let seen: number | null = 0;
    for (let i = 0; i < 200 && seen === 0; i++) seen = await waiting();
    expect(seen).toBe(1);
    hangUp.abort();
    await claim;
    let after: number | null = 1;
    for (let i = 0; i < 200 && after !== 0; i++) after = await waiting();
    expect(after).toBe(0);
  }, 60_000);

  test("the job queue: depth and age per kind (a GC leaves a sweep job scheduled an hour ahead)", async () => {
    const dir = await clone(g, repoUrl(server, "metered", "gauge", owner.token));
    await commitFiles(g, dir, { "second.txt": "two\n" }, "second");
    await g.ok(["push", "-q", "origin", "HEAD:main"], { cwd: dir });
    const gc = await server.cli(["gc", "--repo", "metered/gauge"]);
    expect(gc.code).toBe(0);
    expect(JSON.parse(gc.stdout).packs_replaced).toBe(2);
    const text = await scrape(server);
    expect(sample(text, 'svc_jobs_pending{kind="repo.sweep"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_jobs_due{kind="repo.sweep"}')).toBe(0);
    expect(sample(text, 'svc_jobs_oldest_due_age_seconds{kind="repo.sweep"}')).toBe(0);
  }, 60_000);
});

describe("SVC_METRICS_TOKEN is checked at boot", () => {
  test("a short token is a configuration error: exit 2, one line naming it", async () => {
    using data = tempDir("svc-metrics-cfg-");
    const r = await runSvc(["serve"], { SVC_DATA_DIR: data.path, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_METRICS_TOKEN: "short" });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("SVC_METRICS_TOKEN");
  }, 20_000);
});
