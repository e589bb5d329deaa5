// How long mailed links and invitations live, and the signup rate limits, with the injectable
// service clock instead of sleeping (SPEC §3.2, §5.4, §8; DECISIONS §1 signup rate limit).
// In-process: the real context and HTTP application, driven with app.handle().
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, sql } from "drizzle-orm";
import { buildApp } from "../../../src/http/app.ts";
import { openTestContext, testTables } from "../../helpers/context.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { setClock } from "../../../src/services/context.ts";
import { readBody, sessionCookie } from "../../helpers/server.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const PASSWORD = "a long enough password";
const T = 30_000;

const { mailOutbox } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-lifetimes-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The service clock, moved by hand; every test starts a fresh context at a fresh time. */
let t = 0;
let restoreClock: (() => void) | null = null;
let open: { close(): void }[] = [];
afterEach(() => {
  restoreClock?.();
  restoreClock = null;
  for (const c of open) c.close();
  open = [];
});

interface Answer {
  status: number;
  text: string;
  body: any;
  cookie: string | null;
}

let harnesses = 0;
/** A context on its own temp data dir (capture mail), its HTTP app, and helpers to call it. */
async function harness(extraEnv: Record<string, string> = {}) {
  const dir = join(root, String(++harnesses));
  t = Date.now();
  restoreClock ??= setClock(() => t);
  const ctx = await openTestContext({
    SVC_DATA_DIR: join(dir, "data"),
    SVC_HTTP_ADDR: "127.0.0.1:0",
    SVC_BASE_URL: "http://svc.test",
    SVC_MAIL_TRANSPORT: "capture",
    SVC_MAIL_DIR: join(dir, "mail"),
    SVC_LOG: "error",
    ...extraEnv,
  });
  open.push(ctx);
  const app = buildApp(ctx);

  async function call(method: string, path: string, body?: unknown, cookie?: string | null): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (cookie) headers.cookie = cookie;
    // As the server does at the start of every request.
    ctx.facts.fresh();
    const res = await app.handle(new Request(`http://svc.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
    const { text, body: json } = await readBody(res);
    return { status: res.status, text, body: json, cookie: sessionCookie(res) };
  }
  const post = (path: string, body: unknown, cookie?: string | null) => call("POST", path, body, cookie);

  /** The tokens with `prefix` of every message queued to `address`, oldest first (messages queued at one service time are in no order: step the clock between them). */
  async function linksTo(address: string, prefix: string): Promise<string[]> {
    const rows = await ctx.db.read.select().from(mailOutbox).where(sql`lower(${mailOutbox.toAddress}) = lower(${address})`).orderBy(asc(mailOutbox.createdAt));
    return rows.flatMap((r) => [...r.textBody.matchAll(/\?token=(svc[a-z]*_[a-z2-7]{32})/g)].map((m) => m[1]!)).filter((tok) => tok.startsWith(prefix));
  }
  /** How many messages were ever queued to `address`. */
  async function queued(address: string): Promise<number> {
    return (await ctx.db.read.select().from(mailOutbox).where(sql`lower(${mailOutbox.toAddress}) = lower(${address})`)).length;
  }
  const signup = (email: string, handle: string) => post("/v1/auth/signup", { email, name: "Test Person", password: PASSWORD, handle });
  async function person(email: string, org = "acme", role = "owner") {
    const user = await createUserWithOrg(ctx, { org, email, name: email.split("@")[0]!, password: PASSWORD, role });
    const r = await post("/v1/auth/login", { email, password: PASSWORD });
    expect(r.status).toBe(200);
    return { user, cookie: r.cookie! };
  }
  return { ctx, call, post, linksTo, queued, signup, person };
}

describe("confirmation link (svcv_): one day", () => {
  test(
    "works at 1 day − 1 s, dead (404, like an unknown link) at 1 day + 1 s; a resend brings a working one",
    async () => {
      const h = await harness();
      const t0 = t;
      expect((await h.signup("ann@example.com", "ann")).status).toBe(202);
      expect((await h.signup("ben@example.com", "ben")).status).toBe(202);
      const [ann] = await h.linksTo("ann@example.com", "svcv_");
      const [ben] = await h.linksTo("ben@example.com", "svcv_");

      t = t0 + DAY - SECOND;
      const ok = await h.post("/v1/auth/verify", { token: ann });
      expect(ok).toMatchObject({ status: 200, body: { email: "ann@example.com", handle: "ann" } });
      expect(ok.cookie).not.toBeNull();

      t = t0 + DAY + SECOND;
      const dead = await h.post("/v1/auth/verify", { token: ben });
      const unknown = await h.post("/v1/auth/verify", { token: "svcv_" + "a".repeat(32) });
      expect({ status: dead.status, text: dead.text }).toEqual({ status: 404, text: unknown.text });
      expect(dead.cookie).toBeNull();
      // Still unconfirmed: signs in but may not create an org.
      const signedIn = await h.post("/v1/auth/login", { email: "ben@example.com", password: PASSWORD });
      expect((await h.post("/v1/orgs", { name: "ben-org" }, signedIn.cookie)).status).toBe(403);

      expect((await h.post("/v1/auth/resend-verification", { email: "ben@example.com" })).status).toBe(202);
      const fresh = await h.linksTo("ben@example.com", "svcv_");
      expect(fresh).toHaveLength(2);
      expect((await h.post("/v1/auth/verify", { token: fresh[1] })).status).toBe(200);
      expect((await h.post("/v1/orgs", { name: "ben-org" }, signedIn.cookie)).status).toBe(201);
    },
    T,
  );
});

describe("reset link (svcrs_): one hour", () => {
  test(
    "works at 1 hour − 1 s; dead (404) at 1 hour + 1 s, and the password stays",
    async () => {
      const h = await harness();
      const t0 = t;
      await h.person("rita@example.com");
      expect((await h.post("/v1/auth/forgot-password", { email: "rita@example.com" })).status).toBe(202);
      const [first] = await h.linksTo("rita@example.com", "svcrs_");
      t = t0 + HOUR - SECOND;
      expect((await h.post("/v1/auth/reset-password", { token: first, new_password: "second password!" })).status).toBe(200);

      const t1 = t0 + 2 * HOUR;
      t = t1;
      expect((await h.post("/v1/auth/forgot-password", { email: "rita@example.com" })).status).toBe(202);
      const second = (await h.linksTo("rita@example.com", "svcrs_"))[1]!;
      t = t1 + HOUR + SECOND;
      const dead = await h.post("/v1/auth/reset-password", { token: second, new_password: "third password!!" });
      const unknown = await h.post("/v1/auth/reset-password", { token: "svcrs_" + "a".repeat(32), new_password: "third password!!" });
      expect({ status: dead.status, text: dead.text }).toEqual({ status: 404, text: unknown.text });
      expect((await h.post("/v1/auth/login", { email: "rita@example.com", password: "third password!!" })).status).toBe(401);
      expect((await h.post("/v1/auth/login", { email: "rita@example.com", password: "second password!" })).status).toBe(200);
    },
    T,
  );
});

describe("invitation (svcinv_): seven days", () => {
  test(
    "previews and accepts at 7 days − 1 s; after 7 days preview 404 and accept 400, like an unknown link",
    async () => {
      const h = await harness();
      const t0 = t;
      const { cookie } = await h.person("olga@example.com");
      const gia = await h.post("/v1/orgs/acme/invites", { email: "gia@example.com", role: "member" }, cookie);
      const hal = await h.post("/v1/orgs/acme/invites", { email: "hal@example.com", role: "viewer" }, cookie);
      expect(gia).toMatchObject({ status: 201, body: { expires_at: t0 + 7 * DAY } });
      expect(hal.status).toBe(201);

      t = t0 + 7 * DAY - SECOND;
      const preview = await h.post("/v1/auth/invite/preview", { invite: gia.body.invite_link });
      expect({ status: preview.status, body: preview.body }).toEqual({
        status: 200,
        body: { org: "acme", role: "member", email: "gia@example.com", expires_at: t0 + 7 * DAY },
      });
      expect((await h.post("/v1/auth/invite/preview", { invite: hal.body.invite_link })).status).toBe(200);
      const accepted = await h.post("/v1/auth/accept-invite", { invite: gia.body.invite_link, name: "Gia", password: PASSWORD });
      expect(accepted.status).toBe(201);
      expect(accepted.body.orgs).toContainEqual({ id: expect.any(String), name: "acme", role: "member" });

      t = t0 + 7 * DAY + SECOND;
      const unknownLink = "svcinv_" + "a".repeat(32);
      const dead = await h.post("/v1/auth/invite/preview", { invite: hal.body.invite_link });
      const unknown = await h.post("/v1/auth/invite/preview", { invite: unknownLink });
      expect({ status: dead.status, text: dead.text }).toEqual({ status: 404, text: unknown.text });
      const deadAccept = await h.post("/v1/auth/accept-invite", { invite: hal.body.invite_link, name: "Hal", password: PASSWORD });
      const unknownAccept = await h.post("/v1/auth/accept-invite", { invite: unknownLink, name: "Hal", password: PASSWORD });
      expect({ status: deadAccept.status, text: deadAccept.text }).toEqual({ status: 400, text: unknownAccept.text });
      expect(deadAccept.cookie).toBeNull();
      expect((await h.post("/v1/auth/login", { email: "hal@example.com", password: PASSWORD })).status).toBe(401);
      const listed = await h.call("GET", "/v1/orgs/acme/invites", undefined, cookie);
      expect(listed.body.invites.map((i: any) => [i.email, i.state])).toEqual([["hal@example.com", "expired"]]);
    },
    T,
  );
});

describe("address-claim link (svce_): one day", () => {
  test(
    "proves the address at 1 day − 1 s; dead (404) at 1 day + 1 s, and the lapsed claim frees the address",
    async () => {
      const h = await harness();
      const t0 = t;
      const uma = await h.person("uma@example.com");
      const vik = await h.person("vik@example.com", "vik-org");
      const add = (cookie: string, handle: string, email: string) => h.post(`/v1/users/${handle}/emails`, { email }, cookie);
      expect((await add(uma.cookie, uma.user.handle, "uma.a@example.com")).status).toBe(202);
      expect((await add(uma.cookie, uma.user.handle, "uma.b@example.com")).status).toBe(202);
      const [a] = await h.linksTo("uma.a@example.com", "svce_");
      const [b] = await h.linksTo("uma.b@example.com", "svce_");
      const verify = (token: string | undefined) => h.post(`/v1/users/${uma.user.handle}/emails/verify`, { token }, uma.cookie);

      t = t0 + DAY - SECOND;
      expect(await verify(a)).toMatchObject({ status: 200, body: { address: "uma.a@example.com", verified: true } });
      // Until then the unproved claim holds the address.
      expect((await add(vik.cookie, vik.user.handle, "uma.b@example.com")).status).toBe(409);

      t = t0 + DAY + SECOND;
      const dead = await verify(b);
      const unknown = await verify("svce_" + "a".repeat(32));
      expect({ status: dead.status, text: dead.text }).toEqual({ status: 404, text: unknown.text });
      expect((await add(vik.cookie, vik.user.handle, "uma.b@example.com")).status).toBe(202);
      const umas = await h.call("GET", `/v1/users/${uma.user.handle}/emails`, undefined, uma.cookie);
      expect(umas.body.emails.map((e: any) => [e.address, e.verified_at === null])).toEqual([
        ["uma@example.com", false],
        ["uma.a@example.com", false],
      ]);
    },
    T,
  );
});

describe("signup rate limits (per address 3 an hour, global configurable)", () => {
  test(
    "per address: a 4th signup within the hour is refused silently; after the hour it goes through",
    async () => {
      const h = await harness();
      const t0 = t;
      // An unproved claim by someone else holds squat@ for one day; signups meanwhile send nothing.
      const holder = await h.person("holder@example.com");
      expect((await h.post(`/v1/users/${holder.user.handle}/emails`, { email: "squat@example.com" }, holder.cookie)).status).toBe(202);
      const reference = await h.signup("someone@example.com", "someone");
      expect(reference.status).toBe(202);

      const t1 = t0 + DAY - 30 * MINUTE;
      t = t1;
      for (const handle of ["s1", "s2", "s3"]) expect((await h.signup("squat@example.com", handle)).text).toBe(reference.text);
      expect(await h.linksTo("squat@example.com", "svcv_")).toEqual([]);

      // The claim has lapsed, so only the limit stands in the way: the same 202, no mail, no account.
      t = t0 + DAY + MINUTE;
      const limited = await h.signup("squat@example.com", "s4");
      expect({ status: limited.status, text: limited.text }).toEqual({ status: 202, text: reference.text });
      expect(await h.linksTo("squat@example.com", "svcv_")).toEqual([]);
      expect((await h.post("/v1/auth/login", { email: "squat@example.com", password: PASSWORD })).status).toBe(401);

      // An hour after the three attempts the address may sign up again.
      t = t1 + HOUR + SECOND;
      const allowed = await h.signup("squat@example.com", "s4");
      expect({ status: allowed.status, text: allowed.text }).toEqual({ status: 202, text: reference.text });
      const links = await h.linksTo("squat@example.com", "svcv_");
      expect(links).toHaveLength(1);
      expect(await h.post("/v1/auth/verify", { token: links[0] })).toMatchObject({ status: 200, body: { handle: "s4" } });
    },
    T,
  );

  test(
    "global: once the configured count is reached, new addresses get the same 202 and nothing else until the hour passes",
    async () => {
      const h = await harness({ SVC_SIGNUP_LIMIT_GLOBAL: "2" });
      const t0 = t;
      const first = await h.signup("g1@example.com", "g1");
      const second = await h.signup("g2@example.com", "g2");
      t = t0 + MINUTE;
      const third = await h.signup("g3@example.com", "g3");
      expect([second.text, third.text]).toEqual([first.text, first.text]);
      expect([first.status, second.status, third.status]).toEqual([202, 202, 202]);
      expect([await h.queued("g1@example.com"), await h.queued("g2@example.com"), await h.queued("g3@example.com")]).toEqual([1, 1, 0]);
      expect((await h.post("/v1/auth/login", { email: "g3@example.com", password: PASSWORD })).status).toBe(401);

      t = t0 + HOUR + SECOND;
      expect((await h.signup("g3@example.com", "g3")).text).toBe(first.text);
      expect(await h.linksTo("g3@example.com", "svcv_")).toHaveLength(1);
    },
    T,
  );

  test(
    "resend-verification: the 4th within the hour mails nothing and leaves the last link alive",
    async () => {
      const h = await harness();
      const t0 = t;
      expect((await h.signup("rae@example.com", "rae")).status).toBe(202);
      t = t0 + MINUTE;
      const answers = [];
      // One millisecond apart, so the links' order is their queueing times'.
      for (let i = 0; i < 4; i++, t++) answers.push(await h.post("/v1/auth/resend-verification", { email: "rae@example.com" }));
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      const links = await h.linksTo("rae@example.com", "svcv_");
      expect(links).toHaveLength(4);
      // Each resend spent the one before it; the refused one spent nothing.
      expect((await h.post("/v1/auth/verify", { token: links[2] })).status).toBe(404);
      expect((await h.post("/v1/auth/verify", { token: links[3] })).status).toBe(200);
    },
    T,
  );

  test(
    "forgot-password: the 4th within the hour mails nothing; after the hour it mails again",
    async () => {
      const h = await harness();
      const t0 = t;
      await h.person("flo@example.com");
      const ask = () => h.post("/v1/auth/forgot-password", { email: "flo@example.com" });
      const answers = [await ask(), await ask(), await ask()];
      t = t0 + 10 * MINUTE;
      answers.push(await ask());
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(await h.linksTo("flo@example.com", "svcrs_")).toHaveLength(3);
      t = t0 + HOUR + SECOND;
      expect((await ask()).status).toBe(202);
      const links = await h.linksTo("flo@example.com", "svcrs_");
      expect(links).toHaveLength(4);
      expect((await h.post("/v1/auth/reset-password", { token: links[3], new_password: "flo's new password" })).status).toBe(200);
    },
    T,
  );
});
