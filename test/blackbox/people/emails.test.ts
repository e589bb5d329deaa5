// A person's email addresses over real HTTP, with the capture mail transport
// (SPEC §2.10, §3.2, §4.2, §7, §8; DECISIONS §2 `svce_` links).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, createUser, login, mintToken, startServer, type RunningServer } from "../../helpers/server.ts";
import { caller, expectError } from "../../helpers/api.ts";
import { queuedTo, waitForLink, waitForMails } from "../../helpers/mail-capture.ts";

const T = 30_000;

let server: RunningServer;
let mailDir: string;
let ada: Awaited<ReturnType<typeof createUser>>;
let bob: Awaited<ReturnType<typeof createUser>>;
let adaCookie: string;
let bobCookie: string;
let serviceToken: string;

beforeAll(async () => {
  mailDir = mkdtempSync(join(tmpdir(), "svc-emails-mail-"));
  server = await startServer({ env: { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir } });
  ada = await createUser(server, { org: "acme", email: "ada@example.com", name: "Ada" });
  bob = await createUser(server, { org: "acme", email: "bob@example.com", name: "Bob", role: "member" });
  adaCookie = await login(server, ada.email, ada.password);
  bobCookie = await login(server, bob.email, bob.password);
  serviceToken = await mintToken(server, adaCookie, "acme", { scopes: ["org:admin"], label: "svc", kind: "service" });
}, T);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  rmSync(mailDir, { recursive: true, force: true });
});

const as = (cookie: string) => client(server, { cookie });
const emailsOf = (handle: string) => `/v1/users/${handle}/emails`;
/** DELETE with a cookie needs an Origin matching the site (CSRF rule, DECISIONS §1). */
const del = (cookie: string | null, handle: string, address: string) =>
  caller(server, cookie ? { cookie } : undefined).delete(`${emailsOf(handle)}/${encodeURIComponent(address)}`);

async function list(cookie: string, handle: string): Promise<any[]> {
  const r = await as(cookie).get(emailsOf(handle));
  expect(r.status).toBe(200);
  return r.body.emails;
}

/** Adds an address as `cookie` and returns the mailed claim token. */
async function claim(cookie: string, handle: string, address: string): Promise<string> {
  const r = await as(cookie).post(emailsOf(handle), { email: address });
  expect({ status: r.status, body: r.body }).toEqual({ status: 202, body: { address, status: expect.any(String), detail: expect.any(String) } });
  return (await waitForLink(mailDir, address, "svce_")).token;
}

describe("GET /v1/users/{handle}/emails", () => {
  test(
    "the sign-in address as an email record: { address, verified_at, private, primary, created_at }",
    async () => {
      const r = await as(adaCookie).get(emailsOf(ada.handle));
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        emails: [{ address: "ada@example.com", verified_at: expect.any(Number), private: expect.any(Boolean), primary: true, created_at: expect.any(Number) }],
      });
      // Timestamps are epoch milliseconds (DECISIONS §1).
      expect(r.body.emails[0].created_at).toBeGreaterThan(1_500_000_000_000);
    },
    T,
  );
});

