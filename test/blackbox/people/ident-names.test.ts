// Issue 25 row 14: a profile name with `<` or `>` was accepted, then every API commit by that
// person failed 400 `badName` (git's ident `Name <email>` cannot hold them). Decision: refused
// wherever a person names themself; a name stored before the rule is made safe when a commit is
// written (brackets and control characters become spaces; nothing left: the handle).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { client, startServer, type RunningServer, serverDb } from "../../helpers/server.ts";

let server: RunningServer;
let ada: Person;

beforeAll(async () => {
  server = await startServer();
  ada = await person(server, "acme", "ada@example.com", "owner", { handle: "ada" });
  expect((await caller(server, ada).post("/v1/orgs/acme/repos", { name: "app" })).status).toBe(201);
}, 60_000);
afterAll(() => server?.[Symbol.asyncDispose]());

const commit = () =>
  caller(server, ada).post("/v1/orgs/acme/repos/app/commits", { message: "m", operations: [{ op: "put", path: `f${Math.random()}`, content: "x" }] });

describe("names that git idents cannot hold", () => {
  test("refused in a profile, at signup and by user-create", async () => {
    for (const name of ["Ada <admin@example.com>", "a > b", "<"]) {
      expectError(await caller(server, ada).patch("/v1/users/ada", { name }), 400, /may not contain < or >/);
    }
    expectError(
      await client(server).post("/v1/auth/signup", { email: "x@example.com", name: "X <y>", password: "a long enough password", handle: "xy" }),
      400,
      /no < or >/,
    );
    const r = await server.cli([
      "user-create",
      "--org",
      "acme",
      "--email",
      "z@example.com",
      "--name",
      "Zed <z>",
      "--password",
      "a long enough password",
      "--role",
      "member",
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no < or >/);
    expect((await client(server).get("/v1/users/ada")).body.name).toBe(ada.email.split("@")[0]);
  });

  test("a name stored before the rule: API commits still work, authored by the cleaned name", async () => {
    const db = serverDb(server);
    try {
      db.run("UPDATE users SET name = ? WHERE handle = 'ada'", ["Ada <Lovelace>\u0007"]);
    } finally {
      db.close();
    }
    const r = await commit();
    expect(r.status).toBe(201);
    const got = await caller(server, ada).get(`/v1/orgs/acme/repos/app/commits/${r.body.commit}`);
    expect(got.body.author.name).toBe("Ada Lovelace");
    const db2 = serverDb(server);
    try {
      db2.run("UPDATE users SET name = ? WHERE handle = 'ada'", ["<>"]);
    } finally {
      db2.close();
    }
    const r2 = await commit();
    expect(r2.status).toBe(201);
    expect((await caller(server, ada).get(`/v1/orgs/acme/repos/app/commits/${r2.body.commit}`)).body.author.name).toBe("ada");
  });

  test("an explicit author with brackets is still the caller's 400, as before", async () => {
    expectError(
      await caller(server, ada).post("/v1/orgs/acme/repos/app/commits", {
        message: "m",
        author: { name: "A <b>", email: "a@b.c" },
        operations: [{ op: "put", path: "g", content: "x" }],
      }),
      400,
      /without <, >/,
    );
  });
});
