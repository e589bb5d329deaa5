// The repository settings pages General and Protections over HTTP (issue 33): who sees them (the
// API's answers: 403 for a member, the masked 404 for an outsider, 401 anonymous), every form is
// the API's call (rename, about, visibility, default branch, protections, delete), and every
// refusal (400 name, 409 taken, 422 approvals, 422 confirmation) is the page again with its reason
// in the form's own box, its status and what was typed, nothing changed; with billing, making a
// repository private past the plan is 402 in the visibility box.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, person, type Person } from "../../../helpers/api.ts";
import { startServer, type RunningServer } from "../../../helpers/server.ts";
import { csrfOf, getPage, postForm, textOf } from "../../../helpers/web.ts";
import { startStandin, type Standin } from "../../../helpers/stripe-standin.ts";

let server: RunningServer;
let owner: Person;
let member: Person;
let outsider: Person;
let api: ReturnType<typeof caller>;

const get = (path: string, who?: Person) => getPage(server, path, who?.cookie);
/** Posts a form as the signed-in person's browser would, with the token of their session. */
async function post(path: string, who: Person, fields: Record<string, string>) {
  const csrf = csrfOf((await get("/", who)).text);
  return postForm(server, path, { ...fields, csrf }, { cookie: who.cookie });
}
/** The reason shown in the page's alert. */
const alertOf = (text: string) => textOf(/role="alert">([^<]*)</.exec(text)?.[1] ?? "");

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "acme", "owner@acme.example", "owner");
  member = await person(server, "acme", "member@acme.example", "member");
  outsider = await person(server, "rival", "someone@rival.example", "owner");
  api = caller(server, owner);
  for (const name of ["app", "taken"]) expect((await api.post("/v1/orgs/acme/repos", { name })).status).toBe(201);
  expect(
    (await api.post("/v1/orgs/acme/repos/app/commits", { branch: "main", message: "first", operations: [{ op: "put", path: "README.md", content: "hi\n" }] }))
      .status,
  ).toBe(201);
  expect(
    (
      await api.post("/v1/orgs/acme/repos/app/commits", {
        branch: "topic",
        base: "main",
        message: "t",
        operations: [{ op: "put", path: "t.txt", content: "t\n" }],
      })
    ).status,
  ).toBe(201);
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

describe("who sees the pages", () => {
  for (const path of ["/acme/app/settings", "/acme/app/settings/protections"]) {
    test(path, async () => {
      const api403 = (await caller(server, member).get("/v1/orgs/acme/repos/app/protections")).status;
      expect({
        owner: (await get(path, owner)).status,
        member: (await get(path, member)).status,
        outsider: (await get(path, outsider)).status,
        anonymous: (await get(path)).status,
      }).toEqual({ owner: 200, member: api403, outsider: 404, anonymous: 401 });
    });
  }

  test("the sub-nav names every settings tab the owner may open, the current one marked; Settings is the layout's current tab", async () => {
    const { text } = await get("/acme/app/settings/protections", owner);
    const sub = /<nav class="subnav"[^>]*>(.*?)<\/nav>/s.exec(text)?.[1] ?? "";
    expect(textOf(sub.replace(/<\/a>/g, "|"))).toBe("General|Access|Protections|Webhooks|Secrets|Variables|");
    expect(sub).toContain('<a href="/acme/app/settings/protections" aria-current="page">');
    expect(text).toMatch(/href="\/acme\/app\/settings" aria-current="page">(<svg[^>]*>.*?<\/svg> )?Settings/);
    // The other settings pages draw the same frame.
    for (const p of ["access", "webhooks", "secrets", "variables"]) expect((await get(`/acme/app/settings/${p}`, owner)).text).toContain('class="subnav"');
  });

  test("the default branch is a select of the existing branches", async () => {
    const { text } = await get("/acme/app/settings", owner);
    const select = /<select id="default-branch" name="default_branch">(.*?)<\/select>/s.exec(text)?.[1] ?? "";
    expect(select).toBe('<option value="main" selected>main</option><option value="topic">topic</option>');
  });
});

