// Sign-in, sessions and credential precedence over real HTTP (SPEC §4.3, §5; DECISIONS §1, §2).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createUser, login, mintToken, startServer, type RunningServer } from "../../helpers/server.ts";
import { expectError } from "../../helpers/api.ts";

let server: RunningServer;
let ada: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  server = await startServer();
  ada = await createUser(server, { org: "acme", email: "ada@example.com", name: "Ada Lovelace" });
}, 30_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** Raw POST /v1/auth/login with any body and content type. */
async function rawLogin(body: BodyInit | undefined, contentType: string | null = "application/json") {
  const headers: Record<string, string> = {};
  if (contentType) headers["content-type"] = contentType;
  const res = await fetch(`${server.url}/v1/auth/login`, { method: "POST", headers, body });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : null, setCookie: res.headers.get("set-cookie") };
}

/** Cookie attributes as a lower-cased set, plus name and value. */
function parseSetCookie(header: string) {
  const [pair, ...attrs] = header.split(";").map((s) => s.trim());
  const i = pair!.indexOf("=");
  return { name: pair!.slice(0, i), value: pair!.slice(i + 1), attrs: attrs.map((a) => a.toLowerCase()) };
}

describe("POST /v1/auth/login", () => {
  test("200 with the account body and an HttpOnly SameSite=Lax Path=/ svc_session cookie", async () => {
    const r = await rawLogin(JSON.stringify({ email: ada.email, password: ada.password }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: ada.id,
      email: "ada@example.com",
      name: "Ada Lovelace",
      handle: ada.handle,
      created_at: expect.any(Number),
      orgs: expect.arrayContaining([{ id: expect.any(String), name: "acme", role: "owner" }]),
    });
    for (const o of r.body.orgs) expect(Object.keys(o).sort()).toEqual(["id", "name", "role"]);
    // Timestamps are epoch milliseconds (DECISIONS §1).
    expect(r.body.created_at).toBeGreaterThan(1_500_000_000_000);
    const c = parseSetCookie(r.setCookie!);
    expect(c.name).toBe("svc_session");
    expect(c.value.length).toBeGreaterThan(16);
    expect(c.attrs).toContain("httponly");
    expect(c.attrs).toContain("samesite=lax");
    expect(c.attrs).toContain("path=/");
    // Secure only when the base URL is https; this server is plain http.
    expect(c.attrs).not.toContain("secure");
  });

  test("the address is matched case-insensitively", async () => {
    const r = await rawLogin(JSON.stringify({ email: "ADA@Example.COM", password: ada.password }));
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(ada.id);
  });

  test("every failure is the same 401 `invalid email or password`", async () => {
    const failures: [string, BodyInit | undefined, string | null][] = [
      ["wrong password", JSON.stringify({ email: ada.email, password: "not the password at all" }), "application/json"],
      ["unknown address", JSON.stringify({ email: "nobody@example.com", password: ada.password }), "application/json"],
      ["missing password", JSON.stringify({ email: ada.email }), "application/json"],
      ["missing email", JSON.stringify({ password: ada.password }), "application/json"],
      ["empty object", "{}", "application/json"],
      ["email not a string", JSON.stringify({ email: 42, password: ada.password }), "application/json"],
      ["password not a string", JSON.stringify({ email: ada.email, password: ["x"] }), "application/json"],
      ["both null", JSON.stringify({ email: null, password: null }), "application/json"],
      ["body is an array", JSON.stringify([ada.email, ada.password]), "application/json"],
      ["malformed JSON", `{"email":"${ada.email}","password":`, "application/json"],
      ["plain text", `${ada.email} ${ada.password}`, "text/plain"],
      ["no body", undefined, null],
    ];
    const seen: Record<string, unknown> = {};
    for (const [name, body, type] of failures) {
      const r = await rawLogin(body, type);
      seen[name] = { status: r.status, body: r.body, cookie: r.setCookie };
    }
    const expected = { status: 401, body: { error: "invalid email or password" }, cookie: null };
    expect(seen).toEqual(Object.fromEntries(failures.map(([n]) => [n, expected])));
  });
});

