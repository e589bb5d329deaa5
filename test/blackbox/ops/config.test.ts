// Configuration seen from outside (DECISIONS §0, §1): SVC_BASE_URL drives clone_url, the cookie's
// Secure flag and the Origin the CSRF rule accepts; SVC_DATA_DIR holds the database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { client, createUser, startServer, type RunningServer } from "../../helpers/server.ts";

/** A port the OS just handed out (bound and released), for a server that must know its port up front. */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

const BASE = "https://git.example.test";

describe("SVC_BASE_URL", () => {
  let server: RunningServer;
  /** The same server addressed on its bound socket (the public base is not routable here). */
  let local: RunningServer;
  let cookie: string;
  let setCookie: string;

  beforeAll(async () => {
    const port = freePort();
    server = await startServer({ env: { SVC_HTTP_ADDR: `127.0.0.1:${port}`, SVC_BASE_URL: `${BASE}/` } });
    local = { ...server, url: `http://127.0.0.1:${port}` };
    const u = await createUser(server, { org: "cfg", email: "conf@example.com" });
    const res = await fetch(`${local.url}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: u.email, password: u.password }),
    });
    expect(res.status).toBe(200);
    setCookie = res.headers.get("set-cookie")!;
    cookie = setCookie.split(";")[0]!;
  }, 30_000);
  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
  });

  test("clone_url is built from the base URL (no doubled slash)", async () => {
    const r = await client(local, { cookie }).post("/v1/orgs/cfg/repos", { name: "based" });
    expect(r.status).toBe(201);
    expect(r.body.clone_url).toBe(`${BASE}/cfg/based.git`);
    expect(r.body.ssh_clone_url).toBeNull();
  });

  test("an https base URL makes the session cookie Secure", () => {
    const attrs = setCookie.split(";").map((s) => s.trim().toLowerCase());
    expect(attrs).toContain("secure");
    expect(attrs).toContain("httponly");
  });

  test("the CSRF rule accepts the base URL as Origin, not the bound address", async () => {
    const a = await client(local, { cookie }).post("/v1/orgs/cfg/tokens", { scopes: ["repo:read"], label: "a" });
    const b = await client(local, { cookie }).post("/v1/orgs/cfg/tokens", { scopes: ["repo:read"], label: "b" });
    expect(a.status).toBe(201);
    const wrong = await client(local, { cookie }).delete(`/v1/orgs/cfg/tokens/${a.body.id}`, { origin: local.url });
    expect(wrong.status).toBe(403);
    const right = await client(local, { cookie }).delete(`/v1/orgs/cfg/tokens/${b.body.id}`, { origin: BASE });
    expect(right.status).toBe(204);
  });
});

describe("defaults", () => {
  test("without SVC_BASE_URL the base is the bound address; the database lives in SVC_DATA_DIR", async () => {
    await using server = await startServer();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    expect(existsSync(join(server.dataDir, "svc.db"))).toBe(true);
    const u = await createUser(server, { org: "dflt", email: "d@example.com" });
    const res = await fetch(`${server.url}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: u.email, password: u.password }),
    });
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const r = await client(server, { cookie }).post("/v1/orgs/dflt/repos", { name: "here" });
    expect(r.body.clone_url).toBe(`${server.url}/dflt/here.git`);
  }, 20_000);
});
