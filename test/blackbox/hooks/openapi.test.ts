// The hooks and mirrors routes in /v1/openapi.json: every webhook route and POST …/sync documents
// its body and every status it can answer, with a response schema and examples; the inbound
// webhooks (outside /v1, signed rather than authenticated) are left out of the control plane's
// document and described in docs/api.md.
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

const R = "/v1/orgs/{org}/repos/{repo}";
/** Method, path, the statuses the route answers, and whether it takes a JSON body. */
const ROUTES: [string, string, number[], boolean][] = [
  ["post", `${R}/webhooks`, [201, 400, 401, 403, 404, 413, 422], true],
  ["get", `${R}/webhooks`, [200, 401, 403, 404], false],
  ["patch", `${R}/webhooks/{id}`, [200, 400, 401, 403, 404, 413, 422], true],
  ["delete", `${R}/webhooks/{id}`, [204, 401, 403, 404], false],
  ["post", `${R}/webhooks/{id}/deliveries/{delivery}/redeliver`, [202, 401, 403, 404], false],
  ["get", `${R}/webhooks/{id}/deliveries`, [200, 400, 401, 403, 404], false],
  ["post", `${R}/sync`, [202, 401, 402, 403, 404, 422], false],
];

const responseSchema = (method: string, path: string, status: number) => doc.paths[path][method].responses[String(status)].content["application/json"].schema;

describe("hooks and mirrors routes in /v1/openapi.json", () => {
  for (const [method, path, statuses, hasBody] of ROUTES) {
    test(`${method.toUpperCase()} ${path}: ${statuses.join(", ")}`, () => {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      // The front door's: 500 everywhere, 429 where a credential is read, 403 (cross-site) on unsafe methods, 415 with a JSON body.
      const frontDoor = [429, 500, ...(method === "get" ? [] : [403]), ...(hasBody ? [415] : [])];
      expect(Object.keys(op.responses).map(Number).sort()).toEqual([...new Set([...statuses, ...frontDoor])].sort());
      expect(op.summary).toEqual(expect.any(String));
      expect(!!op.requestBody).toBe(hasBody);
      const ok = statuses[0]!;
      if (ok !== 204)
        expect({ type: responseSchema(method, path, ok).type, examples: responseSchema(method, path, ok).examples?.length ?? 0 }).toEqual({
          type: "object",
          examples: 1,
        });
      for (const s of statuses.filter((s) => s >= 400)) expect(responseSchema(method, path, s).properties.error.type).toBe("string");
    });
  }

  test("the webhook list never documents a secret; creation shows it once", () => {
    expect(Object.keys(responseSchema("get", `${R}/webhooks`, 200).properties.webhooks.items.properties)).not.toContain("secret");
    expect(responseSchema("post", `${R}/webhooks`, 201).required).toContain("secret");
  });

  test("inbound webhooks are not part of the control plane's document", () => {
    expect(doc.paths["/webhooks/generic"]).toBeUndefined();
    expect(doc.paths["/webhooks/app"]).toBeUndefined();
  });
});
