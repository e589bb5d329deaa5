// Issue 25 row 7: anonymous and signature-checked bodies are refused from their headers, before
// the body is read (a 24 MiB login body, and sixteen unsigned 24 MiB webhook posts, were read
// whole first). Each request here sends its headers and only a few bytes of the body it
// declares: a server that waited for the body would never answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { answerBeforeBody } from "../../helpers/early-answer.ts";
import { client, startServer, type RunningServer } from "../../helpers/server.ts";

let server: RunningServer;
let bare: RunningServer;
const SECRET = "inbound-secret-for-tests";
const MiB = 1024 * 1024;

beforeAll(async () => {
  server = await startServer({ env: { SVC_WEBHOOK_SECRET: SECRET } });
  bare = await startServer();
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  await bare?.[Symbol.asyncDispose]();
});

const JSON_TYPE = { "content-type": "application/json" };
const start = new TextEncoder().encode('{"email":"a@b.c","password":"');
const signature = (body: string) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

describe("anonymous bodies: a few KiB", () => {
  test("a 24 MiB login, signup or reset body is refused with 413 before it is read", async () => {
    for (const path of ["/v1/auth/login", "/v1/auth/signup", "/v1/auth/reset-password", "/v1/auth/accept-invite"]) {
      const r = await answerBeforeBody(server.url, { path, headers: JSON_TYPE, declared: 24 * MiB, sent: start });
      expect({ path, status: r.status, body: JSON.parse(r.text) }).toEqual({ path, status: 413, body: { error: "request body larger than 16384 bytes" } });
    }
  }, 20_000);

  test("a chunked body is cut off once it passes the limit", async () => {
    const r = await answerBeforeBody(server.url, { path: "/v1/auth/login", headers: JSON_TYPE, chunked: true, sent: new Uint8Array(20_000).fill(0x20) });
    expect(r.status).toBe(413);
  }, 20_000);

  test("a body within the limit still gets its usual answers; long login fields are the uniform 401", async () => {
    const api = client(server);
    expect((await api.post("/v1/auth/login", { email: "nobody@example.com", password: "x".repeat(12) })).status).toBe(401);
    expect((await api.post("/v1/auth/login", { email: `${"a".repeat(300)}@example.com`, password: "x".repeat(12) })).body).toEqual({
      error: "invalid email or password",
    });
    expect((await api.post("/v1/auth/login", { email: "a@example.com", password: "x".repeat(5000) })).body).toEqual({ error: "invalid email or password" });
    expect((await api.post("/v1/auth/signup", { email: "new@example.com", name: "New", password: "p".repeat(1025), handle: "newbie" })).status).toBe(400);
  });

  test("a route that needs a credential refuses an anonymous body from its headers too (401, as before)", async () => {
    const r = await answerBeforeBody(server.url, { path: "/v1/orgs/acme/repos", headers: JSON_TYPE, declared: 24 * MiB, sent: start });
    expect(r.status).toBe(401);
  }, 20_000);
});

describe("signed routes: the signature header is checked for shape first", () => {
  test("sixteen unsigned 24 MiB posts to /webhooks/generic and /webhooks/app: 401 at once, each", async () => {
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        answerBeforeBody(server.url, { path: i % 2 ? "/webhooks/app" : "/webhooks/generic", headers: JSON_TYPE, declared: 24 * MiB, sent: start }),
      ),
    );
    expect(answers.map((a) => [a.status, JSON.parse(a.text).error])).toEqual(
      Array.from({ length: 16 }, () => [401, "missing or malformed X-Hub-Signature-256"]),
    );
    const malformed = await answerBeforeBody(server.url, {
      path: "/webhooks/generic",
      headers: { ...JSON_TYPE, "x-hub-signature-256": "sha256=zz" },
      declared: 24 * MiB,
      sent: start,
    });
    expect(malformed.status).toBe(401);
  }, 20_000);

  test("a well-formed signature with a body over the route's documented size: 413 before reading (generic 64 KiB, app 25 MiB)", async () => {
    const sig = { ...JSON_TYPE, "x-hub-signature-256": `sha256=${"0".repeat(64)}` };
    expect((await answerBeforeBody(server.url, { path: "/webhooks/generic", headers: sig, declared: 65 * 1024, sent: start })).status).toBe(413);
    expect((await answerBeforeBody(server.url, { path: "/webhooks/app", headers: sig, declared: 26 * MiB, sent: start })).status).toBe(413);
  }, 20_000);

  test("without SVC_WEBHOOK_SECRET nothing is read: 401 naming the setting; without billing, /webhooks/billing is 503 at once", async () => {
    const signed = await answerBeforeBody(bare.url, {
      path: "/webhooks/generic",
      headers: { ...JSON_TYPE, "x-hub-signature-256": `sha256=${"0".repeat(64)}` },
      declared: 24 * MiB,
      sent: start,
    });
    expect({ status: signed.status, error: JSON.parse(signed.text).error }).toEqual({
      status: 401,
      error: "inbound webhooks are not configured on this server (SVC_WEBHOOK_SECRET)",
    });
    expect((await answerBeforeBody(server.url, { path: "/webhooks/billing", headers: JSON_TYPE, declared: 24 * MiB, sent: start })).status).toBe(503);
  }, 20_000);

  test("a correctly signed generic delivery is still read, verified and accepted", async () => {
    const body = JSON.stringify({ full_name: "https://git.example.com/team/lib.git" });
    const res = await fetch(`${server.url}/webhooks/generic`, { method: "POST", headers: { ...JSON_TYPE, "x-hub-signature-256": signature(body) }, body });
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 202, body: { syncs: 0 } });
    const wrong = await fetch(`${server.url}/webhooks/generic`, {
      method: "POST",
      headers: { ...JSON_TYPE, "x-hub-signature-256": `sha256=${"0".repeat(64)}` },
      body,
    });
    expect(wrong.status).toBe(401);
  });
});
