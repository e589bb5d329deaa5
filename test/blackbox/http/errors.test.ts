// Error rendering and request limits (SPEC §1.8, §7; DECISIONS §1; STYLE "one error type").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, startServer, type RunningServer } from "../../helpers/server.ts";
import { expectError } from "../../helpers/api.ts";

const MiB = 1024 * 1024;

let server: RunningServer;
let cookie: string;

beforeAll(async () => {
  server = await startServer();
  const u = await createUser(server, { org: "errco", email: "erin@example.com" });
  cookie = await login(server, u.email, u.password);
}, 30_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** Status, content type and parsed body of a raw request. */
async function raw(path: string, init: RequestInit = {}) {
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, type: res.headers.get("content-type") ?? "", text, body };
}

/** Exactly `{ error: <non-empty string> }`, served as JSON. */
function expectErrorBody(r: { status: number; type: string; body: any }, status: number) {
  expectError(r, status);
  expect(r.type).toStartWith("application/json");
}

/** A stream of `total` bytes of JSON whitespace after an opening brace, in 1 MiB chunks. */
function bigJsonStream(total: number): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(MiB).fill(0x20);
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent === 0) c.enqueue(new TextEncoder().encode("{"));
      if (sent >= total) {
        c.enqueue(new TextEncoder().encode('"name":"huge"}'));
        c.close();
        return;
      }
      c.enqueue(chunk);
      sent += chunk.byteLength;
    },
  });
}

describe("unknown routes", () => {
  // A known path with another method is 405 with Allow (routing.test.ts).
  test("404 with a JSON error body", async () => {
    for (const [method, path] of [
      ["GET", "/v1/nope"],
      ["GET", "/v1/orgs/errco/repos/x/nonsense/deeper"],
      ["POST", "/v1/does-not-exist"],
      ["GET", "/definitely/not/here"],
    ] as const) {
      const r = await raw(path, { method });
      expectErrorBody(r, 404);
    }
  });
});

describe("body limits (DECISIONS §1: 25 MiB for the JSON API)", () => {
  test("a declared body over 25 MiB answers 413", async () => {
    const body = new Uint8Array(25 * MiB + 1).fill(0x20);
    const r = await raw("/v1/orgs", { method: "POST", headers: { "content-type": "application/json", cookie }, body });
    expectErrorBody(r, 413);
  });

  test("a streamed (chunked) body over 25 MiB answers 413", async () => {
    const r = await raw("/v1/orgs", {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: bigJsonStream(26 * MiB),
      duplex: "half",
    } as RequestInit);
    expectErrorBody(r, 413);
  });

  test("a large body under the limit is read normally", async () => {
    const r = await raw("/v1/orgs", {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: bigJsonStream(20 * MiB),
      duplex: "half",
    } as RequestInit);
    expect(r.status).toBe(201);
    expect(r.body.name).toBe("huge");
  });
});

describe("error bodies are exactly { error }", () => {
  test("across statuses and causes", async () => {
    const c = client(server, { cookie });
    const anon = client(server);
    const cases: [string, Promise<{ status: number; body: any; headers: Headers }>, number][] = [
      ["malformed JSON", c.post("/v1/orgs", "{oops", { "content-type": "application/json" }), 400],
      ["schema violation", c.post("/v1/orgs/errco/repos", { name: 12 }), 400],
      ["service rule violation", c.post("/v1/orgs", { name: "-bad-" }), 400],
      ["failed login", anon.post("/v1/auth/login", { email: "x@example.com", password: "nope" }), 401],
      ["anonymous on a private route", anon.get("/v1/orgs/errco/members"), 401],
      ["bad bearer", client(server, { token: "svc_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }).get("/v1/orgs/errco/repos"), 401],
      ["CSRF refusal", c.post("/v1/orgs", "name=x", { "content-type": "application/x-www-form-urlencoded" }), 403],
      ["unknown org", c.get("/v1/orgs/nowhere/members"), 404],
      ["unknown repo", c.get("/v1/orgs/errco/repos/nothing"), 404],
      ["name taken", c.post("/v1/orgs", { name: "errco" }), 409],
      ["enumeration", c.post("/v1/orgs/errco/tokens", { scopes: ["repo:everything"], label: "x" }), 422],
    ];
    for (const [name, p, status] of cases) {
      const r = await p;
      expect({ name, status: r.status, keys: Object.keys(r.body ?? {}) }).toEqual({ name, status, keys: ["error"] });
      expect(typeof r.body.error).toBe("string");
      expect(r.headers.get("content-type") ?? "").toStartWith("application/json");
    }
  });

  test("a malformed session cookie is an unusable credential, not a crash", async () => {
    for (const bad of ["svc_session=%zz", "svc_session=%E0%A4%A", "svc_session=%"]) {
      const r = await raw("/v1/auth/me", { headers: { cookie: bad } });
      expectErrorBody(r, 401);
    }
  });

  test("no response leaks internals (stack traces, file paths, SQL)", async () => {
    const probes: [string, RequestInit][] = [
      ["/v1/auth/me", { headers: { cookie: "svc_session=%zz" } }],
      ["/v1/orgs/%zz/repos", {}],
      ["/v1/orgs/errco/repos?limit=%zz", {}],
      ["/v1/auth/me", { headers: { authorization: "Basic %%%" } }],
      ["/v1/auth/me", { headers: { authorization: "Bearer " + "x".repeat(10_000) } }],
      ["/v1/orgs", { method: "POST", headers: { "content-type": "application/json", cookie }, body: '{"name":"\\ud800"}' }],
      ["/v1/orgs", { method: "POST", headers: { "content-type": "application/json", cookie }, body: '{"name":' + "[".repeat(5000) + "]".repeat(5000) + "}" }],
      ["/v1/orgs/errco/repos", { method: "POST", headers: { "content-type": "application/json", cookie }, body: '{"name":"x","__proto__":{"admin":true}}' }],
    ];
    for (const [path, init] of probes) {
      const r = await raw(path, init);
      expect(typeof r.body).toBe("object");
      expect(typeof r.body?.error === "string" || r.status < 400).toBe(true);
      expect(r.text).not.toMatch(/\bat \S+ \(|\/work\/|node_modules|\.ts:\d+|SQLITE|sqlite|drizzle|URIError|TypeError|SyntaxError/);
      if (r.status >= 500) expect(r.body.error).toBe("internal error");
    }
  });
});