describe("POST /v1/users/{handle}/emails and …/emails/verify", () => {
  test(
    "add: 202 without the token; the mail carries the svce_ link; verify: 200 and the row is proved",
    async () => {
      const r = await as(adaCookie).post(emailsOf(ada.handle), { email: "ada.work@example.com" });
      expect(r.status).toBe(202);
      expect(r.body).toEqual({ address: "ada.work@example.com", status: expect.any(String), detail: expect.any(String) });
      const headers = [...r.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("\n");
      expect(JSON.stringify(r.body) + headers).not.toMatch(/svce_/);

      const link = await waitForLink(mailDir, "ada.work@example.com", "svce_");
      expect(link.token).toMatch(/^svce_[a-z2-7]{32}$/);
      expect(link.url).toBe(`${server.url}/settings/emails/verify?token=${link.token}`);
      expect(link.mail.html).toContain(`href="${server.url}/settings/emails/verify?token=${link.token}"`);

      const pending = (await list(adaCookie, ada.handle)).find((e) => e.address === "ada.work@example.com");
      expect(pending).toEqual({
        address: "ada.work@example.com",
        verified_at: null,
        private: expect.any(Boolean),
        primary: false,
        created_at: expect.any(Number),
      });

      const v = await as(adaCookie).post(`${emailsOf(ada.handle)}/verify`, { token: link.token });
      expect({ status: v.status, body: v.body }).toEqual({ status: 200, body: { address: "ada.work@example.com", verified: true } });
      const proved = (await list(adaCookie, ada.handle)).find((e) => e.address === "ada.work@example.com");
      expect(proved).toEqual({ ...pending, verified_at: expect.any(Number) });
      expect(proved.verified_at).toBeGreaterThanOrEqual(pending.created_at);
      // The sign-in address is still listed first and still primary.
      expect((await list(adaCookie, ada.handle)).map((e) => [e.address, e.primary])).toEqual([
        ["ada@example.com", true],
        ["ada.work@example.com", false],
      ]);
    },
    T,
  );

  test(
    "a malformed, unknown, spent or another account's token: identical 404s",
    async () => {
      const mine = await claim(adaCookie, ada.handle, "ada.spent@example.com");
      expect((await as(adaCookie).post(`${emailsOf(ada.handle)}/verify`, { token: mine })).status).toBe(200);
      const bobs = await claim(bobCookie, bob.handle, "bob.work@example.com");
      const verify = (token: string) => as(adaCookie).post(`${emailsOf(ada.handle)}/verify`, { token });
      const answers = {
        spent: await verify(mine),
        malformed: await verify("svce_short"),
        garbage: await verify("not a token"),
        empty: await verify(""),
        unknown: await verify("svce_" + "a".repeat(32)),
        "a verification-link prefix": await verify("svcv_" + mine.slice(5)),
        "another account's token": await verify(bobs),
      };
      expectError(answers.spent, 404);
      const shape = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });
      expect(Object.fromEntries(Object.entries(answers).map(([k, r]) => [k, shape(r)]))).toEqual(
        Object.fromEntries(Object.keys(answers).map((k) => [k, shape(answers.spent)])),
      );
      // Ada's attempt neither spent Bob's link nor proved the address for her.
      expect((await list(adaCookie, ada.handle)).some((e) => e.address === "bob.work@example.com")).toBe(false);
      const own = await as(bobCookie).post(`${emailsOf(bob.handle)}/verify`, { token: bobs });
      expect({ status: own.status, body: own.body }).toEqual({ status: 200, body: { address: "bob.work@example.com", verified: true } });
    },
    T,
  );

  test(
    "verify without a token, without a body or with a body that is not JSON: the same 404 as a dead link (issue 10)",
    async () => {
      const raw = async (body: string | undefined, type: string | null = "application/json") => {
        const headers: Record<string, string> = { cookie: adaCookie, origin: server.url };
        if (type) headers["content-type"] = type;
        const res = await fetch(`${server.url}${emailsOf(ada.handle)}/verify`, { method: "POST", headers, body });
        return { status: res.status, body: await res.json() };
      };
      const dead = await raw(JSON.stringify({ token: "svce_" + "a".repeat(32) }));
      expect(dead.status).toBe(404);
      expect({
        "token missing": await raw("{}"),
        "token null": await raw(JSON.stringify({ token: null })),
        "token a number": await raw(JSON.stringify({ token: 7 })),
        "body null": await raw("null"),
        "no body": await raw(undefined, null),
        "malformed JSON": await raw('{"token":'),
      }).toEqual({ "token missing": dead, "token null": dead, "token a number": dead, "body null": dead, "no body": dead, "malformed JSON": dead });
    },
    T,
  );

  test(
    "409 for an address already yours; 409 with one message for an address held by anyone else",
    async () => {
      // bob.work@ is Bob's proved secondary (previous test); bob.pending@ an unproved claim of his;
      // carl@ the sign-in address of an unconfirmed signup.
      await claim(bobCookie, bob.handle, "bob.pending@example.com");
      const signup = await client(server).post("/v1/auth/signup", { email: "carl@example.com", name: "Carl", password: "carl's password!", handle: "carl" });
      expect(signup.status).toBe(202);
      await waitForMails(mailDir, "carl@example.com");

      const add = (email: string) => as(adaCookie).post(emailsOf(ada.handle), { email });
      const mine = {
        "sign-in": await add("ada@example.com"),
        secondary: await add("ada.work@example.com"),
        "secondary, other case": await add("ADA.Work@Example.com"),
      };
      for (const r of Object.values(mine)) expectError(r, 409);

      const before = { bob: queuedTo(server.dataDir, "bob@example.com"), pending: queuedTo(server.dataDir, "bob.pending@example.com") };
      const theirs = {
        "another's sign-in address": await add("bob@example.com"),
        "the same in another case": await add("BOB@example.com"),
        "another's proved secondary": await add("bob.work@example.com"),
        "another's unproved claim": await add("bob.pending@example.com"),
        "an unconfirmed account's sign-in address": await add("carl@example.com"),
      };
      const reference = theirs["another's sign-in address"];
      expectError(reference, 409);
      expect(Object.fromEntries(Object.entries(theirs).map(([k, r]) => [k, { status: r.status, body: r.body }]))).toEqual(
        Object.fromEntries(Object.keys(theirs).map((k) => [k, { status: 409, body: reference.body }])),
      );
      // The holder is never disclosed.
      expect(reference.body.error).not.toMatch(/bob/i);
      expect({ bob: queuedTo(server.dataDir, "bob@example.com"), pending: queuedTo(server.dataDir, "bob.pending@example.com") }).toEqual(before);
      expect((await list(adaCookie, ada.handle)).map((e) => e.address).filter((a) => /bob|carl/.test(a))).toEqual([]);
    },
    T,
  );

  test(
    "400 for something that is not an address",
    async () => {
      for (const email of ["not-an-address", "", "someone@localhost", "two@@example.com", 42, null]) {
        const r = await as(adaCookie).post(emailsOf(ada.handle), { email });
        expect({ email, status: r.status, keys: Object.keys(r.body ?? {}) }).toEqual({ email, status: 400, keys: ["error"] });
      }
    },
    T,
  );

  test(
    "at most 10 addresses: the 11th answers 400 and is neither stored nor mailed",
    async () => {
      const ten = await createUser(server, { org: "acme", email: "ten@example.com", role: "member" });
      const cookie = await login(server, ten.email, ten.password);
      for (let i = 1; i <= 9; i++) {
        const r = await as(cookie).post(emailsOf(ten.handle), { email: `ten-${i}@example.com` });
        expect({ i, status: r.status }).toEqual({ i, status: 202 });
      }
      expect(await list(cookie, ten.handle)).toHaveLength(10);
      const eleventh = await as(cookie).post(emailsOf(ten.handle), { email: "ten-10@example.com" });
      expectError(eleventh, 400);
      expect(await list(cookie, ten.handle)).toHaveLength(10);
      await waitForMails(mailDir, "ten-9@example.com");
      expect(queuedTo(server.dataDir, "ten-10@example.com")).toBe(0);
      // Removing one makes room again.
      expect((await del(cookie, ten.handle, "ten-1@example.com")).status).toBe(204);
      expect((await as(cookie).post(emailsOf(ten.handle), { email: "ten-10@example.com" })).status).toBe(202);
    },
    T,
  );
});

