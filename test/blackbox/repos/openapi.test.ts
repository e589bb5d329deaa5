// The repos domain in /v1/openapi.json (issue 10): every repository, commit, ref, content and
// protection route documents its body and every status it can answer, with a response schema
// and examples; the Repo schema carries fork_state as optional (absent on non-forks).
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
  ["post", "/v1/orgs/{org}/repos", [201, 400, 401, 402, 403, 404, 409, 413, 422], true],
  ["get", "/v1/orgs/{org}/repos", [200, 400, 401, 404], false],
  ["get", R, [200, 401, 404], false],
  ["patch", R, [200, 400, 401, 402, 403, 404, 409, 413], true],
  ["delete", R, [204, 401, 403, 404], false],
  ["post", `${R}/commits`, [201, 400, 401, 402, 403, 404, 409, 413, 422], true],
  ["get", `${R}/commits`, [200, 400, 401, 404], false],
  ["get", `${R}/commits/{sha}`, [200, 401, 404], false],
  ["get", `${R}/tree/{rest}`, [200, 400, 401, 404], false],
  ["get", `${R}/blob/{rest}`, [200, 206, 304, 400, 401, 404, 416], false],
  ["get", `${R}/refs`, [200, 401, 404], false],
  ["put", `${R}/refs/{rest}`, [200, 400, 401, 402, 403, 404, 409, 413, 422], true],
  ["delete", `${R}/refs/{rest}`, [204, 400, 401, 402, 403, 404, 409], false],
  ["get", `${R}/protections`, [200, 401, 403, 404], false],
  ["put", `${R}/protections/{rest}`, [200, 400, 401, 403, 404, 413], true],
  ["delete", `${R}/protections/{rest}`, [204, 400, 401, 403, 404], false],
  ["get", `${R}/branches`, [200, 400, 401, 404], false],
  ["get", `${R}/tags`, [200, 400, 401, 404], false],
  ["get", `${R}/archive/{rest}`, [200, 304, 400, 401, 404, 413, 422], false],
];

/** The JSON schema of a route's answer with `status`. */
const responseSchema = (method: string, path: string, status: number) => {
  const content = doc.paths[path][method].responses[String(status)].content;
  return (content["application/json"] ?? content["text/plain"]).schema;
};

describe("repos routes in /v1/openapi.json", () => {
  for (const [method, path, statuses, hasBody] of ROUTES) {
    test(`${method.toUpperCase()} ${path}: ${statuses.join(", ")}`, () => {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      // The route's own statuses, plus the front door's: 500 everywhere, 429 where a credential
      // is read (every repos route), 415 where a JSON body is read.
      const frontDoor = hasBody ? [415, 429, 500] : [429, 500];
      expect(Object.keys(op.responses).map(Number).sort()).toEqual([...new Set([...statuses, ...frontDoor])].sort());
      expect(op.summary).toEqual(expect.any(String));
      expect(!!op.requestBody).toBe(hasBody);
      // The success answer has a documented shape: JSON with an example, or raw bytes (a blob).
      const ok = statuses[0]!;
      if (ok !== 204) {
        const schema = responseSchema(method, path, ok);
        if (path.endsWith("/blob/{rest}") || path.endsWith("/archive/{rest}")) expect(schema).toMatchObject({ type: "string", format: "binary" });
        else expect({ type: schema.type, examples: schema.examples?.length ?? 0 }).toEqual({ type: "object", examples: 1 });
      }
      for (const s of statuses.filter((s) => s >= 400 && s !== 416)) expect(responseSchema(method, path, s).properties.error.type).toBe("string");
    });
  }

  test("Repo: every §2.1 field is required except fork_state, which is documented as optional", () => {
    const repo = responseSchema("get", R, 200);
    expect(Object.keys(repo.properties)).toContain("fork_state");
    expect(repo.required).not.toContain("fork_state");
    expect(repo.required.sort()).toEqual(
      Object.keys(repo.properties)
        .filter((k) => k !== "fork_state")
        .sort(),
    );
    expect(repo.examples[0]).not.toHaveProperty("fork_state");
  });

  test("the commit and ref APIs document 409 with current; a commit answers { commit, branch, parent, tree }", () => {
    for (const [method, path] of [
      ["post", `${R}/commits`],
      ["put", `${R}/refs/{rest}`],
      ["delete", `${R}/refs/{rest}`],
    ] as const) {
      expect(responseSchema(method, path, 409).required).toEqual(["error", "current"]);
    }
    const created = responseSchema("post", `${R}/commits`, 201);
    expect(created.required.sort()).toEqual(["branch", "commit", "parent", "tree"]);
  });

  test("a blob answers raw bytes and documents its headers", () => {
    const ok = doc.paths[`${R}/blob/{rest}`].get.responses["200"];
    expect(Object.keys(ok.headers).sort()).toEqual(["accept-ranges", "content-security-policy", "content-type", "etag", "x-content-type-options"]);
    expect(ok.description).toContain("Content-Type");
    expect(Object.keys(doc.paths[`${R}/blob/{rest}`].get.responses["206"].headers)).toContain("content-range");
  });
});
