// /v1/openapi.json describes every people route completely (issue 10): each status the route can
// answer with its body schema, 2xx examples, and the request body of every route that reads one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../../helpers/server.ts";

let server: RunningServer;
let doc: any;

beforeAll(async () => {
  server = await startServer();
  const res = await fetch(`${server.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
}, 30_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** method, path, the statuses it answers, and whether it reads a JSON body. */
const ROUTES: [string, string, number[], boolean][] = [
  ["post", "/v1/auth/login", [200, 401], true],
  ["post", "/v1/auth/logout", [204], false],
  ["get", "/v1/auth/me", [200, 401], false],
  ["post", "/v1/auth/signup", [202, 400, 401, 409], true],
  ["post", "/v1/auth/verify", [200, 401, 404], true],
  ["post", "/v1/auth/resend-verification", [202, 401], true],
  ["post", "/v1/auth/forgot-password", [202, 401], true],
  ["post", "/v1/auth/reset-password", [200, 400, 401, 404], true],
  ["post", "/v1/auth/invite/preview", [200, 401, 404], true],
  ["post", "/v1/auth/accept-invite", [201, 400, 401, 409], true],
  ["get", "/v1/users/{handle}/emails", [200, 401, 403, 404], false],
  ["post", "/v1/users/{handle}/emails", [202, 400, 401, 403, 404, 409], true],
  ["post", "/v1/users/{handle}/emails/verify", [200, 401, 403, 404], true],
  ["delete", "/v1/users/{handle}/emails/{email}", [204, 401, 403, 404], false],
  ["post", "/v1/orgs/{org}/tokens", [201, 400, 401, 403, 404, 422], true],
  ["get", "/v1/orgs/{org}/tokens", [200, 400, 401, 403, 404], false],
  ["delete", "/v1/orgs/{org}/tokens/{id}", [204, 401, 403, 404], false],
  ["post", "/v1/orgs/{org}/ssh-keys", [201, 400, 401, 403, 404, 409], true],
  ["get", "/v1/orgs/{org}/ssh-keys", [200, 400, 401, 403, 404], false],
  ["delete", "/v1/orgs/{org}/ssh-keys/{id}", [204, 401, 403, 404], false],
];

describe("GET /v1/openapi.json for the people routes", () => {
  test("every route answers its statuses, each (but 204) with a JSON schema; errors are { error }", () => {
    for (const [method, path, statuses] of ROUTES) {
      const op = doc.paths?.[path]?.[method];
      expect({ route: `${method} ${path}`, found: !!op }).toEqual({ route: `${method} ${path}`, found: true });
      // The route's own statuses; the front door's (400, 403, 413, 500) are added to every route.
      const documented = new Set(Object.keys(op.responses).map(Number));
      expect({ route: `${method} ${path}`, missing: statuses.filter((s: number) => !documented.has(s)) }).toEqual({ route: `${method} ${path}`, missing: [] });
      for (const status of statuses.filter((s) => s !== 204)) {
        const schema = op.responses[String(status)].content?.["application/json"]?.schema;
        expect({ route: `${method} ${path}`, status, schema: !!schema }).toEqual({ route: `${method} ${path}`, status, schema: true });
        if (status >= 400) expect(schema.properties.error.type).toBe("string");
      }
    }
  });

  test("every 200/201/202 answer has an object schema with an example", () => {
    for (const [method, path, statuses] of ROUTES) {
      for (const status of statuses.filter((s) => s >= 200 && s < 300 && s !== 204)) {
        const schema = doc.paths[path][method].responses[String(status)].content["application/json"].schema;
        expect({ route: `${method} ${path}`, type: schema.type, examples: Array.isArray(schema.examples) && schema.examples.length > 0 }).toEqual({
          route: `${method} ${path}`,
          type: "object",
          examples: true,
        });
      }
    }
  });

  test("list answers carry next_cursor and take limit and cursor (DECISIONS §1)", () => {
    for (const path of ["/v1/orgs/{org}/tokens", "/v1/orgs/{org}/ssh-keys"]) {
      const op = doc.paths[path].get;
      expect(Object.keys(op.responses["200"].content["application/json"].schema.properties).sort()).toContain("next_cursor");
      expect(
        op.parameters
          .filter((p: any) => p.in === "query")
          .map((p: any) => p.name)
          .sort(),
      ).toEqual(["cursor", "limit"]);
    }
  });

  test("every route that reads a body documents it as a JSON object with its fields", () => {
    for (const [method, path, , hasBody] of ROUTES) {
      const body = doc.paths[path][method].requestBody;
      if (!hasBody) {
        expect({ route: `${method} ${path}`, body: body ?? null }).toEqual({ route: `${method} ${path}`, body: null });
        continue;
      }
      const schema = body?.content?.["application/json"]?.schema;
      expect({ route: `${method} ${path}`, type: schema?.type, fields: Object.keys(schema?.properties ?? {}).length > 0 }).toEqual({
        route: `${method} ${path}`,
        type: "object",
        fields: true,
      });
    }
    expect(Object.keys(doc.paths["/v1/auth/reset-password"].post.requestBody.content["application/json"].schema.properties).sort()).toEqual([
      "new_password",
      "token",
    ]);
    expect(Object.keys(doc.paths["/v1/orgs/{org}/tokens"].post.requestBody.content["application/json"].schema.properties).sort()).toEqual([
      "kind",
      "label",
      "repo",
      "scopes",
    ]);
  });
});
