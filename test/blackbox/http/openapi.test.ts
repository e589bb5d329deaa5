// GET /v1/openapi.json is a valid OpenAPI 3 document that describes the running server: every
// operation documents a success answer with its schema and examples, every request body its JSON
// schema, and every documented path exists with exactly the documented methods (DECISIONS §3
// "Interface description"; issue 10 item 5).
import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../../helpers/server.ts";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
/** The order the server lists methods in `Allow`. */
const ALLOW_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

let server: RunningServer;
let doc: any;
/** Every documented operation as `METHOD /path` with its operation object. */
let operations: { key: string; path: string; method: string; op: any }[];

beforeAll(async () => {
  server = await startServer();
  const res = await fetch(`${server.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type") ?? "").toStartWith("application/json");
  doc = await res.json();
  operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op })),
  );
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** A JSON schema under a response or request body, if it has one. */
const jsonSchemaOf = (x: any) => x?.content?.["application/json"]?.schema ?? null;

/** The success answers of an operation that are documented: a body schema, or a bodiless 204. */
function documentedSuccess(op: any): string[] {
  return Object.entries<any>(op.responses ?? {})
    .filter(([status, r]) => /^2\d\d$/.test(status) && (status === "204" ? !r.content : Object.values<any>(r.content ?? {}).some((c) => c.schema)))
    .map(([status]) => status);
}

describe("GET /v1/openapi.json", () => {
  test("validates as an OpenAPI 3 document (3.1), info.version 1.0.0", async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe("1.0.0");
    // The validator dereferences in place: give it a copy.
    await SwaggerParser.validate(structuredClone(doc));
  });

  test("documents the control plane (/v1) and the operations endpoints, not the document or its reader", () => {
    expect(operations.length).toBeGreaterThan(40);
    const operational = new Set(["/healthz", "/readyz", "/metrics"]);
    for (const { path } of operations) expect({ path, documented: path.startsWith("/v1/") || operational.has(path) }).toEqual({ path, documented: true });
    expect(doc.paths["/v1/openapi.json"]).toBeUndefined();
    expect(doc.paths["/v1/docs"]).toBeUndefined();
  });

  test("every operation has a success schema", () => {
    const missing = operations.filter((o) => documentedSuccess(o.op).length === 0).map((o) => o.key);
    expect({ missingSuccessSchema: missing }).toEqual({ missingSuccessSchema: [] });
  });

  test("every success body schema carries examples", () => {
    const without = operations.flatMap((o) =>
      documentedSuccess(o.op)
        .filter((s) => s !== "204")
        .filter((s) => {
          const schema = jsonSchemaOf(o.op.responses[s]);
          return schema && !(Array.isArray(schema.examples) && schema.examples.length > 0);
        })
        .map((s) => `${o.key} ${s}`),
    );
    expect(without).toEqual([]);
  });

  test("every request body is JSON with a schema", () => {
    const without = operations.filter((o) => o.op.requestBody && !jsonSchemaOf(o.op.requestBody)).map((o) => o.key);
    expect(without).toEqual([]);
  });

  test("every operation documents the front door's answers: 500 everywhere, 401 and 429 where a credential is read, 413 with a body, 415 where only JSON is read", () => {
    for (const { key, path, op } of operations) {
      const statuses = Object.keys(op.responses ?? {});
      expect({ key, has500: statuses.includes("500") }).toEqual({ key, has500: true });
      if (path !== "/v1/auth/logout")
        expect({ key, has401: statuses.includes("401"), has429: statuses.includes("429") }).toEqual({ key, has401: true, has429: true });
      if (op.requestBody) expect({ key, has413: statuses.includes("413") }).toEqual({ key, has413: true });
      if (op.requestBody && !path.startsWith("/v1/auth/") && path !== "/v1/users/{handle}/emails/verify")
        expect({ key, has415: statuses.includes("415") }).toEqual({ key, has415: true });
    }
  });

  test("the orgs domain documents its answers in full", () => {
    const expected: Record<string, string[]> = {
      "POST /v1/orgs": ["201", "400", "401", "403", "409", "413", "415", "429", "500"],
      "GET /v1/orgs/{org}/members": ["200", "400", "401", "403", "404", "429", "500"],
      "PUT /v1/orgs/{org}/members/{user}": ["200", "400", "401", "403", "404", "409", "413", "415", "422", "429", "500"],
      "DELETE /v1/orgs/{org}/members/{user}": ["204", "401", "403", "404", "409", "429", "500"],
      "GET /v1/orgs/{org}/billing": ["200", "401", "403", "404", "429", "500"],
      "POST /v1/orgs/{org}/billing": ["200", "400", "401", "402", "403", "404", "429", "500", "502", "503"],
      "POST /v1/orgs/{org}/billing/subscribe": ["200", "303", "400", "401", "403", "404", "409", "429", "500", "502", "503"],
      "POST /v1/orgs/{org}/repos/{repo}/grants": ["200", "400", "401", "403", "404", "413", "415", "422", "429", "500"],
      "GET /v1/orgs/{org}/repos/{repo}/grants": ["200", "401", "403", "404", "429", "500"],
      "DELETE /v1/orgs/{org}/repos/{repo}/grants/users/{user}": ["204", "401", "403", "404", "429", "500"],
      "DELETE /v1/orgs/{org}/repos/{repo}/grants/teams/{team}": ["204", "401", "403", "404", "429", "500"],
      "GET /v1/orgs/{org}/repos/{repo}/access": ["200", "401", "403", "404", "429", "500"],
      "POST /v1/orgs/{org}/invites": ["201", "400", "401", "402", "403", "404", "409", "413", "415", "422", "429", "500"],
      "GET /v1/orgs/{org}/invites": ["200", "400", "401", "403", "404", "429", "500"],
      "DELETE /v1/orgs/{org}/invites/{id}": ["204", "401", "403", "404", "429", "500"],
    };
    for (const [key, statuses] of Object.entries(expected)) {
      const o = operations.find((x) => x.key === key);
      expect({ key, statuses: Object.keys(o?.op.responses ?? {}).sort() }).toEqual({ key, statuses });
    }
    // Paged lists say so.
    for (const key of ["GET /v1/orgs/{org}/members", "GET /v1/orgs/{org}/invites", "GET /v1/orgs/{org}/teams"]) {
      const o = operations.find((x) => x.key === key)!;
      expect(
        o.op.parameters
          .filter((p: any) => p.in === "query")
          .map((p: any) => p.name)
          .sort(),
      ).toEqual(["cursor", "limit"]);
      expect(Object.keys(jsonSchemaOf(o.op.responses["200"]).properties)).toContain("next_cursor");
    }
  });

  test("every documented path exists, accepting exactly the documented methods", async () => {
    const byPath = new Map<string, string[]>();
    for (const o of operations) byPath.set(o.path, [...(byPath.get(o.path) ?? []), o.method.toUpperCase()]);
    /** A path template as a pattern: `{rest}` takes slashes, other parameters one segment. */
    const patternOf = (path: string) => new RegExp(`^${path.replace(/\{rest\}/g, ".+").replace(/\{[^}]+\}/g, "[^/]+")}$`);
    const wrong: unknown[] = [];
    for (const path of byPath.keys()) {
      // Parameters filled with values no static path segment uses; the wildcard tail gets a slash.
      const concrete = path.replace(/\{rest\}/g, "zz-a/zz-b").replace(/\{([^}]+)\}/g, "zz-$1");
      // Where two templates fit one path (…/emails/verify and …/emails/{email}), both route it.
      const documented = [...byPath].filter(([p]) => patternOf(p).test(concrete)).flatMap(([, methods]) => methods);
      const probe = ["PATCH", "PUT", "POST", "DELETE", "GET"].find((m) => !documented.includes(m))!;
      const res = await fetch(server.url + concrete, { method: probe });
      await res.arrayBuffer();
      const expected = ALLOW_ORDER.filter((m) => documented.includes(m) || (m === "HEAD" && documented.includes("GET")));
      const allow = res.headers.get("allow")?.split(", ") ?? null;
      if (res.status !== 405 || JSON.stringify(allow) !== JSON.stringify(expected)) wrong.push({ path, probe, status: res.status, allow, expected });
    }
    expect(wrong).toEqual([]);
  });
});
