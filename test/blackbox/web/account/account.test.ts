// The account pages over real HTTP: sign-up and the mailed links' pages (nothing spent by opening
// them), settings forms with their CSRF refusals, the sign-in form for anonymous callers (401),
// escaping of hostile profile fields, a token's secret shown once, and a person's page that never
// names a private repository to someone who may not see it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { client, createUser, login, type RunningServer, startServer } from "../../../helpers/server.ts";
import { commitFiles, gitSandbox, initRepo, mintTokenWithId, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { waitForLink } from "../../../helpers/mail-capture.ts";

let server: RunningServer;
let mailDir: string;
let g: GitSandbox;
let ada: { handle: string; email: string; password: string; cookie: string; token: string };
let outsider: { cookie: string; handle: string };

const HOSTILE = `<script>alert("x")</script>`;

/** A page: status, headers and text. */
async function get(path: string, cookie?: string) {
  const res = await fetch(server.url + path, { headers: cookie ? { cookie } : {}, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Posts a form as a browser would: urlencoded (repeated fields allowed), with our Origin unless told otherwise. */
async function postForm(path: string, fields: Record<string, string | string[]>, o: { cookie?: string; origin?: string | null } = {}) {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (o.cookie) headers.cookie = o.cookie;
  if (o.origin !== null) headers.origin = o.origin ?? server.url;
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
  const res = await fetch(server.url + path, { method: "POST", headers, body: body.toString(), redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The session's form token, read from a page. */
async function csrf(cookie: string): Promise<string> {
  const m = /name="csrf" value="([^"]+)"/.exec((await get("/settings/profile", cookie)).text);
  if (!m) throw new Error("no csrf field");
  return m[1]!;
}

/** The `name=value` of a Set-Cookie header for `name`, or null. */
function setCookie(headers: Headers, name: string): string | null {
  const all = headers.getSetCookie();
  const c = all.find((x) => x.startsWith(`${name}=`));
  return c ? c.split(";")[0]! : null;
}

/** An ed25519 public key line (any 32 bytes are a well-formed key for registration). */
function ed25519Key(comment = "test"): string {
  const type = Buffer.from("ssh-ed25519");
  const key = randomBytes(32);
  const len = (b: Buffer) => Buffer.from([0, 0, 0, b.length]);
  return `ssh-ed25519 ${Buffer.concat([len(type), type, len(key), key]).toString("base64")} ${comment}`;
}

beforeAll(async () => {
  mailDir = mkdtempSync(join(tmpdir(), "svc-web-account-mail-"));
  server = await startServer({ env: { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir } });
  g = gitSandbox("svc-web-account-");
  const u = await createUser(server, { org: "acme", handle: "ada", email: "ada@example.com", name: "Ada" });
  const cookie = await login(server, u.email, u.password);
  const { token } = await mintTokenWithId(server, cookie, "ada", { scopes: ["repo:write"], label: "git" });
  ada = { handle: u.handle, email: u.email, password: u.password, cookie, token };
  const o = await createUser(server, { org: "otherco", handle: "olga", email: "olga@example.com" });
  outsider = { cookie: await login(server, o.email, o.password), handle: o.handle };
  const api = client(server, { token });
  for (const [name, pub] of [
    ["open-work", true],
    ["hidden-plans", false],
  ] as const)
    expect((await api.post("/v1/orgs/ada/repos", { name, public: pub })).status).toBe(201);
  const dir = await initRepo(g);
  await commitFiles(g, dir, { "README.md": "# hi\n" }, "first");
  await g.ok(["config", "user.email", "ada@example.com"], { cwd: dir });
  await commitFiles(g, dir, { "a.txt": "a\n" }, "second");
  await g.ok(["push", "-q", repoUrl(server, "ada", "open-work", token), "main"], { cwd: dir });
  await g.ok(["push", "-q", repoUrl(server, "ada", "hidden-plans", token), "main"], { cwd: dir });
}, 120_000);

afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
  rmSync(mailDir, { recursive: true, force: true });
});

describe("sign-up and the mailed links", () => {
  test("sign up → check your mail → the confirmation page spends nothing → its button confirms and signs in", async () => {
    const form = await get("/signup");
    expect(form.status).toBe(200);
    expect(form.text).toContain(`action="/signup"`);
    const r = await postForm("/signup", { email: "grace@example.com", name: "Grace", handle: "grace", password: "a long enough password" });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/signup/sent" });
    expect((await get("/signup/sent")).text).toContain("If this address can be used");
    const link = await waitForLink(mailDir, "grace@example.com", "svcv_");
    expect(link.url).toBe(`${server.url}/verify?token=${link.token}`);
    for (let i = 0; i < 2; i++) {
      const page = await get(`/verify?token=${link.token}`);
      expect({ status: page.status, referrer: page.headers.get("referrer-policy"), cache: page.headers.get("cache-control") }).toEqual({
        status: 200,
        referrer: "same-origin",
        cache: "no-store",
      });
      expect(page.text).toContain(`name="token" value="${link.token}"`);
    }
    const done = await postForm("/verify", { token: link.token });
    expect({ status: done.status, location: done.headers.get("location") }).toEqual({ status: 303, location: "/" });
    const cookie = setCookie(done.headers, "svc_session")!;
    expect((await client(server, { cookie }).get("/v1/auth/me")).body.handle).toBe("grace");
    const again = await postForm("/verify", { token: link.token });
    expect({ status: again.status, type: again.headers.get("content-type") }).toEqual({ status: 404, type: "text/html; charset=utf-8" });
    expect(again.text).toContain("this confirmation link is invalid or has expired");
  });

  test("a refused sign-up is the form again with the message, the values kept (escaped) and the service's status", async () => {
    const bad = await postForm("/signup", { email: "x@example.com", name: HOSTILE, handle: "Not A Handle!", password: "a long enough password" });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain(`role="alert"`);
    expect(bad.text).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(bad.text).not.toContain(HOSTILE);
    expect(bad.text).not.toContain("a long enough password");
    const taken = await postForm("/signup", { email: "y@example.com", name: "Y", handle: "ada", password: "a long enough password" });
    expect(taken.status).toBe(409);
    expect(taken.text).toContain("the handle ada is taken or reserved");
  });

  test("forgot password → the reset page → a short password is refused (link still live) → a good one signs in", async () => {
    const r = await postForm("/login/forgot", { email: ada.email });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/login/forgot?sent=1" });
    const link = await waitForLink(mailDir, ada.email, "svcrs_");
    expect(link.url).toBe(`${server.url}/reset-password?token=${link.token}`);
    expect((await get(`/reset-password?token=${link.token}`)).text).toContain(`name="new_password"`);
    const short = await postForm("/reset-password", { token: link.token, new_password: "short" });
    expect(short.status).toBe(400);
    expect(short.text).toContain("new_password must be at least 12 characters");
    const ok = await postForm("/reset-password", { token: link.token, new_password: ada.password });
    expect(ok.status).toBe(303);
    expect(setCookie(ok.headers, "svc_session")).not.toBeNull();
    ada.cookie = await login(server, ada.email, ada.password);
  });

  test("an invitation's page shows the offer; a refused acceptance keeps the form; acceptance signs in and opens the org", async () => {
    const owner = await createUser(server, { org: "inviteco", email: "boss@inviteco.example" });
    const bossCookie = await login(server, owner.email, owner.password);
    const inv = await client(server, { cookie: bossCookie }).post(
      "/v1/orgs/inviteco/invites",
      { email: "newbie@example.com", role: "member" },
      { origin: server.url },
    );
    expect(inv.status).toBe(201);
    const token = inv.body.invite_link as string;
    const page = await get(`/invite?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Join inviteco");
    expect(page.text).toContain("newbie@example.com");
    const short = await postForm("/invite", { token, name: "Newbie", password: "short" });
    expect(short.status).toBe(400);
    expect(short.text).toContain(`value="Newbie"`);
    const ok = await postForm("/invite", { token, name: "Newbie", password: "a long enough password" });
    expect({ status: ok.status, location: ok.headers.get("location") }).toEqual({ status: 303, location: "/inviteco" });
    const cookie = setCookie(ok.headers, "svc_session")!;
    expect((await client(server, { cookie }).get("/v1/auth/me")).body.orgs.map((o: { name: string }) => o.name)).toContain("inviteco");
    expect((await get(`/invite?token=${token}`)).status).toBe(404);
    expect((await get("/invite?token=svcinv_nonsense")).status).toBe(404);
  });
});

describe("settings need a person: 401 is the sign-in form, coming back afterwards", () => {
  test("every settings page, anonymous", async () => {
    for (const path of ["/settings/profile", "/settings/emails", "/settings/tokens", "/settings/keys", "/settings/emails/verify?token=svce_x"]) {
      const r = await get(path);
      expect({ path, status: r.status }).toEqual({ path, status: 401 });
      expect(r.text).toContain(`action="/login"`);
      expect(r.text).toContain(`name="next" value="${path}"`);
    }
    expect((await get("/settings")).headers.get("location")).toBe("/settings/profile");
  });

  test("a form posted without a session is the sign-in form too, and changes nothing", async () => {
    const r = await postForm("/settings/profile", { name: "Mallory" });
    expect(r.status).toBe(401);
    expect(r.text).toContain(`name="next" value="/settings/profile"`);
    expect((await client(server).get("/v1/users/ada")).body.name).toBe("Ada");
  });
});

describe("CSRF: a settings form needs our Origin and the session's own form token", () => {
  test("cross-site, missing and another session's token are refused (403) and nothing changes", async () => {
    const token = await csrf(ada.cookie);
    const theirs = await csrf(outsider.cookie);
    const cases: [string, string, Record<string, string | string[]>, string | null][] = [
      ["profile, cross-site", "/settings/profile", { csrf: token, name: "Pwned" }, "https://evil.example"],
      ["profile, no Origin", "/settings/profile", { csrf: token, name: "Pwned" }, null],
      ["profile, no token", "/settings/profile", { name: "Pwned" }, server.url],
      ["profile, another session's token", "/settings/profile", { csrf: theirs, name: "Pwned" }, server.url],
      ["token mint, no token", "/settings/tokens", { org: "ada", label: "stolen", scope: "repo:write" }, server.url],
      ["ssh key, cross-site", "/settings/keys", { csrf: token, label: "evil", public_key: ed25519Key() }, "https://evil.example"],
      ["address, no token", "/settings/emails", { email: "evil@example.com" }, server.url],
      ["follow, another session's token", "/settings/following", { csrf: theirs, handle: "olga", follow: "1" }, server.url],
    ];
    for (const [name, path, fields, origin] of cases) {
      const r = await postForm(path, fields, { cookie: ada.cookie, origin });
      expect({ name, status: r.status }).toEqual({ name, status: 403 });
    }
    const api = client(server, { cookie: ada.cookie });
    expect((await api.get("/v1/users/ada")).body.name).toBe("Ada");
    expect((await api.get("/v1/orgs/ada/tokens")).body.tokens.map((t: { label: string }) => t.label)).not.toContain("stolen");
    expect((await api.get("/v1/orgs/ada/ssh-keys")).body.keys).toEqual([]);
    expect((await api.get("/v1/users/ada/emails")).body.emails).toHaveLength(1);
    expect((await client(server).get("/v1/users/olga/follow")).body.followers).toBe(0);
  });
});

describe("profile", () => {
  test("hostile profile fields are saved as text and shown escaped on the person's page", async () => {
    const token = await csrf(ada.cookie);
    const r = await postForm(
      "/settings/profile",
      {
        csrf: token,
        name: "Ada",
        display_name: HOSTILE,
        bio: `line one\n<img src=x onerror=alert(1)>`,
        pronouns: "she/her",
        company: `"><b>Co</b>`,
        location: "Earth",
        link_label_0: `<i>blog</i>`,
        link_url_0: "https://ada.example/?a=1&b=<2>",
      },
      { cookie: ada.cookie },
    );
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/settings/profile?done=profile" });
    const saved = await get("/settings/profile?done=profile", ada.cookie);
    expect(saved.text).toContain("Profile saved.");
    for (const page of [(await get("/ada")).text, saved.text]) {
      expect(page).not.toContain(HOSTILE);
      expect(page).not.toContain("<img src=x");
      expect(page).not.toContain(`"><b>Co</b>`);
      expect(page).not.toContain("<i>blog</i>");
    }
    const user = (await get("/ada")).text;
    expect(user).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(user).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(user).toContain(`href="https://ada.example/?a=1&amp;b=&lt;2&gt;"`);
    expect(user).toContain("&lt;i&gt;blog&lt;/i&gt;");
  });

  test("a link that is not http(s) is refused (400): the form again with what was typed, escaped", async () => {
    const r = await postForm(
      "/settings/profile",
      { csrf: await csrf(ada.cookie), name: "Ada", link_label_0: "x", link_url_0: `javascript:alert("1")` },
      { cookie: ada.cookie },
    );
    expect(r.status).toBe(400);
    expect(r.text).toContain("links[0].url must be an absolute http:// or https:// URL");
    expect(r.text).toContain(`value="javascript:alert(&quot;1&quot;)"`);
    expect((await client(server).get("/v1/users/ada")).body.links[0].url).toBe("https://ada.example/?a=1&b=<2>");
  });

  test("pins: only public repositories; the page shows them", async () => {
    const r = await postForm("/settings/profile/pins", { csrf: await csrf(ada.cookie), pin: ["ada/open-work"] }, { cookie: ada.cookie });
    expect(r.status).toBe(303);
    expect((await get("/ada")).text).toContain(`<h2 id="pins-h">Pinned</h2>`);
    const bad = await postForm("/settings/profile/pins", { csrf: await csrf(ada.cookie), pin: ["ada/hidden-plans"] }, { cookie: ada.cookie });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("is private; only public repositories can be pinned");
  });
});

describe("a person's page and an org's page share /{name}", () => {
  test("a person's handle shows their page; an org name keeps the org page; an unknown name is a 404 page", async () => {
    const person = await get("/ada");
    expect(person.status).toBe(200);
    expect(person.text).toContain(`href="/ada?tab=followers"`);
    const org = await get("/acme");
    expect(org.status).toBe(200);
    expect(org.text).not.toContain("?tab=followers");
    const none = await get("/nobody-at-all");
    expect({ status: none.status, type: none.headers.get("content-type") }).toEqual({ status: 404, type: "text/html; charset=utf-8" });
  });

  test("the contribution graph: an SVG cell with a title per day of the year, after a push", async () => {
    const deadline = Date.now() + 20_000;
    while ((await client(server).get("/v1/users/ada/contributions")).body.total === 0) {
      if (Date.now() > deadline) throw new Error("no contributions recorded");
      await Bun.sleep(50);
    }
    const page = (await get("/ada")).text;
    const svg = /<svg class="graph"[\s\S]*?<\/svg>/.exec(page)![0];
    expect(svg.match(/<rect /g)!.length).toBe(365);
    expect(svg.match(/<title>/g)!.length).toBe(365);
    expect(svg).toMatch(/<title>\d+ commits? on \d{4}-\d{2}-\d{2}<\/title>/);
    expect(svg).toMatch(/class="g-cell g-l[1-4]"/);
    expect(svg).not.toContain("style=");
    expect(page).toContain(`aria-label="Contribution graph"`);
    const bad = await get("/ada?from=2020-13-01");
    expect(bad.status).toBe(400);
  });

  test("an outsider and an anonymous visitor never see a private repository named; the owner does", async () => {
    for (const cookie of [undefined, outsider.cookie]) {
      for (const path of ["/ada", "/ada?tab=repositories", "/ada?tab=followers", "/"]) {
        const r = await get(path, cookie);
        expect({ path, status: r.status }).toEqual({ path, status: 200 });
        expect(r.text).not.toContain("hidden-plans");
      }
    }
    expect((await get("/ada?tab=repositories", ada.cookie)).text).toContain(`href="/ada/hidden-plans"`);
  });

  test("follow and unfollow are forms; following yourself is refused; the counts follow", async () => {
    const token = await csrf(outsider.cookie);
    const r = await postForm("/settings/following", { csrf: token, handle: "ada", follow: "1" }, { cookie: outsider.cookie });
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/ada" });
    expect((await get("/ada", outsider.cookie)).text).toContain(">Unfollow</button>");
    expect((await get("/ada?tab=followers")).text).toContain(`href="/olga"`);
    await postForm("/settings/following", { csrf: token, handle: "ada", follow: "0" }, { cookie: outsider.cookie });
    expect((await client(server).get("/v1/users/ada/follow")).body.followers).toBe(0);
    const self = await postForm("/settings/following", { csrf: await csrf(ada.cookie), handle: "ada", follow: "1" }, { cookie: ada.cookie });
    expect(self.status).toBe(400);
    const anon = await postForm("/settings/following", { handle: "ada", follow: "1" });
    expect(anon.status).toBe(401);
    expect(anon.text).toContain(`name="next" value="/ada"`);
  });
});

describe("home", () => {
  test("recent activity names the pushes in the person's orgs; an outsider sees none of them", async () => {
    const home = (await get("/", ada.cookie)).text;
    expect(home).toContain("Recent activity");
    // Before the push's summary is written it says "pushed to", after it which branch (activity.test.ts).
    expect(home).toMatch(
      /<a href="\/ada">ada<\/a> (pushed to|created branch <a class="sha" href="\/ada\/open-work\/tree\/\w+">\w+<\/a> with 2 new commits in) <a href="\/ada\/open-work">ada\/open-work<\/a>/,
    );
    expect((await get("/", outsider.cookie)).text).not.toContain("ada/open-work");
  });
});

describe("tokens", () => {
  test("the secret is on the page after creation once, works, and is gone on reload", async () => {
    const r = await postForm(
      "/settings/tokens",
      { csrf: await csrf(ada.cookie), org: "ada", label: "laptop", scope: ["repo:read", "org:read"] },
      { cookie: ada.cookie },
    );
    expect({ status: r.status, location: r.headers.get("location") }).toEqual({ status: 303, location: "/settings/tokens" });
    const flash = r.headers.getSetCookie().find((c) => c.startsWith("svc_new_token="))!;
    expect(flash).toContain("HttpOnly");
    expect(flash).toContain("SameSite=Strict");
    expect(flash).toContain("Path=/settings/tokens");
    const pair = flash.split(";")[0]!;
    const secret = pair.slice("svc_new_token=".length);
    expect(secret).toMatch(/^svc_[a-z2-7]{16}_[a-z2-7]{32}$/);
    const first = await get("/settings/tokens", `${ada.cookie}; ${pair}`);
    expect(first.text).toContain(`value="${secret}"`);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.headers.getSetCookie().find((c) => c.startsWith("svc_new_token="))).toContain("Max-Age=0");
    expect((await client(server, { token: secret }).get("/v1/auth/me")).body.handle).toBe("ada");
    const reload = await get("/settings/tokens", ada.cookie);
    expect(reload.text).not.toContain(secret);
    expect(reload.text).toContain("laptop");
    // Someone else's browser session never shows it, even with the cookie.
    expect((await get("/settings/tokens", `${outsider.cookie}; ${pair}`)).text).not.toContain(secret);
  });

  test("an admin's settings list only their own tokens (the API lists the org's to them)", async () => {
    const bob = await createUser(server, { org: "acme", handle: "bob", email: "bob@example.com", role: "member" });
    const bobCookie = await login(server, bob.email, bob.password);
    await mintTokenWithId(server, bobCookie, "acme", { scopes: ["repo:read"], label: "bobs-token" });
    const adaCookie = await login(server, ada.email, ada.password);
    expect((await client(server, { cookie: adaCookie }).get("/v1/orgs/acme/tokens")).body.tokens.map((t: { label: string }) => t.label)).toContain(
      "bobs-token",
    );
    expect((await get("/settings/tokens", adaCookie)).text).not.toContain("bobs-token");
    expect((await get("/settings/tokens", bobCookie)).text).toContain("bobs-token");
  });

  test("a refused token is the form again with the service's message; revoking ends it", async () => {
    const none = await postForm("/settings/tokens", { csrf: await csrf(ada.cookie), org: "ada", label: "empty" }, { cookie: ada.cookie });
    expect(none.status).toBe(400);
    expect(none.text).toContain("scopes must be a non-empty array");
    const list = await client(server, { cookie: ada.cookie }).get("/v1/orgs/ada/tokens");
    const laptop = list.body.tokens.find((t: { label: string }) => t.label === "laptop");
    const r = await postForm("/settings/tokens/revoke", { csrf: await csrf(ada.cookie), org: "ada", id: laptop.id }, { cookie: ada.cookie });
    expect(r.headers.get("location")).toBe("/settings/tokens?done=revoked");
    expect((await get("/settings/tokens?done=revoked", ada.cookie)).text).not.toContain("laptop");
  });
});

describe("SSH keys", () => {
  test("add (fingerprint listed), a malformed key is refused with the form kept, remove", async () => {
    const key = ed25519Key("ada@laptop");
    const r = await postForm("/settings/keys", { csrf: await csrf(ada.cookie), label: "laptop key", public_key: key }, { cookie: ada.cookie });
    expect(r.headers.get("location")).toBe("/settings/keys?done=key-added");
    const page = (await get("/settings/keys", ada.cookie)).text;
    expect(page).toContain("laptop key");
    expect(page).toMatch(/SHA256:[A-Za-z0-9+/]{43}/);
    const bad = await postForm("/settings/keys", { csrf: await csrf(ada.cookie), label: "junk", public_key: "ssh-dss AAAA" }, { cookie: ada.cookie });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain(`value="junk"`);
    const dup = await postForm("/settings/keys", { csrf: await csrf(ada.cookie), label: "again", public_key: key }, { cookie: ada.cookie });
    expect(dup.status).toBe(409);
    const keys = (await client(server, { cookie: ada.cookie }).get("/v1/orgs/ada/ssh-keys")).body.keys;
    const rm = await postForm("/settings/keys/remove", { csrf: await csrf(ada.cookie), org: "ada", id: keys[0].id }, { cookie: ada.cookie });
    expect(rm.status).toBe(303);
    expect((await get("/settings/keys", ada.cookie)).text).not.toContain("laptop key");
  });
});

describe("email addresses", () => {
  test("add → the claim link's page → confirm → make it the sign-in address → remove the old one", async () => {
    const token = await csrf(ada.cookie);
    const r = await postForm("/settings/emails", { csrf: token, email: "ada.work@example.com" }, { cookie: ada.cookie });
    expect(r.headers.get("location")).toBe("/settings/emails?done=added");
    const early = await postForm("/settings/emails/primary", { csrf: token, address: "ada.work@example.com" }, { cookie: ada.cookie });
    expect(early.status).toBe(400);
    expect(early.text).toContain("confirm this address before making it your sign-in address");
    const first = await waitForLink(mailDir, "ada.work@example.com", "svce_");
    const resent = await postForm("/settings/emails/resend", { csrf: token, address: "ada.work@example.com" }, { cookie: ada.cookie });
    expect(resent.headers.get("location")).toBe("/settings/emails?done=sent");
    // The resend's mail: the one with a new claim link (the first link is spent by the resend).
    const link = await waitForLink(mailDir, "ada.work@example.com", "svce_", 1, 15_000, [first.token]);
    const page = await get(`/settings/emails/verify?token=${link.token}`, ada.cookie);
    expect(page.status).toBe(200);
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    const ok = await postForm("/settings/emails/verify", { csrf: token, token: link.token }, { cookie: ada.cookie });
    expect(ok.headers.get("location")).toBe("/settings/emails?done=verified");
    const primary = await postForm("/settings/emails/primary", { csrf: token, address: "ada.work@example.com" }, { cookie: ada.cookie });
    expect(primary.headers.get("location")).toBe("/settings/emails?done=primary");
    const cookie = await login(server, "ada.work@example.com", ada.password);
    const removed = await postForm("/settings/emails/remove", { csrf: await csrf(cookie), address: "ada@example.com" }, { cookie });
    expect(removed.headers.get("location")).toBe("/settings/emails?done=removed");
    const list = (await client(server, { cookie }).get("/v1/users/ada/emails")).body.emails;
    expect(list.map((e: { address: string; primary: boolean }) => [e.address, e.primary])).toEqual([["ada.work@example.com", true]]);
    const dupe = await postForm("/settings/emails", { csrf: await csrf(cookie), email: "olga@example.com" }, { cookie });
    expect(dupe.status).toBe(409);
    expect(dupe.text).toContain("this address is already in use");
  });
});

describe("every account page", () => {
  test("is HTML under the pages' CSP with no inline script, style or event handler", async () => {
    const pages: [string, string | undefined][] = [
      ["/", ada.cookie],
      ["/ada", undefined],
      ["/ada?tab=repositories", ada.cookie],
      ["/ada?tab=following", undefined],
      ["/settings/profile", ada.cookie],
      ["/settings/emails", ada.cookie],
      ["/settings/tokens", ada.cookie],
      ["/settings/keys", ada.cookie],
      ["/signup", undefined],
      ["/signup/sent", undefined],
      ["/login/forgot", undefined],
      ["/verify?token=svcv_x", undefined],
      ["/reset-password?token=svcrs_x", undefined],
      ["/settings/emails/verify?token=svce_x", ada.cookie],
    ];
    for (const [path, cookie] of pages) {
      const r = await get(path, cookie);
      expect({ path, status: r.status, type: r.headers.get("content-type") }).toEqual({ path, status: 200, type: "text/html; charset=utf-8" });
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(r.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(r.text).not.toMatch(/\sstyle=|<style/);
      expect(r.text).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i);
    }
  });
});

describe("site icon", () => {
  test("every page links an SVG icon; /favicon.ico answers it too", async () => {
    const page = (await get("/")).text;
    const href = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/.exec(page)![1]!;
    for (const path of [href, "/favicon.ico"]) {
      const r = await get(path);
      expect({ path, status: r.status, type: r.headers.get("content-type") }).toEqual({ path, status: 200, type: "image/svg+xml" });
      expect(r.text.startsWith("<svg")).toBe(true);
    }
  });
});
