// Settings → Secrets and Variables over HTTP against the real server (issue 29 part E): the repo and
// org pages answer who may see them exactly as the API's lists do (repo admins for secrets, writers
// read variables, org admins only with the masked 404 at org level), the forms save and delete
// through the same services as the API, refuse cross-site posts, come back with the service's
// message on a refusal, and a secret's value is in no page the test ever receives.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, person, type Person } from "../../../helpers/api.ts";
import { startServer, type RunningServer } from "../../../helpers/server.ts";

const VALUE = "pg-Secret-Value-4d2a91f0";
const NEW_VALUE = "rotated-Secret-77c0e1b5";
const ORG_VALUE = "org-Secret-Value-0b8e5a13";

let server: RunningServer;
let owner: Person;
let admin: Person;
let member: Person;
let viewer: Person;
let outsider: Person;
/** Every page body the test received: no secret value may be in any of them. */
const seen: string[] = [];

async function get(path: string, who?: { cookie: string }) {
  const res = await fetch(server.url + path, { headers: who ? { cookie: who.cookie } : {}, redirect: "manual" });
  const text = await res.text();
  seen.push(text);
  return { status: res.status, headers: res.headers, text };
}

async function csrfOf(who: { cookie: string }): Promise<string> {
  const m = /name="csrf" value="([^"]+)"/.exec((await get("/", who)).text);
  if (!m) throw new Error("no csrf field");
  return m[1]!;
}

/** Posts a form as our page would (the session's token and our Origin unless told otherwise); `fields` may repeat a name. */
async function post(path: string, who: { cookie: string }, fields: [string, string][], o: { origin?: string; csrf?: string } = {}) {
  const body = new URLSearchParams([...fields, ["csrf", o.csrf ?? (await csrfOf(who))]]);
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { cookie: who.cookie, origin: o.origin ?? server.url, "content-type": "application/x-www-form-urlencoded" },
    body: body.toString(),
    redirect: "manual",
  });
  const text = await res.text();
  seen.push(text);
  return { status: res.status, location: res.headers.get("location"), text };
}