describe("forms", () => {
  test("refusals come back in the form's own box, with their status and what was typed", async () => {
    const bad = await post("/acme/app/settings/name", owner, { name: "no spaces" });
    expect({ status: bad.status, alert: alertOf(bad.text) }).toEqual({ status: 400, alert: expect.stringContaining("invalid repository name") });
    expect(bad.text).toContain('value="no spaces"');
    const taken = await post("/acme/app/settings/name", owner, { name: "Taken" });
    expect({ status: taken.status, alert: alertOf(taken.text) }).toEqual({ status: 409, alert: "repository acme/Taken already exists" });
    const home = await post("/acme/app/settings/about", owner, { description: "d", homepage: "javascript:alert(1)" });
    expect({ status: home.status, alert: alertOf(home.text) }).toEqual({ status: 400, alert: "homepage must be an absolute http:// or https:// URL" });
    const branch = await post("/acme/app/settings/default-branch", owner, { default_branch: "bad..name" });
    expect(branch.status).toBe(400);
    expect((await api.get("/v1/orgs/acme/repos/app")).body).toMatchObject({ name: "app", description: null, default_branch: "main" });
  });

  test("a member posting an admin form gets the API's refusal page, not the form", async () => {
    const r = await post("/acme/app/settings/visibility", member, { visibility: "public" });
    expect(r.status).toBe(403);
    expect(r.text).not.toContain('name="visibility"');
    expect((await api.get("/v1/orgs/acme/repos/app")).body.public).toBe(false);
  });

  test("about, visibility and default branch save through the API", async () => {
    expect(
      (await post("/acme/app/settings/about", owner, { description: "line one\r\nline two", homepage: "https://example.com/x" })).headers.get("location"),
    ).toBe("/acme/app/settings?done=saved");
    expect((await post("/acme/app/settings/visibility", owner, { visibility: "public" })).status).toBe(303);
    expect((await post("/acme/app/settings/default-branch", owner, { default_branch: "topic" })).status).toBe(303);
    expect((await api.get("/v1/orgs/acme/repos/app")).body).toMatchObject({
      description: "line one\nline two",
      homepage: "https://example.com/x",
      public: true,
      default_branch: "topic",
    });
    expect((await get("/acme/app/settings?done=saved", owner)).text).toContain('role="status">Saved.');
  });

  test("protections: every field saved; 422 approvals is the form again; edit and delete", async () => {
    const over = await post("/acme/app/settings/protections", owner, { pattern: "release/*", required_approvals: "11", required_checks: "test" });
    expect({ status: over.status, alert: alertOf(over.text) }).toEqual({ status: 422, alert: "required_approvals must be 0-10" });
    expect(over.text).toContain('value="release/*"');
    const ok = await post("/acme/app/settings/protections", owner, {
      pattern: "release/*",
      require_change: "1",
      allow_deletion: "1",
      required_approvals: "2",
      required_checks: "test\r\nlint, build / unit",
    });
    expect(ok.headers.get("location")).toBe("/acme/app/settings/protections?done=saved");
    expect((await api.get("/v1/orgs/acme/repos/app/protections")).body.protections).toEqual([
      {
        pattern: "release/*",
        allow_force_push: false,
        allow_deletion: true,
        require_change: true,
        required_checks: ["test", "lint", "build / unit"],
        required_approvals: 2,
        dismiss_stale_approvals: false,
      },
    ]);
    const page = (await get("/acme/app/settings/protections", owner)).text;
    expect(textOf(page)).toContain("changes only · no force pushes · deletion allowed · 2 approvals · approvals kept on new commits");
    expect((await post("/acme/app/settings/protections/delete", owner, { pattern: "release/*" })).status).toBe(303);
    expect((await api.get("/v1/orgs/acme/repos/app/protections")).body.protections).toEqual([]);
    // Deleting what is not there: the API's 404, as the error page.
    expect((await post("/acme/app/settings/protections/delete", owner, { pattern: "release/*" })).status).toBe(404);
  });

  test("rename goes to the new settings page, and the old one redirects there", async () => {
    const r = await post("/acme/app/settings/name", owner, { name: "app2" });
    expect(r.headers.get("location")).toBe("/acme/app2/settings?done=renamed");
    expect((await get("/acme/app/settings?x=1", owner)).headers.get("location")).toBe("/acme/app2/settings?x=1");
  });

  test("delete: a wrong confirmation deletes nothing (422, the reason in the danger zone); the right one deletes", async () => {
    const wrong = await post("/acme/app2/settings/delete", owner, { confirm: "acme/app" });
    expect({ status: wrong.status, alert: alertOf(wrong.text) }).toEqual({ status: 422, alert: "type acme/app2 to confirm the deletion; nothing was deleted" });
    expect((await api.get("/v1/orgs/acme/repos/app2")).status).toBe(200);
    // A member typing it right still gets the API's refusal.
    expect((await post("/acme/app2/settings/delete", member, { confirm: "acme/app2" })).status).toBe(403);
    const right = await post("/acme/app2/settings/delete", owner, { confirm: "acme/app2" });
    expect({ status: right.status, location: right.headers.get("location") }).toEqual({ status: 303, location: "/acme" });
    expect((await api.get("/v1/orgs/acme/repos/app2")).status).toBe(404);
    expect((await get("/acme/app/settings", owner)).status).toBe(404);
  });
});

describe("with billing", () => {
  let billed: RunningServer;
  let standin: Standin;
  let olga: Person;
  beforeAll(async () => {
    standin = startStandin({ priceCents: 900 });
    billed = await startServer({
      env: {
        SVC_BILLING_PROVIDER: "stripe",
        SVC_STRIPE_SECRET_KEY: "sk_test_standin",
        SVC_STRIPE_WEBHOOK_SECRET: "whsec_test_settings",
        SVC_STRIPE_PRICE_ID: "price_seat",
        SVC_STRIPE_API_BASE: standin.url,
        SVC_BILLING_FREE_SEATS: "3",
      },
    });
    olga = await person(billed, "acme", "olga@acme.example", "owner");
    expect((await caller(billed, olga).post("/v1/orgs/acme/repos", { name: "open", public: true })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await billed?.[Symbol.asyncDispose]();
    await standin?.stop();
  });

  test("making a repository private past the plan is 402 in the visibility box, the choice kept, nothing changed", async () => {
    const csrf = csrfOf((await getPage(billed, "/", olga.cookie)).text);
    const r = await postForm(billed, "/acme/open/settings/visibility", { visibility: "private", csrf }, { cookie: olga.cookie });
    expect({ status: r.status, alert: alertOf(r.text) }).toEqual({
      status: 402,
      alert: expect.stringMatching(/^quota: private repositories need a subscription/),
    });
    const visibility = /aria-labelledby="visibility-h">(.*?)<\/section>/s.exec(r.text)?.[1] ?? "";
    expect(visibility).toContain('role="alert"');
    expect(visibility).toContain('value="private" checked');
    expect((await caller(billed, olga).get("/v1/orgs/acme/repos/open")).body.public).toBe(true);
  });
});
