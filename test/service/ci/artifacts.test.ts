// CI artifacts in-process (issue 30), fs storage, with the service clock moved instead of waiting:
// the agent's calls with a claimed job's token (reserve, stream, confirm, list, download), the
// API's list, zip and delete, the name and size rules, a later attempt's and `overwrite`'s
// replacement, retention (410 at expiry, object and row gone after the sweep, retention-days
// capped by SVC_CI_ARTIFACT_DAYS), stale reservations, and usage storage_bytes.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { sweepArtifacts } from "../../../src/services/ci/artifacts.ts";
import { REPO_PURGE } from "../../../src/services/git/purge.ts";
import { ciHarnesses } from "./harness.ts";

const DAY = 24 * 3600 * 1000;
const T = 60_000;

let t = 0;
const baseHarness = ciHarnesses("artifacts", () => t);

async function harness(env: Record<string, string> = {}) {
  t = Date.now();
  const { ctx, raw, call, owner, push: pushWorkflow, machine } = await baseHarness(env);
  const push = (workflow = "on: push\njobs:\n  j:\n    runs-on: [self-hosted]\n    steps:\n      - run: echo\n") => pushWorkflow(workflow);
  /** A running job: its id, run and token. */
  async function job(): Promise<{ id: string; run: string; token: string; path: string; machine: string }> {
    const m = await machine(`m${++machines}`);
    await push();
    const c = await call("POST", "/v1/runners/claim", { token: m });
    expect(c.status).toBe(200);
    const d = await call("GET", `/v1/runner/jobs/${c.body.job_id}`, { token: c.body.token });
    return { id: c.body.job_id, run: d.body.run_id, token: c.body.token, path: `/v1/runner/jobs/${c.body.job_id}/artifacts`, machine: m };
  }
  let machines = 0;
  /** Reserve, PUT and commit `bytes` as `name`; answers the artifact id. */
  async function upload(j: { token: string; path: string }, name: string, bytes: Uint8Array, extra: Record<string, unknown> = {}) {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const r = await call("POST", j.path, { token: j.token, body: { name, size: bytes.byteLength, sha256, ...extra } });
    expect(r.status).toBe(201);
    const url = new URL(r.body.upload.url);
    expect(url.origin).toBe("http://svc.test");
    expect((await call("PUT", url.pathname, { token: j.token, raw: bytes, headers: r.body.upload.headers })).status).toBe(204);
    const c = await call("POST", `${j.path}/${r.body.artifact_id}/commit`, { token: j.token });
    expect(c.status).toBe(200);
    return r.body.artifact_id as string;
  }
  /** The stored key of artifact `id` (written under repos/<repo>/ci-artifacts/<run>/). */
  async function keyOf(id: string): Promise<string> {
    for await (const o of ctx.store.list("repos/")) if (o.key.endsWith(`/${id}.zip`)) return o.key;
    throw new Error(`no object for ${id}`);
  }
  return { ctx, raw, call, owner, push, job, upload, keyOf };
}

const bytesOf = (s: string) => new TextEncoder().encode(s);