beforeAll(async () => {
  server = await startServer();
  owner = await person(server, "acme", "owner@acme.example", "owner");
  admin = await person(server, "acme", "admin@acme.example", "admin");
  member = await person(server, "acme", "member@acme.example", "member");
  viewer = await person(server, "acme", "viewer@acme.example", "viewer");
  outsider = await person(server, "rival", "someone@rival.example", "owner");
  const api = caller(server, owner);
  for (const name of ["app", "lib", "other"]) expect((await api.post("/v1/orgs/acme/repos", { name })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

describe("repository secrets", () => {
  test("an admin adds a secret with the form: the page lists its name, never its value, and the field is write-only", async () => {
    const before = await get("/acme/app/settings/secrets", admin);
    expect(before.status).toBe(200);
    expect(before.text).toContain("No secrets yet.");
    expect(before.text).toContain(`<textarea name="value" rows="3" required autocomplete="off" spellcheck="false"></textarea>`);
    expect(before.text).toContain(`href="/acme/app/settings/secrets" aria-current="page">Secrets</a>`);

    const r = await post("/acme/app/settings/secrets", admin, [
      ["name", "DEPLOY_KEY"],
      ["value", VALUE],
    ]);
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: "/acme/app/settings/secrets?done=created" });
    const list = await caller(server, owner).get("/v1/orgs/acme/repos/app/secrets");
    expect(list.body.secrets.map((s: any) => s.name)).toEqual(["DEPLOY_KEY"]);

    const after = await get("/acme/app/settings/secrets?done=created", admin);
    expect(after.text).toContain("<td><code>DEPLOY_KEY</code></td>");
    expect(after.text).toContain(`role="status">Created.</p>`);
    // The per-row form replaces the value: empty, hidden name, never filled in.
    expect(after.text).toContain(`<input type="hidden" name="name" value="DEPLOY_KEY">`);
    expect(after.text).not.toMatch(/<textarea name="value"[^>]*>[^<]/);

    // Replacing it: "updated", and the value the jobs get is the new one (the API never shows it).
    const again = await post("/acme/app/settings/secrets", admin, [
      ["name", "DEPLOY_KEY"],
      ["value", `${NEW_VALUE}\r\nline two`],
    ]);
    expect(again.location).toBe("/acme/app/settings/secrets?done=updated");
    expect((await get("/acme/app/settings/secrets?done=updated", admin)).text).toContain("Updated.");
  });

  test("a refused post is the form again with the service's message, the name kept and the value gone", async () => {
    const lower = await post("/acme/app/settings/secrets", admin, [
      ["name", "deploy_key"],
      ["value", VALUE],
    ]);
    expect(lower.status).toBe(422);
    expect(lower.text).toContain("invalid secret name &quot;deploy_key&quot; (names are upper case)");
    expect(lower.text).toContain(`name="name" required maxlength="100" autocomplete="off" spellcheck="false" value="deploy_key"`);
    const reserved = await post("/acme/app/settings/secrets", admin, [
      ["name", "GITHUB_TOKEN"],
      ["value", VALUE],
    ]);
    expect(reserved.status).toBe(422);
    expect(reserved.text).toContain("may not start with GITHUB_ or SVC_");
    const empty = await post("/acme/app/settings/secrets", admin, [["name", "EMPTY"]]);
    expect(empty.status).toBe(422);
    expect(empty.text).toContain("the value is empty");
  });

  test("org secrets reaching the repository are listed by name; a repository secret of the same name is said to replace it", async () => {
    const api = caller(server, owner);
    expect((await api.put("/v1/orgs/acme/secrets/DEPLOY_KEY", { value: ORG_VALUE })).status).toBe(201);
    expect((await api.put("/v1/orgs/acme/secrets/LIB_ONLY", { value: ORG_VALUE, repos: ["lib"] })).status).toBe(201);
    const app = await get("/acme/app/settings/secrets", admin);
    expect(app.text).toContain('<li><code>DEPLOY_KEY</code> <span class="muted">(replaced here by the repository secret)</span></li>');
    expect(app.text).not.toContain("LIB_ONLY");
    expect((await get("/acme/lib/settings/secrets", admin)).text).toContain("<li><code>LIB_ONLY</code></li>");
  });

  test("who sees the secrets page answers as the API's list; members' posts are refused with the API's 403", async () => {
    for (const who of [member, viewer, outsider]) {
      const api = await caller(server, who).get("/v1/orgs/acme/repos/app/secrets");
      expect((await get("/acme/app/settings/secrets", who)).status).toBe(api.status);
    }
    expect((await get("/acme/app/settings/secrets", member)).status).toBe(403);
    expect((await get("/acme/app/settings/secrets", outsider)).status).toBe(404);
    expect((await get("/acme/app/settings/secrets")).status).toBe(401);
    const refused = await post("/acme/app/settings/secrets", member, [
      ["name", "SNEAKY"],
      ["value", VALUE],
    ]);
    expect(refused.status).toBe(403);
    expect((await post("/acme/app/settings/secrets/DEPLOY_KEY/delete", member, [])).status).toBe(403);
    // The settings tabs offer members only what they may open.
    const vars = await get("/acme/app/settings/variables", member);
    expect(vars.text).not.toContain(">Secrets</a>");
    expect(vars.text).not.toContain(">Webhooks</a>");
  });

  test("a cross-site post or a foreign token is refused before anything is saved", async () => {
    const fields: [string, string][] = [
      ["name", "FORGED"],
      ["value", VALUE],
    ];
    expect((await post("/acme/app/settings/secrets", admin, fields, { origin: "https://evil.example" })).status).toBe(403);
    expect((await post("/acme/app/settings/secrets", admin, fields, { csrf: await csrfOf(owner) })).status).toBe(403);
    const names = (await caller(server, owner).get("/v1/orgs/acme/repos/app/secrets")).body.secrets.map((s: any) => s.name);
    expect(names).not.toContain("FORGED");
  });

  test("deleting: 303 with the notice; an unknown name is the 404 page", async () => {
    const r = await post("/acme/app/settings/secrets/DEPLOY_KEY/delete", admin, []);
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: "/acme/app/settings/secrets?done=deleted" });
    expect((await caller(server, owner).get("/v1/orgs/acme/repos/app/secrets")).body.secrets).toEqual([]);
    expect((await post("/acme/app/settings/secrets/DEPLOY_KEY/delete", admin, [])).status).toBe(404);
  });
});

