// Diffs are answered as prebuilt JSON, outside the framework's response-schema pass (they are
// large); this checks real answers of the change diff and compare routes against the Diff schema
// the interface description publishes: added, modified, deleted and binary files, and a diff cut
// by its limits.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { Comparison, Diff } from "../../../src/services/changes/schemas.ts";
import { caller, person, type Person } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

let server: RunningServer;
let owner: Person;
let base = "";
let head = "";

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "ans", "owner@example.com", "owner");
  const as = caller(server, owner);
  expect((await as.post("/v1/orgs/ans/repos", { name: "diffs" })).status).toBe(201);
  const first = await as.post("/v1/orgs/ans/repos/diffs/commits", {
    message: "base",
    operations: [
      { op: "put", path: "keep.txt", content: "a\nb\nc\n" },
      { op: "put", path: "gone.txt", content: "bye\n" },
    ],
  });
  expect(first.status).toBe(201);
  base = first.body.commit;
  expect((await as.put("/v1/orgs/ans/repos/diffs/refs/refs/heads/topic", { target: base })).status).toBe(200);
  const ops = [
    { op: "put", path: "keep.txt", content: "a\nB\nc\n" },
    { op: "delete", path: "gone.txt" },
    { op: "put", path: "bin.dat", content: Buffer.from([0, 1, 2, 255, 0]).toString("base64"), encoding: "base64" },
    ...Array.from({ length: 40 }, (_, i) => ({ op: "put", path: `many/f${i}.txt`, content: `${"line\n".repeat(2000)}${i}\n` })),
  ];
  const second = await as.post("/v1/orgs/ans/repos/diffs/commits", { branch: "topic", message: "changes", operations: ops });
  expect(second.status).toBe(201);
  head = second.body.commit;
  expect((await as.post("/v1/orgs/ans/repos/diffs/changes", { title: "t", branch: "topic" })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** Every schema violation of `value`, as readable lines. */
const violations = (value: unknown, schema: typeof Diff | typeof Comparison = Diff) => [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);

test("a change's diff and a compare answer a Diff, as JSON", async () => {
  const as = caller(server, owner);
  for (const path of ["/v1/orgs/ans/repos/diffs/changes/1/diff", `/v1/orgs/ans/repos/diffs/compare/${base}...${head}`]) {
    const r = await as.get(path);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    expect(violations(r.body)).toEqual([]);
    expect(r.body.files.length).toBe(43);
  }
  // A compare is a Diff with the range's counts and commits.
  const r = await as.get(`/v1/orgs/ans/repos/diffs/compare/${base}...${head}`);
  expect(violations(r.body, Comparison)).toEqual([]);
  expect({ ahead: r.body.ahead, behind: r.body.behind, commits: r.body.commits.map((c: any) => [c.sha, c.message]) }).toEqual({
    ahead: 1,
    behind: 0,
    commits: [[head, "changes\n"]],
  });
});