describe("artifacts with the job token (fs)", () => {
  test(
    "reserve, stream, confirm; the run lists it with a download address; the API lists and zips it",
    async () => {
      const h = await harness();
      const j = await h.job();
      const body = bytesOf("PK-not-really-a-zip but bytes all the same");
      const id = await h.upload(j, "dist", body);
      const listed = await h.call("GET", j.path, { token: j.token });
      expect(listed.status).toBe(200);
      expect(listed.body.artifacts).toEqual([
        {
          id,
          name: "dist",
          size: body.byteLength,
          created_at: t,
          expires_at: t + 90 * DAY,
          expired: false,
          download: { url: `http://svc.test/v1/runner/jobs/${j.id}/artifacts/${id}/content`, headers: {} },
        },
      ]);
      const got = await h.call("GET", `${j.path}/${id}/content`, { token: j.token });
      expect({ status: got.status, text: new TextDecoder().decode(got.bytes) }).toEqual({ status: 200, text: new TextDecoder().decode(body) });
      const part = await h.call("GET", `${j.path}/${id}/content`, { token: j.token, headers: { range: "bytes=0-1" } });
      expect({ status: part.status, text: new TextDecoder().decode(part.bytes), range: part.headers.get("content-range") }).toEqual({
        status: 206,
        text: "PK",
        range: `bytes 0-1/${body.byteLength}`,
      });
      const api = await h.owner("GET", `/v1/orgs/acme/repos/app/runs/${j.run}/artifacts`);
      expect(api.body).toEqual({ artifacts: [{ id, name: "dist", size: body.byteLength, created_at: t, expires_at: t + 90 * DAY, expired: false }] });
      const zip = await h.owner("GET", `/v1/orgs/acme/repos/app/artifacts/${id}/zip`);
      expect({
        status: zip.status,
        type: zip.headers.get("content-type"),
        disposition: zip.headers.get("content-disposition"),
        size: zip.bytes.byteLength,
      }).toEqual({
        status: 200,
        type: "application/zip",
        disposition: `attachment; filename="dist.zip"; filename*=UTF-8''dist.zip`,
        size: body.byteLength,
      });
      // Usage counts the zip.
      const usage = (await h.owner("GET", "/v1/orgs/acme/usage")).body;
      expect(usage.repos).toEqual([{ name: "app", bytes: expect.any(Number) }]);
      expect(usage.storage_bytes).toBeGreaterThanOrEqual(body.byteLength);
      const before = usage.storage_bytes;
      expect((await h.owner("DELETE", `/v1/orgs/acme/repos/app/artifacts/${id}`)).status).toBe(204);
      expect((await h.owner("GET", "/v1/orgs/acme/usage")).body.storage_bytes).toBe(before - body.byteLength);
      expect((await h.owner("GET", `/v1/orgs/acme/repos/app/runs/${j.run}/artifacts`)).body).toEqual({ artifacts: [] });
      expect((await h.owner("GET", `/v1/orgs/acme/repos/app/artifacts/${id}/zip`)).status).toBe(404);
    },
    T,
  );

  test(
    "another run's job reads, commits and lists none of this run's artifacts; one token does not act as another job",
    async () => {
      const h = await harness();
      const a = await h.job();
      const id = await h.upload(a, "dist", bytesOf("run one's bytes"));
      const pending = await h.call("POST", a.path, { token: a.token, body: { name: "later", size: 3 } });
      expect(pending.status).toBe(201);
      const b = await h.job();
      expect(b.run).not.toBe(a.run);
      // Through its own job: the other run's ids are unknown.
      expect((await h.call("GET", `${b.path}/${id}/content`, { token: b.token })).status).toBe(404);
      expect((await h.call("PUT", `${b.path}/${pending.body.artifact_id}/content`, { token: b.token, raw: bytesOf("abc") })).status).toBe(404);
      expect((await h.call("POST", `${b.path}/${pending.body.artifact_id}/commit`, { token: b.token })).status).toBe(404);
      expect((await h.call("GET", b.path, { token: b.token })).body).toEqual({ artifacts: [] });
      // Through the other job's paths: its token is not this job's.
      expect((await h.call("GET", `${a.path}/${id}/content`, { token: b.token })).status).toBe(404);
      expect((await h.call("GET", a.path, { token: b.token })).status).toBe(404);
      expect((await h.call("POST", a.path, { token: b.token, body: { name: "x", size: 1 } })).status).toBe(404);
    },
    T,
  );

  test(
    "names GitHub refuses are 400, a size past the bound 413; the same name twice in an attempt 409 unless overwrite",
    async () => {
      const h = await harness();
      const j = await h.job();
      for (const name of ["", "a/b", "a\\b", "a:b", 'a"b', "a<b", "a>b", "a|b", "a*b", "a?b", "a\nb", "a\rb", "x".repeat(257), " lead"]) {
        const r = await h.call("POST", j.path, { token: j.token, body: { name, size: 1 } });
        expect({ name, status: r.status }).toEqual({ name, status: 400 });
      }
      expect((await h.call("POST", j.path, { token: j.token, body: { name: "x".repeat(256), size: 1 } })).status).toBe(201);
      const big = await h.call("POST", j.path, { token: j.token, body: { name: "big", size: 6 * 1024 ** 3 } });
      expect(big.status).toBe(413);
      expect(big.body.error).toContain("at most");
      const first = await h.upload(j, "logs", bytesOf("one"));
      const again = await h.call("POST", j.path, { token: j.token, body: { name: "logs", size: 3 } });
      expect(again.status).toBe(409);
      const second = await h.upload(j, "logs", bytesOf("two!"), { overwrite: true });
      const list = (await h.call("GET", j.path, { token: j.token })).body.artifacts;
      expect(list.map((a: any) => [a.id, a.name, a.size])).toEqual([[second, "logs", 4]]);
      // The replaced zip is gone from the store, not just from the list.
      const kept = await h.keyOf(second);
      expect(await h.ctx.store.stat(kept.replace(second, first))).toBeNull();
      // Another token (no token) cannot touch them.
      expect((await h.call("GET", j.path)).status).toBe(401);
      expect((await h.call("GET", j.path, { token: "svcj_nope" })).status).toBe(401);
    },
    T,
  );

  test(
    "the upload is bounded by the reservation: more bytes 413, fewer or another sha256 400; confirming before the bytes 409",
    async () => {
      const h = await harness();
      const j = await h.job();
      const data = bytesOf("exactly these bytes");
      const sha256 = createHash("sha256").update(data).digest("hex");
      const r = await h.call("POST", j.path, { token: j.token, body: { name: "a", size: data.byteLength, sha256 } });
      const put = new URL(r.body.upload.url).pathname;
      expect((await h.call("POST", `${j.path}/${r.body.artifact_id}/commit`, { token: j.token })).status).toBe(409);
      const stream = (b: Uint8Array) => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(b), c.close()) });
      const over = await h.ctx.store.stat("x");
      expect(over).toBeNull();
      const more = await h.raw("PUT", put, { token: j.token, raw: stream(bytesOf("exactly these bytes and more")) });
      expect(more.status).toBe(413);
      expect((await h.call("PUT", put, { token: j.token, raw: bytesOf("exactly") })).status).toBe(400);
      const other = bytesOf("EXACTLY these bytes");
      const bad = await h.call("PUT", put, { token: j.token, raw: other });
      expect({ status: bad.status, error: bad.body.error }).toEqual({ status: 400, error: expect.stringContaining("sha256") });
      expect((await h.call("PUT", put, { token: j.token, raw: data })).status).toBe(204);
      expect((await h.call("POST", `${j.path}/${r.body.artifact_id}/commit`, { token: j.token })).status).toBe(200);
      // Confirmed: a second PUT is refused, a second commit answers the same.
      expect((await h.call("PUT", put, { token: j.token, raw: data })).status).toBe(409);
      expect((await h.call("POST", `${j.path}/${r.body.artifact_id}/commit`, { token: j.token })).status).toBe(200);
    },
    T,
  );
});

