// Rename redirects of the web pages over HTTP (issue 33): a page at a repository's old name, and
// every path below it, answers 301 to the same path (and query) at the new name; a form posted at
// the old name (a page opened before the rename) answers 308 there, which a browser follows with
// the same form; a private
// repository's old name is, for whoever may not read it, exactly the answer a repository that never
// existed gets; the API does not follow old names; a name taken again is the new repository's.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { caller, person, type Person } from "../../../helpers/api.ts";
import { startServer, type RunningServer } from "../../../helpers/server.ts";
import { csrfOf, getPage, postForm } from "../../../helpers/web.ts";

let server: RunningServer;
let owner: Person;
let outsider: Person;
let api: ReturnType<typeof caller>;

const get = (path: string, who?: Person) => getPage(server, path, who?.cookie);

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "acme", "owner@acme.example", "owner");
  outsider = await person(server, "rival", "someone@rival.example", "owner");
  api = caller(server, owner);
  expect((await api.post("/v1/orgs/acme/repos", { name: "widgets", public: true })).status).toBe(201);
  expect((await api.patch("/v1/orgs/acme/repos/widgets", { name: "gadgets" })).status).toBe(200);
  expect((await api.post("/v1/orgs/acme/repos", { name: "vault", public: false })).status).toBe(201);
  expect((await api.patch("/v1/orgs/acme/repos/vault", { name: "safe" })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

test("every page below the old name answers 301 to the same page at the new name, for anyone who may see it", async () => {
  for (const path of ["", "/tree/main/src/a%20b.ts", "/blob/main/README.md", "/changes/3", "/issues?state=closed", "/settings/access", "/commits/main"]) {
    for (const who of [owner, outsider, undefined]) {
      const r = await get(`/acme/widgets${path}`, who);
      expect({ path, status: r.status, location: r.headers.get("location"), cache: r.headers.get("cache-control") }).toEqual({
        path,
        status: 301,
        location: `/acme/gadgets${path}`,
        cache: "no-store",
      });
    }
  }
  // Case and a pasted clone URL lead there too; the new name is a page.
  expect((await get("/ACME/Widgets.git", owner)).headers.get("location")).toBe("/acme/gadgets");
  expect((await get("/acme/gadgets", owner)).status).toBe(200);
});

test("a private repository's old name: 301 for its owner, the missing-repository answer for everyone else", async () => {
  expect((await get("/acme/vault/issues", owner)).headers.get("location")).toBe("/acme/safe/issues");
  for (const who of [outsider, undefined]) {
    const old = await get("/acme/vault/issues", who);
    const never = await get("/acme/neverthere/issues", who);
    expect({ status: old.status, text: old.text.replaceAll("vault", "X") }).toEqual({ status: never.status, text: never.text.replaceAll("neverthere", "X") });
    expect([401, 404]).toContain(old.status);
  }
});

test("a form posted at the old name answers 308 to the new one; following it, the form acts there", async () => {
  const page = await get("/acme/gadgets", owner);
  // Not watching yet: the button's form would turn watching on.
  expect(page.text).toContain('name="watch" value="1"');
  const csrf = csrfOf(page.text);
  const r = await postForm(server, "/acme/widgets/watch", { csrf, watch: "1" }, { cookie: owner.cookie });
  expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 308, location: "/acme/gadgets/watch" });
  // What a browser does with it: the same method and form at the new address.
  const followed = await fetch(server.url + "/acme/widgets/watch", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: owner.cookie!, origin: server.url },
    body: new URLSearchParams({ csrf, watch: "1" }).toString(),
  });
  expect(followed.status).toBe(200);
  expect(followed.url).toBe(`${server.url}/acme/gadgets`);
  expect(await followed.text()).toContain('name="watch" value="0"');
  // Someone who may not see a private repository gets the missing answer, as on a page.
  const outsiderCsrf = csrfOf((await get("/", outsider)).text);
  const hidden = await postForm(server, "/acme/vault/watch", { csrf: outsiderCsrf, watch: "1" }, { cookie: outsider.cookie });
  const never = await postForm(server, "/acme/neverthere/watch", { csrf: outsiderCsrf, watch: "1" }, { cookie: outsider.cookie });
  expect({ status: hidden.status, text: hidden.text.replaceAll("vault", "X") }).toEqual({
    status: never.status,
    text: never.text.replaceAll("neverthere", "X"),
  });
  expect(hidden.status).toBe(404);
});

test("the API answers for the current name alone", async () => {
  expect((await api.get("/v1/orgs/acme/repos/widgets")).status).toBe(404);
  expect((await api.get("/v1/orgs/acme/repos/gadgets")).status).toBe(200);
});

test("a repository made at the old name takes it: no redirect any more", async () => {
  expect((await api.post("/v1/orgs/acme/repos", { name: "old", public: true })).status).toBe(201);
  expect((await api.patch("/v1/orgs/acme/repos/old", { name: "new" })).status).toBe(200);
  expect((await get("/acme/old", owner)).status).toBe(301);
  expect((await api.post("/v1/orgs/acme/repos", { name: "old", public: true })).status).toBe(201);
  expect((await get("/acme/old", owner)).status).toBe(200);
  expect((await api.delete("/v1/orgs/acme/repos/new")).status).toBe(204);
  expect((await get("/acme/new", owner)).status).toBe(404);
});