describe("repository variables", () => {
  test("admins save variables (CRLF from the textarea stored as LF); writers read the values without forms; readers get the API's 403", async () => {
    const r = await post("/acme/app/settings/variables", admin, [
      ["name", "REGION"],
      ["value", "eu-west<1>\r\nsecond"],
    ]);
    expect(r.location).toBe("/acme/app/settings/variables?done=created");
    expect((await caller(server, owner).get("/v1/orgs/acme/repos/app/variables/REGION")).body.value).toBe("eu-west<1>\nsecond");
    const page = await get("/acme/app/settings/variables", member);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<td><code>REGION</code></td><td><code class="data">eu-west&lt;1&gt;\nsecond</code></td>`);
    expect(page.text).not.toContain("Add or replace a variable");
    expect(page.text).not.toContain("/delete");
    const forAdmin = await get("/acme/app/settings/variables", admin);
    expect(forAdmin.text).toContain("Add or replace a variable");
    expect(forAdmin.text).toContain(`spellcheck="false">eu-west&lt;1&gt;\nsecond</textarea>`);
    expect((await get("/acme/app/settings/variables", viewer)).status).toBe(403);
    expect((await get("/acme/app/settings/variables", outsider)).status).toBe(404);
    expect((await post("/acme/app/settings/variables/REGION/delete", admin, [])).location).toBe("/acme/app/settings/variables?done=deleted");
  });
});

describe("organization secrets and variables", () => {
  test("org admins see the tabs and the pages; members, viewers and outsiders the masked 404", async () => {
    const page = await get("/settings/orgs/acme/secrets", admin);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="/settings/orgs/acme/secrets" aria-current="page">Secrets</a>`);
    expect(page.text).toContain("<td><code>DEPLOY_KEY</code></td><td>all repositories</td>");
    expect(page.text).toContain("<td><code>LIB_ONLY</code></td><td>lib</td>");
    expect(page.text).toContain(`<option value="other">other</option>`);
    for (const path of ["/settings/orgs/acme/secrets", "/settings/orgs/acme/variables"]) {
      for (const who of [member, viewer, outsider]) expect({ path, status: (await get(path, who)).status }).toEqual({ path, status: 404 });
      expect((await get(path)).status).toBe((await caller(server).get("/v1/orgs/acme/secrets")).status);
    }
    expect((await get("/settings/orgs/acme/members", member)).text).not.toContain(">Secrets</a>");
    expect(
      (
        await post("/settings/orgs/acme/secrets", member, [
          ["name", "X"],
          ["value", VALUE],
        ])
      ).status,
    ).toBe(404);
  });

  test("the org secret form: all repositories, or the selected ones; none selected is the service's 422", async () => {
    const sel = await post("/settings/orgs/acme/secrets", admin, [
      ["name", "SHARED"],
      ["value", VALUE],
      ["access", "selected"],
      ["repos", "app"],
      ["repos", "other"],
    ]);
    expect({ status: sel.status, location: sel.location }).toEqual({ status: 303, location: "/settings/orgs/acme/secrets?done=created" });
    const api = caller(server, owner);
    const shared = () => api.get("/v1/orgs/acme/secrets").then((r) => r.body.secrets.find((s: any) => s.name === "SHARED"));
    expect((await shared()).repos).toEqual(["app", "other"]);
    const page = await get("/settings/orgs/acme/secrets", admin);
    expect(page.text).toContain("<td><code>SHARED</code></td><td>app, other</td>");
    // The row's own form keeps the reach: its repositories are selected.
    expect(page.text).toContain(`<option value="app" selected>app</option>`);
    expect((await get("/acme/other/settings/secrets", admin)).text).toContain("<li><code>SHARED</code></li>");

    const none = await post("/settings/orgs/acme/secrets", admin, [
      ["name", "NOWHERE"],
      ["value", VALUE],
      ["access", "selected"],
    ]);
    expect(none.status).toBe(422);
    expect(none.text).toContain("repos must name at least one repository");
    expect(none.text).toContain(`value="NOWHERE"`);
    expect(none.text).toContain(`<input type="radio" name="access" value="selected" checked>`);

    const all = await post("/settings/orgs/acme/secrets", admin, [
      ["name", "SHARED"],
      ["value", NEW_VALUE],
      ["access", "all"],
      ["repos", "app"],
    ]);
    expect(all.location).toBe("/settings/orgs/acme/secrets?done=updated");
    expect((await shared()).repos).toBeNull();
    expect((await post("/settings/orgs/acme/secrets/SHARED/delete", admin, [])).location).toBe("/settings/orgs/acme/secrets?done=deleted");
    expect(await shared()).toBeUndefined();
  });

  test("org variables show their values and reach", async () => {
    const r = await post("/settings/orgs/acme/variables", owner, [
      ["name", "TIER"],
      ["value", "gold"],
      ["access", "selected"],
      ["repos", "lib"],
    ]);
    expect(r.location).toBe("/settings/orgs/acme/variables?done=created");
    const page = await get("/settings/orgs/acme/variables", owner);
    expect(page.text).toContain(`<td><code>TIER</code></td><td><code class="data">gold</code></td><td>lib</td>`);
  });
});

test("no page or form answer the test received holds a secret's value", () => {
  expect(seen.length).toBeGreaterThan(30);
  for (const v of [VALUE, NEW_VALUE, ORG_VALUE]) expect(seen.filter((t) => t.includes(v)).length).toBe(0);
});
