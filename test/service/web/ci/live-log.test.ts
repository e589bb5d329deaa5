// The live log's bounds, in-process with the real context and application and a job left queued
// (no machine claims it, so its stream has nothing to end it): heartbeats while nothing happens,
// the stream's lifetime, the process-wide cap, the client leaving, and access ending mid-stream.
// The limits are the stream's own parameters, made small so each bound shows in milliseconds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../../../src/http/app.ts";
import { resolveCaller } from "../../../../src/http/principal.ts";
import { LIMITS, liveLogs, logStream, type StreamLimits } from "../../../../src/http/web/ci/live-log.ts";
import { openTestContext } from "../../../helpers/context.ts";
import type { Ctx } from "../../../../src/services/context.ts";
import { CI_TRIGGER } from "../../../../src/services/ci/trigger.ts";
import { createUserWithOrg } from "../../../../src/services/people/accounts.ts";
import { eventually } from "../../../helpers/receiver.ts";

const PASSWORD = "a long enough password";
const BASE = "http://svc.test";
const root = mkdtempSync(join(tmpdir(), "svc-live-log-"));
let ctx: Ctx & { close(): void };
let app: ReturnType<typeof buildApp>;
let owner = "";
let where = { org: "acme", repo: "app", run: "", job: "" };

async function signIn(email: string): Promise<string> {
  const r = await app.handle(
    new Request(`${BASE}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    }),
  );
  return r.headers.get("set-cookie")!.split(";")[0]!;
}

async function api(method: string, path: string, cookie: string, body?: unknown) {
  ctx.facts.fresh();
  const r = await app.handle(
    new Request(`${BASE}${path}`, {
      method,
      headers: { cookie, origin: BASE, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return { status: r.status, body: r.status === 204 ? null : await r.json() };
}

/** The open live logs these tests count (the ci web plugin keeps its own). */
const streams = liveLogs();

/** Opens the job's live log as `cookie` with `limits`; answers the response, a reader of its text, and the abort switch. */
async function open(cookie: string, limits: Partial<StreamLimits> = {}) {
  const abort = new AbortController();
  const request = new Request(`${BASE}/acme/app/runs/${where.run}/jobs/${where.job}/events`, { headers: { cookie }, signal: abort.signal });
  ctx.facts.fresh();
  const res = logStream(ctx, streams, request, await resolveCaller(ctx, request), where, 0, { ...LIMITS, ...limits });
  const reader = res.status === 200 ? res.body!.getReader() : null;
  const dec = new TextDecoder();
  const s = {
    res,
    abort,
    text: "",
    ended: false,
    cancel: () => reader!.cancel(),
    /** Reads until `pred` holds or the stream ends. */
    async until(pred: (t: string) => boolean) {
      while (!pred(s.text) && !s.ended) {
        const { value, done } = await reader!.read();
        if (done) s.ended = true;
        else s.text += dec.decode(value, { stream: true });
      }
    },
  };
  return s;
}

beforeAll(async () => {
  ctx = await openTestContext({ SVC_DATA_DIR: join(root, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_BASE_URL: BASE, SVC_LOG: "error" });
  app = buildApp(ctx);
  await createUserWithOrg(ctx, { org: "acme", email: "o@acme.example", name: "Owner", password: PASSWORD, role: "owner" });
  owner = await signIn("o@acme.example");
  expect((await api("POST", "/v1/orgs/acme/repos", owner, { name: "app" })).status).toBe(201);
  const workflow = "on: push\njobs:\n  j:\n    runs-on: [self-hosted, nobody-has-this]\n    steps:\n      - run: echo\n";
  expect(
    (
      await api("POST", "/v1/orgs/acme/repos/app/commits", owner, {
        branch: "main",
        message: "ci",
        operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: workflow }],
      })
    ).status,
  ).toBe(201);
  while ((await ctx.work.runDue({ kinds: [CI_TRIGGER] })) > 0);
  const run = (await api("GET", "/v1/orgs/acme/repos/app/runs", owner)).body.runs[0];
  where = { org: "acme", repo: "app", run: run.id, job: run.jobs[0].id };
});

afterAll(() => {
  ctx?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the live log's bounds", () => {
  test("a quiet job gets its state once, then heartbeats", async () => {
    const s = await open(owner, { pollMs: 10, heartbeatMs: 50 });
    await s.until((t) => (t.match(/: keep-alive\n\n/g) ?? []).length >= 2);
    expect(s.ended).toBe(false);
    expect(s.text.match(/event: state/g)).toHaveLength(1);
    expect(s.text).not.toContain("event: end");
    s.abort.abort();
  });

  test("a stream ends by itself after its lifetime (the browser reconnects)", async () => {
    const s = await open(owner, { pollMs: 10, streamMs: 150 });
    await s.until(() => false);
    expect(s.ended).toBe(true);
    expect(s.text).not.toContain("event: end");
  });

  test("a client that leaves frees its stream; beyond the cap a stream is refused with 503", async () => {
    const before = streams.open;
    const a = await open(owner, { pollMs: 10 });
    await a.until((t) => t.includes("event: state"));
    expect(streams.open).toBe(before + 1);
    const refused = await open(owner, { maxStreams: before + 1 });
    expect({ status: refused.res.status, retry: refused.res.headers.get("retry-after") }).toEqual({ status: 503, retry: "5" });
    a.abort.abort();
    await eventually(async () => streams.open === before, 5_000, "the stream to be freed");
    const b = await open(owner, { pollMs: 10 });
    await b.until((t) => t.includes("event: state"));
    await b.cancel();
    await eventually(async () => streams.open === before, 5_000, "the cancelled stream to be freed");
  });

  test("access is checked on every read: a member removed from the org loses the stream", async () => {
    await createUserWithOrg(ctx, { org: "acme", email: "m@acme.example", name: "Member", password: PASSWORD, role: "member" });
    const member = await signIn("m@acme.example");
    const s = await open(member, { pollMs: 10 });
    await s.until((t) => t.includes("event: state"));
    const me = (await api("GET", "/v1/auth/me", member)).body;
    expect((await api("DELETE", `/v1/orgs/acme/members/${me.id}`, owner)).status).toBe(204);
    await s.until(() => false);
    expect(s.ended).toBe(true);
    expect(s.text).not.toContain("event: end");
  });
});
