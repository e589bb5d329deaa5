// A value outside an enumeration is 422 (SPEC §7), wherever an enumeration is taken (issue 24
// item 5): the changes listing's `state`, PATCH's `state`, and a commit operation's `op`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

let server: RunningServer;
let owner: Person;
let api: ReturnType<typeof caller>;
const base = "/v1/orgs/acme/repos/app";

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "acme", "owner@acme.example", "owner");
  api = caller(server, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
  const put = (branch: string, content: string) =>
    api.post(`${base}/commits`, { branch, message: branch, operations: [{ op: "put", path: `${branch}.txt`, content }] });
  expect((await put("main", "m\n")).status).toBe(201);
  expect((await put("topic", "t\n")).status).toBe(201);
  expect((await api.post(`${base}/changes`, { title: "topic", branch: "topic" })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

describe("enumerations", () => {
  test("GET …/changes?state= outside open|queued|landed|ejected|closed is 422; each value inside filters", async () => {
    expectError(await api.get(`${base}/changes?state=bogus`), 422, "state must be one of open, queued, landed, ejected, closed");
    const counts: Record<string, number> = {};
    for (const state of ["open", "queued", "landed", "ejected", "closed"]) {
      const r = await api.get(`${base}/changes?state=${state}`);
      expect(r.status).toBe(200);
      counts[state] = r.body.changes.length;
    }
    expect(counts).toEqual({ open: 1, queued: 0, landed: 0, ejected: 0, closed: 0 });
  });

  test("PATCH …/changes/1 with a state it cannot set is 422 and changes nothing", async () => {
    for (const state of ["merged", "queued", "landed"]) expectError(await api.patch(`${base}/changes/1`, { state }), 422, /^state must be open or closed/);
    expect((await api.get(`${base}/changes/1`)).body.state).toBe("open");
    const closed = await api.patch(`${base}/changes/1`, { state: "closed" });
    expect({ status: closed.status, state: closed.body.state }).toEqual({ status: 200, state: "closed" });
  });

  test("a commit operation with an unknown op is 422; a malformed one stays 400", async () => {
    expectError(
      await api.post(`${base}/commits`, {
        message: "m",
        operations: [
          { op: "put", path: "a", content: "a" },
          { op: "move", path: "a" },
        ],
      }),
      422,
      'operations[1].op must be one of put, put_base64, delete, got "move"',
    );
    expectError(await api.post(`${base}/commits`, { message: "m", operations: [{ op: 7, path: "a" }] }), 400);
  });
});
