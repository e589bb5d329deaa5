// The routing contract (issue 10 item 7; RFC 9110 §15.5.6): the caller is resolved before routing,
// a path no route matches answers 404, a known path asked with another method answers 405 with
// `Allow`, and every 500 is logged as one JSON line with its request id and the error's stack.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, mintToken, startServer, type RunningServer, serverDb } from "../../helpers/server.ts";
import { expectError } from "../../helpers/api.ts";

let server: RunningServer;
let cookie: string;
let token: string;
const BAD_BEARER = "svc_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

beforeAll(async () => {
  server = await startServer();
  const u = await createUser(server, { org: "routeco", email: "rita@example.com" });
  cookie = await login(server, u.email, u.password);
  token = await mintToken(server, cookie, "routeco", { scopes: ["org:admin"], label: "routing" });
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** A raw request: status, Allow header and parsed body. */
async function raw(method: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { method, headers });
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, allow: res.headers.get("allow"), type: res.headers.get("content-type") ?? "", body, headers: res.headers };
}

describe("the caller is resolved before routing", () => {
  test("a bad bearer on an unknown /v1 path is 401, as on a known one", async () => {
    for (const path of ["/v1/nope", "/v1/orgs/routeco/not-yet-a-route", "/v1/runners/anything"]) {
      const r = await raw("GET", path, { authorization: `Bearer ${BAD_BEARER}` });
      expectError(r, 401);
      expect(r.headers.get("www-authenticate")).toContain("Basic");
    }
    expectError(await raw("GET", "/v1/orgs/routeco/members", { authorization: `Bearer ${BAD_BEARER}` }), 401);
  });

  test("a bad bearer with the wrong method is 401 too, not 405", async () => {
    const r = await raw("DELETE", "/v1/orgs", { authorization: `Bearer ${BAD_BEARER}` });
    expectError(r, 401);
    expect(r.allow).toBeNull();
  });

  test("an unknown path answers 404 JSON, anonymous or signed in", async () => {
    for (const headers of [{}, { cookie }, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const r = await raw("GET", "/v1/orgs/routeco/not-yet-a-route", headers);
      expectError(r, 404);
      expect(r.type).toStartWith("application/json");
      expect(r.allow).toBeNull();
    }
  });
});

describe("405 with Allow for a known path and the wrong method", () => {
  const cases: [string, string, string][] = [
    ["DELETE", "/v1/orgs", "POST"],
    ["GET", "/v1/orgs", "POST"],
    // The router ignores one trailing slash, and so does the answer.
    ["DELETE", "/v1/orgs/", "POST"],
    ["PATCH", "/v1/orgs/routeco/members/someone", "PUT, DELETE"],
    ["POST", "/v1/orgs/routeco/members", "GET, HEAD"],
    ["PUT", "/v1/orgs/routeco/teams", "GET, HEAD, POST"],
    ["POST", "/v1/orgs/routeco/repos/app/grants/users/someone", "DELETE"],
    ["GET", "/v1/orgs/routeco/invites/some-id", "DELETE"],
    // A path whose last part is a wildcard (a ref name with slashes).
    ["POST", "/v1/orgs/routeco/repos/app/refs/heads/main", "PUT, DELETE"],
    ["PUT", "/v1/auth/login", "POST"],
    ["OPTIONS", "/v1/orgs/routeco/teams", "GET, HEAD, POST"],
  ];

  test("every method the path accepts is listed, and only those", async () => {
    for (const [method, path, allow] of cases) {
      const r = await raw(method, path, { authorization: `Bearer ${token}` });
      expect({ method, path, status: r.status, allow: r.allow }).toEqual({ method, path, status: 405, allow });
      expectError(r, 405);
      expect(r.type).toStartWith("application/json");
    }
  });

  test("the same answer for anonymous callers: the path exists whoever asks", async () => {
    const r = await raw("DELETE", "/v1/orgs");
    expectError(r, 405);
    expect(r.allow).toBe("POST");
  });

  test("outside /v1 too", async () => {
    const r = await raw("POST", "/signup/sent");
    expectError(r, 405);
    expect(r.allow).toBe("GET, HEAD");
  });

  test("the methods the path does accept still work", async () => {
    expect((await client(server, { token }).get("/v1/orgs/routeco/members")).status).toBe(200);
    expect((await raw("HEAD", "/v1/orgs/routeco/members", { authorization: `Bearer ${token}` })).status).toBe(200);
  });
});

describe("every 500 is logged with its request id and stack", () => {
  test("a database fault: 500 { error, request_id } and one JSON log line naming the id, with the stack", async () => {
    // A real fault under the running server: a table it needs disappears behind its back.
    const db = serverDb(server);
    try {
      db.exec("PRAGMA foreign_keys = OFF; DROP TABLE team_members; DROP TABLE teams;");
    } finally {
      db.close();
    }
    const r = await raw("GET", "/v1/orgs/routeco/teams", { authorization: `Bearer ${token}` });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: "internal error", request_id: expect.any(String) });
    expect(r.body.request_id).not.toBe("unknown");
    expect(JSON.stringify(r.body)).not.toMatch(/teams|sqlite|SQL|\bat /i);

    // Error lines are written out at once; wait for ours rather than sleeping.
    const deadline = Date.now() + 10_000;
    let line: any = null;
    while (!line && Date.now() < deadline) {
      for (const l of server.stderr().split("\n")) {
        if (!l.includes(r.body.request_id)) continue;
        const parsed = JSON.parse(l);
        if (parsed.level === "error") line = parsed;
      }
      if (!line) await Bun.sleep(20);
    }
    expect(line).not.toBeNull();
    expect(line).toMatchObject({ level: "error", request_id: r.body.request_id, method: "GET", path: "/v1/orgs/routeco/teams" });
    expect(line.error).toMatch(/no such table/i);
    expect(line.error).toMatch(/\n\s+at /);
  });
});
