// The hot reads (GET repo, tree listings) are answered as prebuilt JSON, outside the framework's
// response-schema pass; this checks their real answers against the schemas the interface
// description publishes, for a fork-less and a public repository, by owner and by anonymous.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { Repo, Tree } from "../../../src/services/repos/schemas.ts";
import { caller, person, type Person } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

let server: RunningServer;
let owner: Person;

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "ans", "owner@example.com", "owner");
  const as = caller(server, owner);
  expect((await as.post("/v1/orgs/ans/repos", { name: "shown", public: true, description: "d" })).status).toBe(201);
  const commit = await as.post("/v1/orgs/ans/repos/shown/commits", {
    message: "m",
    operations: [
      { op: "put", path: "src/a.txt", content: "a\n" },
      { op: "put", path: "b.txt", content: "b\n" },
    ],
  });
  expect(commit.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** Every schema violation of `value`, as readable lines. */
const violations = (schema: Parameters<typeof Value.Errors>[0], value: unknown) => [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);

test("GET repo answers a Repo, for the owner and for anonymous", async () => {
  for (const who of [owner, undefined]) {
    const r = await caller(server, who).get("/v1/orgs/ans/repos/shown");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    expect(violations(Repo, r.body)).toEqual([]);
    expect(Object.keys(r.body)).not.toContain("fork_state");
  }
});

test("a tree listing answers a Tree, at the root and in a directory", async () => {
  for (const path of ["", "src"]) {
    const r = await caller(server, owner).get(`/v1/orgs/ans/repos/shown/tree/main?path=${path}`);
    expect(r.status).toBe(200);
    expect(violations(Tree, r.body)).toEqual([]);
    expect(r.body.entries.length).toBeGreaterThan(0);
  }
});
