// Self-service signup, confirmation and password recovery over real HTTP, with the capture mail
// transport (SPEC §3.2, §4.3, §5.4, §7 uniform answers, §8; DECISIONS §1, §2).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, createUser, login, readBody, sessionCookie, startServer, type RunningServer } from "../../helpers/server.ts";
import { expectError } from "../../helpers/api.ts";
import { disableAccount, mailsTo, queuedTo, waitForLink, waitForMails } from "../../helpers/mail-capture.ts";

const T = 30_000;
const PASSWORD = "a long enough password";

let server: RunningServer;
let mailDir: string;
let reg: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  mailDir = mkdtempSync(join(tmpdir(), "svc-signup-mail-"));
  server = await startServer({ env: { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir } });
  reg = await createUser(server, { org: "acme", email: "reg@example.com", name: "Reg Istered" });
}, T);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  rmSync(mailDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  text: string;
  body: any;
  contentType: string | null;
  /** The `svc_session=…` pair of a Set-Cookie header, or null. */
  cookie: string | null;
}

/** POST with a JSON body (and an optional session cookie), keeping the raw text for byte comparisons. */
async function post(srv: RunningServer, path: string, body: unknown, cookie?: string): Promise<Answer> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (cookie) headers.cookie = cookie;
  const res = await fetch(srv.url + path, { method: "POST", headers, body: JSON.stringify(body) });
  const { text, body: json } = await readBody(res);
  return { status: res.status, text, body: json, contentType: res.headers.get("content-type"), cookie: sessionCookie(res) };
}

/** POST a raw body with a content type (null: none), for bodies that are not JSON or absent. */
async function postRaw(srv: RunningServer, path: string, body: string | undefined, contentType: string | null = "application/json"): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (contentType) headers["content-type"] = contentType;
  const res = await fetch(srv.url + path, { method: "POST", headers, body });
  const { text, body: json } = await readBody(res);
  return { status: res.status, text, body: json, contentType: res.headers.get("content-type"), cookie: sessionCookie(res) };
}

/** The same request in every shape a body without a usable `field` can take (issue 10). */
async function shapelessBodies(path: string, field: string): Promise<Record<string, Answer>> {
  return {
    "field missing": await post(server, path, {}),
    "field null": await post(server, path, { [field]: null }),
    "body null": await postRaw(server, path, "null"),
    "body an array": await postRaw(server, path, "[]"),
    "body a string": await postRaw(server, path, JSON.stringify("x")),
    "no body": await postRaw(server, path, undefined, null),
    "empty JSON body": await postRaw(server, path, ""),
    "malformed JSON": await postRaw(server, path, `{"${field}":`),
    "plain text": await postRaw(server, path, "hello", "text/plain"),
  };
}

/** Same status, same content type, same bytes. */
function expectSameAnswer(answers: Record<string, Answer>, reference: Answer) {
  const shape = (a: Answer) => ({ status: a.status, contentType: a.contentType, text: a.text, cookie: a.cookie });
  expect(Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, shape(a)]))).toEqual(
    Object.fromEntries(Object.keys(answers).map((k) => [k, shape(reference)])),
  );
}

const signup = (srv: RunningServer, email: unknown, handle: unknown, extra: Record<string, unknown> = {}) =>
  post(srv, "/v1/auth/signup", { email, name: "Test Person", password: PASSWORD, handle, ...extra });

let sentinels = 0;
/**
 * Queues one mail after everything the test did and waits for it: the outbox delivers oldest first,
 * so a mail that had been queued earlier would be on disk by now too.
 */
async function flushMail(srv = server, dir = mailDir): Promise<void> {
  const n = ++sentinels;
  const r = await signup(srv, `sentinel-${n}@example.com`, `sentinel-${n}`);
  expect(r.status).toBe(202);
  await waitForMails(dir, `sentinel-${n}@example.com`);
}