describe("GET /v1/auth/me and POST /v1/auth/logout", () => {
  test("me with the cookie answers the login body; without it 401", async () => {
    const r = await rawLogin(JSON.stringify({ email: ada.email, password: ada.password }));
    const cookie = r.setCookie!.split(";")[0]!;
    const me = await client(server, { cookie }).get("/v1/auth/me");
    expect(me.status).toBe(200);
    expect(me.body).toEqual(r.body);
    expectError(await client(server).get("/v1/auth/me"), 401);
    expectError(await client(server, { cookie: "svc_session=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }).get("/v1/auth/me"), 401);
    expectError(await client(server, { cookie: "svc_session=garbage" }).get("/v1/auth/me"), 401);
  });

  test("logout ends the session: 204, cookie cleared, me then 401", async () => {
    const cookie = await login(server, ada.email, ada.password);
    const c = client(server, { cookie });
    expect((await c.get("/v1/auth/me")).status).toBe(200);
    const out = await c.post("/v1/auth/logout", {});
    expect(out.status).toBe(204);
    const cleared = parseSetCookie(out.headers.get("set-cookie")!);
    expect(cleared.name).toBe("svc_session");
    expect(cleared.value).toBe("");
    expect(cleared.attrs.some((a) => a === "max-age=0" || a.startsWith("expires=thu, 01 jan 1970"))).toBe(true);
    expectError(await c.get("/v1/auth/me"), 401);
  });

  test("logout answers 204 without any session, and clears the cookie", async () => {
    const r = await client(server).post("/v1/auth/logout");
    expect(r.status).toBe(204);
    expect(parseSetCookie(r.headers.get("set-cookie")!).value).toBe("");
    const stale = await client(server, { cookie: "svc_session=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }).post("/v1/auth/logout");
    expect(stale.status).toBe(204);
  });

  test("logout answers 204 always, even from a plain form post with a live cookie (SPEC §4.3)", async () => {
    const cookie = await login(server, ada.email, ada.password);
    const r = await client(server, { cookie }).post("/v1/auth/logout");
    expect(r.status).toBe(204);
  });

  test("logout answers 204 with a stale, revoked or malformed bearer, or a malformed body, and still ends the cookie's session (issue 10)", async () => {
    const cookie = await login(server, ada.email, ada.password);
    const mint = await client(server, { cookie }).post("/v1/orgs/acme/tokens", { scopes: ["repo:read"], label: "stale-at-logout" });
    expect(mint.status).toBe(201);
    expect((await client(server, { cookie }).delete(`/v1/orgs/acme/tokens/${mint.body.id}`, { origin: server.url })).status).toBe(204);
    const logoutWith = async (headers: Record<string, string>, body?: string) => {
      const res = await fetch(`${server.url}/v1/auth/logout`, { method: "POST", headers, body });
      return { status: res.status, text: await res.text(), cleared: parseSetCookie(res.headers.get("set-cookie") ?? "x=y").value === "" };
    };
    const gone = { status: 204, text: "", cleared: true };
    expect({
      revoked: await logoutWith({ authorization: `Bearer ${mint.body.token}` }),
      unknown: await logoutWith({ authorization: "Bearer svc_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }),
      malformed: await logoutWith({ authorization: "Bearer not-a-token" }),
      "unknown scheme": await logoutWith({ authorization: "Digest whatever" }),
      "malformed JSON body": await logoutWith({ "content-type": "application/json" }, "{not json"),
    }).toEqual({ revoked: gone, unknown: gone, malformed: gone, "unknown scheme": gone, "malformed JSON body": gone });
    // A stale bearer next to a live cookie: the answer is still 204, and the cookie's session ends.
    expect((await client(server, { cookie }).get("/v1/auth/me")).status).toBe(200);
    expect(await logoutWith({ authorization: `Bearer ${mint.body.token}`, cookie })).toEqual(gone);
    expectError(await client(server, { cookie }).get("/v1/auth/me"), 401);
  }, 30_000);

  test("another session survives a logout", async () => {
    const one = await login(server, ada.email, ada.password);
    const two = await login(server, ada.email, ada.password);
    expect(one).not.toBe(two);
    expect((await client(server, { cookie: one }).post("/v1/auth/logout", {})).status).toBe(204);
    expect((await client(server, { cookie: two }).get("/v1/auth/me")).status).toBe(200);
  });
});

describe("CSRF on cookie-authenticated unsafe requests (DECISIONS §1)", () => {
  let cookie: string;
  beforeAll(async () => {
    cookie = await login(server, ada.email, ada.password);
  }, 30_000);

  test("no JSON content type and no Origin: 403, and nothing happens", async () => {
    const form = await client(server, { cookie }).post("/v1/orgs", JSON.stringify({ name: "csrf-victim" }), { "content-type": "text/plain" });
    expectError(form, 403);
    const urlenc = await client(server, { cookie }).post("/v1/orgs", "name=csrf-victim", { "content-type": "application/x-www-form-urlencoded" });
    expectError(urlenc, 403);
    // The org was not created: the same name is still free.
    const ok = await client(server, { cookie }).post("/v1/orgs", { name: "csrf-victim" });
    expect(ok.status).toBe(201);
  });

  test("a foreign Origin without a JSON body: 403", async () => {
    const t = await client(server, { cookie }).post("/v1/orgs/acme/tokens", { scopes: ["repo:read"], label: "csrf-probe" });
    expect(t.status).toBe(201);
    const r = await client(server, { cookie }).delete(`/v1/orgs/acme/tokens/${t.body.id}`, { origin: "https://evil.example" });
    expectError(r, 403);
  });

  test("a JSON body passes", async () => {
    const r = await client(server, { cookie }).post("/v1/orgs", { name: "csrf-json" });
    expect(r.status).toBe(201);
  });

  test("an Origin matching the base URL passes without a body", async () => {
    const t = await client(server, { cookie }).post("/v1/orgs/acme/tokens", { scopes: ["repo:read"], label: "csrf-origin" });
    expect(t.status).toBe(201);
    const noOrigin = await client(server, { cookie }).delete(`/v1/orgs/acme/tokens/${t.body.id}`);
    expectError(noOrigin, 403);
    const withOrigin = await client(server, { cookie }).delete(`/v1/orgs/acme/tokens/${t.body.id}`, { origin: server.url });
    expect(withOrigin.status).toBe(204);
  });

  test("bearer requests need neither (no ambient credential)", async () => {
    const token = await mintToken(server, cookie, "acme", { scopes: ["org:admin"], label: "csrf-bearer" });
    const victim = await client(server, { cookie }).post("/v1/orgs/acme/tokens", { scopes: ["repo:read"], label: "csrf-bearer-victim" });
    const r = await client(server, { token }).delete(`/v1/orgs/acme/tokens/${victim.body.id}`);
    expect(r.status).toBe(204);
  });

  test("safe methods need nothing", async () => {
    expect((await client(server, { cookie }).get("/v1/auth/me", { origin: "https://evil.example" })).status).toBe(200);
  });
});

describe("bearer wins over the cookie (SPEC §5)", () => {
  test("a revoked bearer with a valid cookie: 401", async () => {
    const cookie = await login(server, ada.email, ada.password);
    const mint = await client(server, { cookie }).post("/v1/orgs/acme/tokens", { scopes: ["repo:read"], label: "to-revoke" });
    expect(mint.status).toBe(201);
    expect((await client(server, { cookie }).delete(`/v1/orgs/acme/tokens/${mint.body.id}`, { origin: server.url })).status).toBe(204);
    const both = await client(server, { cookie, token: mint.body.token }).get("/v1/orgs/acme/members");
    expectError(both, 401);
    expect((await client(server, { cookie }).get("/v1/orgs/acme/members")).status).toBe(200);
  });

  test("a malformed bearer with a valid cookie: 401", async () => {
    const cookie = await login(server, ada.email, ada.password);
    expectError(await client(server, { cookie, token: "svc_nope" }).get("/v1/auth/me"), 401);
    expectError(await client(server, { cookie, token: "svc_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" }).get("/v1/auth/me"), 401);
  });

  test("a valid service token with a valid cookie acts as the token, not the person", async () => {
    const cookie = await login(server, ada.email, ada.password);
    const token = await mintToken(server, cookie, "acme", { kind: "service", scopes: ["repo:read"], label: "svc-bot" });
    // The service token belongs to nobody: it cannot create an org, though the cookie's person could.
    const r = await client(server, { cookie, token }).post("/v1/orgs", { name: "bearer-wins" });
    expectError(r, 403);
    expect((await client(server, { cookie }).post("/v1/orgs", { name: "bearer-wins" })).status).toBe(201);
  });
});

describe("POST /v1/auth/invite/preview", () => {
  test("404 for every dead shape, a missing body and a body that is not JSON included (issue 10)", async () => {
    const raw = async (body: string | undefined, type: string | null = "application/json") => {
      const headers: Record<string, string> = {};
      if (type) headers["content-type"] = type;
      const res = await fetch(`${server.url}/v1/auth/invite/preview`, { method: "POST", headers, body });
      return { status: res.status, body: await res.json() };
    };
    const dead = { status: 404, body: { error: "this invitation is invalid, expired or already used" } };
    expect({
      unknown: await raw(JSON.stringify({ invite: "svcinv_" + "a".repeat(32) })),
      malformed: await raw(JSON.stringify({ invite: "svcinv_nope" })),
      "not a string": await raw(JSON.stringify({ invite: 42 })),
      "empty object": await raw("{}"),
      "no body": await raw(undefined, null),
      "malformed JSON": await raw('{"invite":'),
      null: await raw("null"),
      "plain text": await raw("svcinv_" + "a".repeat(32), "text/plain"),
    }).toEqual({
      unknown: dead,
      malformed: dead,
      "not a string": dead,
      "empty object": dead,
      "no body": dead,
      "malformed JSON": dead,
      null: dead,
      "plain text": dead,
    });
  });
});
