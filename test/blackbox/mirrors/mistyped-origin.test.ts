// A mirror of a mistyped origin on another svc (issue 24 item 6): svc, like every big host,
// answers a repository that does not exist as it answers a private one (401 to an anonymous
// caller), so the mirror's sync_error must not send the person looking for credentials only: it
// says the origin may not exist (check the URL) or may be private.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { caller, person, type Person } from "../../helpers/api.ts";
import { eventually } from "../../helpers/receiver.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

let origin: RunningServer;
let mirror: RunningServer;
let owner: Person;

beforeAll(async () => {
  origin = await startServer();
  mirror = await startServer({ env: { SVC_MIRROR_ALLOW_PRIVATE: "1" } });
  await person(origin, "up", "owner@up.test", "owner");
  owner = await person(mirror, "acme", "owner@acme.test", "owner");
}, 60_000);
afterAll(async () => {
  await origin?.[Symbol.asyncDispose]();
  await mirror?.[Symbol.asyncDispose]();
});

test("a mirror of a repository that does not exist says it may not exist or may be private", async () => {
  const r = await caller(mirror, owner).post("/v1/orgs/acme/repos", { name: "typo", kind: "mirror", origin_url: `${origin.url}/up/no-such-repo.git` });
  expect(r.status).toBe(201);
  const repo = await eventually(async () => {
    const b = (await caller(mirror, owner).get("/v1/orgs/acme/repos/typo")).body;
    return b.last_sync_at !== null && b;
  });
  expect(repo.sync_error).toBe(
    "origin answered HTTP 401 without credentials: the repository may not exist (check the URL), or it is private and the mirror needs credentials",
  );
}, 60_000);