/** The unconfirmed account a signup creates, with its confirmation link. */
async function signedUp(local: string): Promise<{ email: string; handle: string; token: string; url: string }> {
  const email = `${local}@example.com`;
  const r = await signup(server, email, local, { name: `${local} person` });
  expect(r.status).toBe(202);
  const link = await waitForLink(mailDir, email, "svcv_");
  return { email, handle: local, token: link.token, url: link.url };
}

async function forgot(email: string, count = 1): Promise<string> {
  const r = await post(server, "/v1/auth/forgot-password", { email });
  expect(r.status).toBe(202);
  return (await waitForLink(mailDir, email, "svcrs_", count)).token;
}

async function loginStatus(srv: RunningServer, email: string, password: string): Promise<number> {
  return (await post(srv, "/v1/auth/login", { email, password })).status;
}

const UNKNOWN_VERIFY = "svcv_" + "a".repeat(32);
const UNKNOWN_RESET = "svcrs_" + "b".repeat(32);

describe("POST /v1/auth/signup", () => {
  test(
    "a new, an already registered and a repeated address answer byte-identical 202s; only the new one is mailed",
    async () => {
      const fresh = await signup(server, "nia@example.com", "nia", { name: "Nia Okafor" });
      expect(fresh.status).toBe(202);
      expect(fresh.body).toEqual({ status: "accepted", detail: expect.any(String) });
      const registered = await signup(server, "reg@example.com", "reg-again", { password: "the intruder's password" });
      const repeated = await signup(server, "nia@example.com", "nia-again", { password: "a second password here" });
      const recased = await signup(server, "NIA@Example.COM", "nia-upper", { password: "a third password here" });
      expectSameAnswer({ registered, repeated, recased }, fresh);

      const link = await waitForLink(mailDir, "nia@example.com", "svcv_");
      expect(link.url).toBe(`${server.url}/verify?token=${link.token}`);
      expect(link.token).toMatch(/^svcv_[a-z2-7]{32}$/);
      // The HTML part carries the same link.
      expect(link.mail.html).toContain(`href="${server.url}/verify?token=${link.token}"`);
      await flushMail();
      expect({ files: mailsTo(mailDir, "nia@example.com").length, queued: queuedTo(server.dataDir, "nia@example.com") }).toEqual({ files: 1, queued: 1 });
      expect({ files: mailsTo(mailDir, "reg@example.com").length, queued: queuedTo(server.dataDir, "reg@example.com") }).toEqual({ files: 0, queued: 0 });

      // The registered accounts are untouched. The repeats took their handles as a new address
      // would have: a handle left free after a registered address, and taken after a new one, told
      // anyone which addresses have accounts (issue 25 row 11).
      expect(await loginStatus(server, "reg@example.com", reg.password)).toBe(200);
      expect(await loginStatus(server, "reg@example.com", "the intruder's password")).toBe(401);
      expect(await loginStatus(server, "nia@example.com", "a second password here")).toBe(401);
      expect(await loginStatus(server, "nia@example.com", PASSWORD)).toBe(200);
      for (const handle of ["reg-again", "nia-again", "nia-upper", "nia"]) {
        const again = await signup(server, `${handle}-other@example.com`, handle);
        expect({ handle, status: again.status, body: again.body }).toEqual({
          handle,
          status: 409,
          body: { error: `the handle ${handle} is taken or reserved` },
        });
        expect({ handle, profile: (await client(server).get(`/v1/users/${handle}`)).status }).toEqual({ handle, profile: 200 });
      }
    },
    T,
  );

  test(
    "400 for an invalid handle, address or name or an 11-character password; nothing is created or mailed",
    async () => {
      const cases: [string, Record<string, unknown>][] = [
        ["handle starting with a hyphen", { handle: "-lead" }],
        ["handle ending with a hyphen", { handle: "trail-" }],
        ["handle with a double hyphen", { handle: "dou--ble" }],
        ["handle with a space", { handle: "has space" }],
        ["handle with an underscore", { handle: "under_score" }],
        ["handle of 40 characters", { handle: "h".repeat(40) }],
        ["empty handle", { handle: "" }],
        ["address without @", { email: "not-an-address" }],
        ["address without a dot in the domain", { email: "someone@localhost" }],
        ["address with a space", { email: "some one@example.com" }],
        ["empty name", { name: "" }],
        ["blank name", { name: "   " }],
        ["name with a control character", { name: "Bell\u0007Person" }],
        ["name over 100 characters", { name: "n".repeat(101) }],
        ["password of 11 characters", { password: "x".repeat(11) }],
        ["missing handle", { handle: undefined }],
      ];
      const seen: Record<string, unknown> = {};
      for (const [i, [name, override]] of cases.entries()) {
        const body = { email: `bad-${i}@example.com`, name: "Test Person", password: PASSWORD, handle: `bad-${i}`, ...override };
        const r = await post(server, "/v1/auth/signup", body);
        seen[name] = { status: r.status, keys: Object.keys(r.body ?? {}) };
      }
      expect(seen).toEqual(Object.fromEntries(cases.map(([n]) => [n, { status: 400, keys: ["error"] }])));
      await flushMail();
      for (const i of cases.keys()) expect({ i, queued: queuedTo(server.dataDir, `bad-${i}@example.com`) }).toEqual({ i, queued: 0 });
      // The 11-character password was refused before anything was written: its handle is still free,
      // and 12 characters are enough.
      const shortAt = cases.findIndex(([n]) => n === "password of 11 characters");
      const twelve = await signup(server, "pw-twelve@example.com", `bad-${shortAt}`, { password: "x".repeat(12) });
      expect(twelve.status).toBe(202);
      await waitForLink(mailDir, "pw-twelve@example.com", "svcv_");
    },
    T,
  );

  test(
    "409 for a taken or reserved handle, checked before anything is mailed",
    async () => {
      const cases: [string, string][] = [
        ["an org name", "acme"],
        ["an org name in another case", "ACME"],
        ["a person's handle", reg.handle],
        ["reserved: admin", "admin"],
        ["reserved: signup", "signup"],
        ["reserved: v1", "v1"],
      ];
      const seen: Record<string, unknown> = {};
      for (const [i, [name, handle]] of cases.entries()) {
        const r = await signup(server, `taken-${i}@example.com`, handle);
        seen[name] = { status: r.status, keys: Object.keys(r.body ?? {}) };
      }
      expect(seen).toEqual(Object.fromEntries(cases.map(([n]) => [n, { status: 409, keys: ["error"] }])));
      await flushMail();
      for (const i of cases.keys()) {
        expect({ i, queued: queuedTo(server.dataDir, `taken-${i}@example.com`) }).toEqual({ i, queued: 0 });
        expect(await loginStatus(server, `taken-${i}@example.com`, PASSWORD)).toBe(401);
      }
    },
    T,
  );

  test("rate limited (per address and global): the same 202, no mail, no account", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-signup-limited-"));
    const limited = await startServer({
      env: { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: dir, SVC_SIGNUP_LIMIT_PER_ADDRESS: "1", SVC_SIGNUP_LIMIT_GLOBAL: "2" },
    });
    try {
      const reference = await signup(server, "reference@example.com", "reference");
      const first = await signup(limited, "lim-a@example.com", "lim-a");
      const second = await signup(limited, "lim-b@example.com", "lim-b");
      const refused = await signup(limited, "lim-c@example.com", "lim-c");
      expectSameAnswer({ first, second, refused }, reference);
      await waitForMails(dir, "lim-a@example.com");
      await waitForMails(dir, "lim-b@example.com");
      expect(queuedTo(limited.dataDir, "lim-c@example.com")).toBe(0);
      expect(await loginStatus(limited, "lim-a@example.com", PASSWORD)).toBe(200);
      expect(await loginStatus(limited, "lim-c@example.com", PASSWORD)).toBe(401);

      // The same limits hold for the other mail-sending routes, per address.
      const fp = await createUser(limited, { org: "lim-org", email: "lim-fp@example.com" });
      const f1 = await post(limited, "/v1/auth/forgot-password", { email: fp.email });
      const f2 = await post(limited, "/v1/auth/forgot-password", { email: fp.email });
      expectSameAnswer({ f2 }, f1);
      expect(f1.status).toBe(202);
      await waitForMails(dir, fp.email);
      const r1 = await post(limited, "/v1/auth/resend-verification", { email: "lim-a@example.com" });
      const r2 = await post(limited, "/v1/auth/resend-verification", { email: "lim-a@example.com" });
      expectSameAnswer({ r2 }, r1);
      expect(r1.status).toBe(202);
      await waitForMails(dir, "lim-a@example.com", 2);
      expect({ reset: queuedTo(limited.dataDir, fp.email), verify: queuedTo(limited.dataDir, "lim-a@example.com") }).toEqual({ reset: 1, verify: 2 });
    } finally {
      await limited[Symbol.asyncDispose]();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("an unconfirmed account, then POST /v1/auth/verify", () => {
  let una: Awaited<ReturnType<typeof signedUp>>;
  let unaCookie: string;
  let account: any;
  beforeAll(async () => {
    una = await signedUp("una");
    // A public repository elsewhere, to read.
    const regCookie = await login(server, reg.email, reg.password);
    expect((await client(server, { cookie: regCookie }).post("/v1/orgs/acme/repos", { name: "open", public: true })).status).toBe(201);
  }, T);

  test(
    "signs in and reads, but cannot create an org or a repository in its own namespace (403)",
    async () => {
      const r = await post(server, "/v1/auth/login", { email: una.email, password: PASSWORD });
      expect(r.status).toBe(200);
      account = r.body;
      expect(account).toEqual({
        id: expect.any(String),
        email: una.email,
        name: "una person",
        handle: "una",
        created_at: expect.any(Number),
        orgs: [{ id: expect.any(String), name: "una", role: "owner" }],
      });
      unaCookie = r.cookie!;
      const c = client(server, { cookie: unaCookie });
      expect((await c.get("/v1/auth/me")).body).toEqual(account);
      expect(await c.get("/v1/orgs/una/repos")).toMatchObject({ status: 200, body: { repos: [] } });
      expect(await c.get("/v1/orgs/acme/repos/open")).toMatchObject({ status: 200, body: { org: "acme", name: "open", public: true } });
      expectError(await c.post("/v1/orgs", { name: "una-org" }), 403);
      expectError(await c.post("/v1/orgs/una/repos", { name: "first" }), 403);
      expect(await c.get("/v1/users/una/emails")).toMatchObject({ status: 200, body: { emails: [{ address: una.email, verified_at: null, primary: true }] } });
    },
    T,
  );

  test(
    "verify: 200 with the account body and a working session cookie; the org can then be created",
    async () => {
      const r = await post(server, "/v1/auth/verify", { token: una.token });
      expect(r.status).toBe(200);
      expect(r.body).toEqual(account);
      expect(r.cookie).toMatch(/^svc_session=.+/);
      const c = client(server, { cookie: r.cookie! });
      expect(await c.get("/v1/auth/me")).toMatchObject({ status: 200, body: account });
      expect(await c.post("/v1/orgs", { name: "una-org" })).toMatchObject({ status: 201, body: { name: "una-org", plan: "free" } });
      expect(await c.post("/v1/orgs/una/repos", { name: "first" })).toMatchObject({ status: 201, body: { org: "una", name: "first" } });
      const listed = await c.get("/v1/users/una/emails");
      expect(listed.body.emails).toEqual([
        { address: una.email, verified_at: expect.any(Number), private: expect.any(Boolean), primary: true, created_at: expect.any(Number) },
      ]);
      // The session that signed in before confirming is confirmed too.
      expect((await client(server, { cookie: unaCookie }).post("/v1/orgs", { name: "una-org-two" })).status).toBe(201);
    },
    T,
  );

  test(
    "the same link again, a malformed, an unknown and a reset token: identical 404s",
    async () => {
      const resetToken = await forgot(reg.email);
      const answers = {
        spent: await post(server, "/v1/auth/verify", { token: una.token }),
        malformed: await post(server, "/v1/auth/verify", { token: "svcv_short" }),
        garbage: await post(server, "/v1/auth/verify", { token: "not a token at all" }),
        empty: await post(server, "/v1/auth/verify", { token: "" }),
        "not a string": await post(server, "/v1/auth/verify", { token: 42 }),
        missing: await post(server, "/v1/auth/verify", {}),
        uppercased: await post(server, "/v1/auth/verify", { token: una.token.toUpperCase() }),
        unknown: await post(server, "/v1/auth/verify", { token: UNKNOWN_VERIFY }),
        "a reset token": await post(server, "/v1/auth/verify", { token: resetToken }),
      };
      expectError(answers.spent, 404);
      expectSameAnswer(answers, answers.spent);
    },
    T,
  );

  test(
    "a disabled account with a live link: 401, and no session",
    async () => {
      const dora = await signedUp("dora");
      disableAccount(server.dataDir, dora.email);
      const r = await post(server, "/v1/auth/verify", { token: dora.token });
      expectError(r, 401);
      expect(r.cookie).toBeNull();
    },
    T,
  );
});

describe("POST /v1/auth/resend-verification", () => {
  test(
    "identical 202s for a live unconfirmed, a confirmed, an unknown and a malformed address; a resend spends the previous link",
    async () => {
      const rex = await signedUp("rex");
      const regBefore = queuedTo(server.dataDir, reg.email);
      const answers = {
        unconfirmed: await post(server, "/v1/auth/resend-verification", { email: rex.email }),
        confirmed: await post(server, "/v1/auth/resend-verification", { email: reg.email }),
        unknown: await post(server, "/v1/auth/resend-verification", { email: "nobody-at-all@example.com" }),
        malformed: await post(server, "/v1/auth/resend-verification", { email: "not an address" }),
        "not a string": await post(server, "/v1/auth/resend-verification", { email: 42 }),
      };
      expect(answers.unconfirmed.status).toBe(202);
      expect(answers.unconfirmed.body).toEqual({ status: expect.any(String), detail: expect.any(String) });
      expectSameAnswer(answers, answers.unconfirmed);

      const second = await waitForLink(mailDir, rex.email, "svcv_", 1, 15_000, [rex.token]);
      expect(second.token).not.toBe(rex.token);
      await flushMail();
      expect(queuedTo(server.dataDir, reg.email)).toBe(regBefore);
      expect(queuedTo(server.dataDir, "nobody-at-all@example.com")).toBe(0);

      expectError(await post(server, "/v1/auth/verify", { token: rex.token }), 404);
      expect((await post(server, "/v1/auth/verify", { token: second.token })).status).toBe(200);
      // Once confirmed, a resend mails nothing.
      expect((await post(server, "/v1/auth/resend-verification", { email: rex.email })).text).toBe(answers.unconfirmed.text);
      await flushMail();
      expect(queuedTo(server.dataDir, rex.email)).toBe(2);
    },
    T,
  );
});

describe("uniform answers whatever the body (SPEC §4.3, §7; issue 10)", () => {
  test(
    "resend-verification and forgot-password: the same 202 without an address, without a body, or with a body that is not JSON",
    async () => {
      for (const path of ["/v1/auth/resend-verification", "/v1/auth/forgot-password"]) {
        const reference = await post(server, path, { email: "nobody-at-all@example.com" });
        expect({ path, status: reference.status }).toEqual({ path, status: 202 });
        expectSameAnswer(await shapelessBodies(path, "email"), reference);
      }
    },
    T,
  );

  test(
    "verify and reset-password: the same 404 as a dead link without a token, without a body, or with a body that is not JSON",
    async () => {
      const verifyDead = await post(server, "/v1/auth/verify", { token: UNKNOWN_VERIFY });
      expectError(verifyDead, 404);
      expectSameAnswer(await shapelessBodies("/v1/auth/verify", "token"), verifyDead);
      const resetDead = await post(server, "/v1/auth/reset-password", { token: UNKNOWN_RESET, new_password: "a long enough password" });
      expectError(resetDead, 404);
      expectSameAnswer(await shapelessBodies("/v1/auth/reset-password", "token"), resetDead);
      // The token is looked at first: a dead link with a short password, or none at all, is the same 404.
      expectSameAnswer(
        {
          "dead link, short password": await post(server, "/v1/auth/reset-password", { token: UNKNOWN_RESET, new_password: "short" }),
          "no token, good password": await post(server, "/v1/auth/reset-password", { new_password: "a long enough password" }),
          "no token, no password": await post(server, "/v1/auth/reset-password", { token: null }),
        },
        resetDead,
      );
    },
    T,
  );

  test(
    "reset-password with a live link and no new_password: 400, and the link stays live",
    async () => {
      const hal = await createUser(server, { org: "acme", email: "hal@example.com", role: "member" });
      const token = await forgot(hal.email);
      expectError(await post(server, "/v1/auth/reset-password", { token }), 400, /new_password/);
      expectError(await post(server, "/v1/auth/reset-password", { token, new_password: 12345678901234 }), 400, /new_password/);
      expect((await post(server, "/v1/auth/reset-password", { token, new_password: "hal's new password" })).status).toBe(200);
    },
    T,
  );
});

describe("POST /v1/auth/forgot-password and /v1/auth/reset-password", () => {
  test(
    "forgot-password: identical 202s for a known, an unknown and a malformed address; only the known one is mailed",
    async () => {
      const fay = await createUser(server, { org: "acme", email: "fay@example.com", role: "member" });
      const answers = {
        known: await post(server, "/v1/auth/forgot-password", { email: fay.email }),
        unknown: await post(server, "/v1/auth/forgot-password", { email: "nobody-here@example.com" }),
        malformed: await post(server, "/v1/auth/forgot-password", { email: "nope" }),
        "not a string": await post(server, "/v1/auth/forgot-password", { email: ["fay@example.com"] }),
      };
      expect(answers.known.status).toBe(202);
      expect(answers.known.body).toEqual({ status: expect.any(String), detail: expect.any(String) });
      expectSameAnswer(answers, answers.known);
      const link = await waitForLink(mailDir, fay.email, "svcrs_");
      expect(link.url).toBe(`${server.url}/reset-password?token=${link.token}`);
      expect(link.token).toMatch(/^svcrs_[a-z2-7]{32}$/);
      await flushMail();
      expect(queuedTo(server.dataDir, "nobody-here@example.com")).toBe(0);
      expect(queuedTo(server.dataDir, fay.email)).toBe(1);
    },
    T,
  );

  test(
    "a disabled account gets the same 202 and no mail",
    async () => {
      const dee = await createUser(server, { org: "acme", email: "dee@example.com", role: "member" });
      const before = await post(server, "/v1/auth/forgot-password", { email: "nobody-else@example.com" });
      disableAccount(server.dataDir, dee.email);
      const r = await post(server, "/v1/auth/forgot-password", { email: dee.email });
      expectSameAnswer({ disabled: r }, before);
      await flushMail();
      expect({ files: mailsTo(mailDir, dee.email).length, queued: queuedTo(server.dataDir, dee.email) }).toEqual({ files: 0, queued: 0 });
    },
    T,
  );

  test(
    "reset: 400 for 11 characters without spending the link; then 200, signed in, every other session ended, the new password in force",
    async () => {
      const gil = await createUser(server, { org: "acme", email: "gil@example.com", role: "member" });
      const old1 = await login(server, gil.email, gil.password);
      const old2 = await login(server, gil.email, gil.password);
      expect((await client(server, { cookie: old1 }).get("/v1/auth/me")).status).toBe(200);
      const token = await forgot(gil.email);

      const short = await post(server, "/v1/auth/reset-password", { token, new_password: "x".repeat(11) });
      expectError(short, 400);
      expect(short.cookie).toBeNull();

      const NEW = "a brand new password";
      const r = await post(server, "/v1/auth/reset-password", { token, new_password: NEW });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        id: gil.id,
        email: gil.email,
        name: "gil",
        handle: gil.handle,
        created_at: expect.any(Number),
        orgs: expect.arrayContaining([{ id: expect.any(String), name: "acme", role: "member" }]),
      });
      expect(r.cookie).toMatch(/^svc_session=.+/);
      expect(await client(server, { cookie: r.cookie! }).get("/v1/auth/me")).toMatchObject({ status: 200, body: { id: gil.id } });
      expectError(await client(server, { cookie: old1 }).get("/v1/auth/me"), 401);
      expectError(await client(server, { cookie: old2 }).get("/v1/auth/me"), 401);
      expect(await loginStatus(server, gil.email, gil.password)).toBe(401);
      expect(await loginStatus(server, gil.email, NEW)).toBe(200);

      // Dead links, whatever the cause, answer the same 404; a verification link is not a reset link.
      const vic = await signedUp("vic");
      const answers = {
        spent: await post(server, "/v1/auth/reset-password", { token, new_password: "yet another password" }),
        malformed: await post(server, "/v1/auth/reset-password", { token: "svcrs_nope", new_password: "yet another password" }),
        unknown: await post(server, "/v1/auth/reset-password", { token: UNKNOWN_RESET, new_password: "yet another password" }),
        "a verification token": await post(server, "/v1/auth/reset-password", { token: vic.token, new_password: "yet another password" }),
      };
      expectError(answers.spent, 404);
      expectSameAnswer(answers, answers.spent);
      expect(await loginStatus(server, gil.email, NEW)).toBe(200);
      expect(await loginStatus(server, vic.email, "yet another password")).toBe(401);
      // The confirmation link survived being offered to the wrong route.
      expect((await post(server, "/v1/auth/verify", { token: vic.token })).status).toBe(200);
    },
    T,
  );

  test(
    "a reset proves the address of an unconfirmed account",
    async () => {
      const ulla = await signedUp("ulla");
      const before = await login(server, ulla.email, PASSWORD);
      expectError(await client(server, { cookie: before }).post("/v1/orgs", { name: "ulla-org" }), 403);
      const token = await forgot(ulla.email, 1);
      const r = await post(server, "/v1/auth/reset-password", { token, new_password: "ulla's new password" });
      expect(r.status).toBe(200);
      const c = client(server, { cookie: r.cookie! });
      expect(await c.post("/v1/orgs", { name: "ulla-org" })).toMatchObject({ status: 201, body: { name: "ulla-org" } });
      expect((await c.get("/v1/users/ulla/emails")).body.emails).toEqual([
        { address: ulla.email, verified_at: expect.any(Number), private: expect.any(Boolean), primary: true, created_at: expect.any(Number) },
      ]);
    },
    T,
  );

  test(
    "a disabled account with a live link: 401 and no session",
    async () => {
      const dex = await createUser(server, { org: "acme", email: "dex@example.com", role: "member" });
      const token = await forgot(dex.email);
      disableAccount(server.dataDir, dex.email);
      const r = await post(server, "/v1/auth/reset-password", { token, new_password: "dex's new password" });
      expectError(r, 401);
      expect(r.cookie).toBeNull();
    },
    T,
  );
});

describe("issue 25 row 11: no account-existence oracle through handles", () => {
  test(
    "signup(X, H) then signup(Y, H) answers the same whether X is registered or new",
    async () => {
      const registered = await signup(server, "reg@example.com", "oracle-one");
      const fresh = await signup(server, "never-seen-before@example.com", "oracle-two");
      expectSameAnswer({ registered }, fresh);
      const afterRegistered = await signup(server, "y1@example.com", "oracle-one");
      const afterFresh = await signup(server, "y2@example.com", "oracle-two");
      expect([afterRegistered.status, afterFresh.status]).toEqual([409, 409]);
      expect(afterRegistered.text.replace("oracle-one", "H")).toBe(afterFresh.text.replace("oracle-two", "H"));
      const [a, b] = [await client(server).get("/v1/users/oracle-one"), await client(server).get("/v1/users/oracle-two")];
      const shape = (p: any) => ({ ...p, handle: "H", created_at: 0 });
      expect(shape(a.body)).toEqual(shape(b.body));
    },
    T,
  );
});