describe("DELETE /v1/users/{handle}/emails/{email}", () => {
  test(
    "the sign-in address and an unknown one: 404; a secondary: 204, gone, its pending link dead",
    async () => {
      expectError(await del(adaCookie, ada.handle, "ada@example.com"), 404);
      expectError(await del(adaCookie, ada.handle, "ADA@example.com"), 404);
      expectError(await del(adaCookie, ada.handle, "nobody-here@example.com"), 404);
      expectError(await del(adaCookie, ada.handle, "bob@example.com"), 404);
      expect((await list(adaCookie, ada.handle))[0]).toMatchObject({ address: "ada@example.com", primary: true });

      const token = await claim(adaCookie, ada.handle, "ada.old@example.com");
      const gone = await del(adaCookie, ada.handle, "ada.old@example.com");
      expect({ status: gone.status, body: gone.body }).toEqual({ status: 204, body: null });
      expect((await list(adaCookie, ada.handle)).map((e) => e.address)).not.toContain("ada.old@example.com");
      expectError(await as(adaCookie).post(`${emailsOf(ada.handle)}/verify`, { token }), 404);
      // A proved secondary goes too, and its removal frees it for someone else.
      expect((await del(adaCookie, ada.handle, "ada.spent@example.com")).status).toBe(204);
      expect((await list(adaCookie, ada.handle)).map((e) => e.address)).not.toContain("ada.spent@example.com");
      expect((await as(bobCookie).post(emailsOf(bob.handle), { email: "ada.spent@example.com" })).status).toBe(202);
      expectError(await del(adaCookie, ada.handle, "ada.spent@example.com"), 404);
    },
    T,
  );
});