describe("re-runs", () => {
  test(
    "a later attempt's upload replaces the earlier attempt's artifact of that name (no overwrite needed); other names stay",
    async () => {
      const h = await harness();
      const j = await h.job();
      const old = await h.upload(j, "dist", bytesOf("attempt one"));
      const kept = await h.upload(j, "report", bytesOf("kept from attempt one"));
      const oldKey = await h.keyOf(old);
      expect((await h.call("POST", `/v1/runner/jobs/${j.id}/complete`, { token: j.token, body: { verdict: "success" } })).status).toBe(204);
      const rerun = await h.owner("POST", `/v1/orgs/acme/repos/app/runs/${j.run}/rerun`, {});
      expect(rerun.status).toBe(201);
      const c = await h.call("POST", "/v1/runners/claim", { token: j.machine });
      expect(c.status).toBe(200);
      const j2 = { token: c.body.token as string, path: `/v1/runner/jobs/${c.body.job_id}/artifacts` };
      // The new attempt sees the earlier attempt's artifacts (a reused job's uploads stay usable).
      expect((await h.call("GET", j2.path, { token: j2.token })).body.artifacts.map((a: any) => a.name)).toEqual(["dist", "report"]);
      const fresh = await h.upload(j2, "dist", bytesOf("attempt two!"));
      const list = (await h.owner("GET", `/v1/orgs/acme/repos/app/runs/${j.run}/artifacts`)).body.artifacts;
      expect(list.map((a: any) => [a.name, a.id, a.size])).toEqual([
        ["dist", fresh, 12],
        ["report", kept, 21],
      ]);
      expect(await h.ctx.store.stat(oldKey)).toBeNull();
      // The finished job's token is dead: it uploads nothing more.
      expect((await h.call("POST", j.path, { token: j.token, body: { name: "late", size: 1 } })).status).toBe(401);
    },
    T,
  );
});

describe("deleting the repository", () => {
  test(
    "its artifact rows go with its runs and repo.purge removes their zips with the repository's prefix",
    async () => {
      const h = await harness();
      const j = await h.job();
      const key = await h.keyOf(await h.upload(j, "dist", bytesOf("doomed")));
      expect((await h.owner("DELETE", "/v1/orgs/acme/repos/app")).status).toBe(204);
      while ((await h.ctx.work.runDue({ kinds: [REPO_PURGE] })) > 0);
      expect(await h.ctx.store.stat(key)).toBeNull();
      expect(await sweepArtifacts(h.ctx)).toBe(0);
    },
    T,
  );
});

describe("retention with the service clock", () => {
  test(
    "410 once expired (listed as expired); the sweep deletes the zip then the row; retention-days is capped by the setting",
    async () => {
      const h = await harness({ SVC_CI_ARTIFACT_DAYS: "30" });
      const j = await h.job();
      const t0 = t;
      const keep = await h.upload(j, "keep", bytesOf("kept for the setting's 30 days"), { retention_days: 400 });
      const short = await h.upload(j, "short", bytesOf("kept three days"), { retention_days: 3 });
      const api = `/v1/orgs/acme/repos/app/runs/${j.run}/artifacts`;
      expect((await h.owner("GET", api)).body.artifacts.map((a: any) => [a.name, a.expires_at])).toEqual([
        ["keep", t0 + 30 * DAY],
        ["short", t0 + 3 * DAY],
      ]);
      const keys = { [keep]: await h.keyOf(keep), [short]: await h.keyOf(short) };
      const file = (id: string) => h.ctx.store.localPath!(keys[id]!);
      expect(existsSync(file(short))).toBe(true);

      t = t0 + 3 * DAY - 1;
      expect((await h.owner("GET", `/v1/orgs/acme/repos/app/artifacts/${short}/zip`)).status).toBe(200);
      t = t0 + 3 * DAY;
      const gone = await h.owner("GET", `/v1/orgs/acme/repos/app/artifacts/${short}/zip`);
      expect({ status: gone.status, error: gone.body.error }).toEqual({ status: 410, error: expect.stringContaining("expired") });
      expect((await h.owner("GET", api)).body.artifacts.map((a: any) => [a.name, a.expired])).toEqual([
        ["keep", false],
        ["short", true],
      ]);
      // The run page shows it as expired, without a link.
      const page = (await h.owner("GET", `/acme/app/runs/${j.run}`)).text;
      expect(page).toContain(`<tr><td>short</td><td>15 B</td><td><span class="state state-skipped">expired</span>`);
      expect(page).toContain(`<a href="/acme/app/runs/${j.run}/artifacts/${keep}" download="keep.zip">keep</a>`);
      expect(await sweepArtifacts(h.ctx)).toBe(1);
      expect(existsSync(file(short))).toBe(false);
      expect(existsSync(file(keep))).toBe(true);
      expect((await h.owner("GET", api)).body.artifacts.map((a: any) => a.name)).toEqual(["keep"]);
      expect((await h.owner("GET", `/v1/orgs/acme/repos/app/artifacts/${short}/zip`)).status).toBe(404);
      // A second pass finds nothing more.
      expect(await sweepArtifacts(h.ctx)).toBe(0);
      t = t0 + 30 * DAY;
      expect(await sweepArtifacts(h.ctx)).toBe(1);
      expect(existsSync(file(keep))).toBe(false);
      expect((await h.owner("GET", api)).body.artifacts).toEqual([]);
    },
    T,
  );

  test(
    "a reservation never confirmed is swept after a day, its partial object with it; a crash after the object went leaves a row the next pass ends",
    async () => {
      const h = await harness();
      const j = await h.job();
      const t0 = t;
      const data = bytesOf("uploaded, never confirmed");
      const r = await h.call("POST", j.path, { token: j.token, body: { name: "lost", size: data.byteLength } });
      expect((await h.call("PUT", new URL(r.body.upload.url).pathname, { token: j.token, raw: data })).status).toBe(204);
      const key = await h.keyOf(r.body.artifact_id);
      expect(await h.ctx.store.stat(key)).toEqual({ size: data.byteLength });
      t = t0 + DAY - 1;
      expect(await sweepArtifacts(h.ctx)).toBe(0);
      t = t0 + DAY;
      // The object already gone (a crash between the object and the row): the pass still ends the row.
      await h.ctx.store.delete(key);
      expect(await sweepArtifacts(h.ctx)).toBe(1);
      expect(await h.ctx.store.stat(key)).toBeNull();
      expect(await sweepArtifacts(h.ctx)).toBe(0);
    },
    T,
  );
});