describe("who may manage addresses", () => {
  test(
    "401 anonymous on every route",
    async () => {
      const anon = client(server);
      expectError(await anon.get(emailsOf(ada.handle)), 401);
      expectError(await anon.post(emailsOf(ada.handle), { email: "anon@example.com" }), 401);
      expectError(await anon.post(`${emailsOf(ada.handle)}/verify`, { token: "svce_" + "a".repeat(32) }), 401);
      expectError(await del(null, ada.handle, "ada.work@example.com"), 401);
      expect(queuedTo(server.dataDir, "anon@example.com")).toBe(0);
    },
    T,
  );

  test(
    "403 for someone else's handle, as a person or as a service token; nothing changes",
    async () => {
      const before = await list(adaCookie, ada.handle);
      const callers = { bob: client(server, { cookie: bobCookie }), "service token": client(server, { token: serviceToken }) };
      for (const [who, c] of Object.entries(callers)) {
        const seen = {
          list: (await c.get(emailsOf(ada.handle))).status,
          add: (await c.post(emailsOf(ada.handle), { email: `from-${who.replace(/\s/g, "-")}@example.com` })).status,
          verify: (await c.post(`${emailsOf(ada.handle)}/verify`, { token: "svce_" + "a".repeat(32) })).status,
          delete: (await c.delete(`${emailsOf(ada.handle)}/${encodeURIComponent("ada.work@example.com")}`, { origin: server.url })).status,
        };
        expect({ who, seen }).toEqual({ who, seen: { list: 403, add: 403, verify: 403, delete: 403 } });
      }
      expect(await list(adaCookie, ada.handle)).toEqual(before);
      expect(queuedTo(server.dataDir, "from-bob@example.com")).toBe(0);
    },
    T,
  );

  test(
    "404 for an unknown handle",
    async () => {
      const c = as(adaCookie);
      expectError(await c.get(emailsOf("no-such-person")), 404);
      expectError(await c.post(emailsOf("no-such-person"), { email: "ghost@example.com" }), 404);
      expectError(await c.post(`${emailsOf("no-such-person")}/verify`, { token: "svce_" + "a".repeat(32) }), 404);
      expectError(await del(adaCookie, "no-such-person", "ghost@example.com"), 404);
    },
    T,
  );
});
