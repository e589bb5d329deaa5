// Issue 11, finding "login has no rate limit" (5,000 wrong passwords in ~90 s, never a 429), and
// the limits on presenting unusable credentials. Each client is a different local source address
// (127.0.0.x); the limits are configured small so that a handful of attempts reach them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError } from "../../helpers/api.ts";
import { requestFrom, type RawAnswer } from "../../helpers/raw-http.ts";
import { createUser, login, startServer, type RunningServer } from "../../helpers/server.ts";
import { basicAuth, createRepo, setupOwner } from "../../helpers/git.ts";

const LIMITS = {
  SVC_LOGIN_LIMIT_PER_SOURCE: "4",
  SVC_LOGIN_LIMIT_PER_ACCOUNT: "3",
  SVC_AUTH_FAILURE_LIMIT_PER_SOURCE: "3",
  SVC_RATE_BACKOFF_MAX_SECONDS: "2",
};

let server: RunningServer;
const PASSWORD = "correct horse battery staple";

beforeAll(async () => {
  server = await startServer({ env: LIMITS });
  await createUser(server, { org: "acme", email: "owner@example.com", password: PASSWORD });
  await createUser(server, { org: "acme", email: "other@example.com", password: PASSWORD });
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

/** POST /v1/auth/login from `source`. */
function signIn(source: string, email: string, password: string): Promise<RawAnswer> {
  return requestFrom(source, `${server.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
}

/** Retries `attempt` until it is no longer refused with 429 (the delay is at most SVC_RATE_BACKOFF_MAX_SECONDS). */
async function afterTheWait(attempt: () => Promise<RawAnswer>): Promise<RawAnswer> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await attempt();
    if (r.status !== 429 || Date.now() > deadline) return r;
    await Bun.sleep(Number(r.headers["retry-after"] ?? 1) * 250);
  }
}

function expect429(r: RawAnswer) {
  expectError(r, 429, /too many/);
  const wait = Number(r.headers["retry-after"]);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(2);
}

describe("sign-in per source address", () => {
  test("wrong passwords from one address: 401s up to the allowance, then 429 with Retry-After; the password is not even checked", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) seen.push((await signIn("127.0.0.11", `nobody${i}@example.com`, "wrong password")).status);
    expect(seen).toEqual([401, 401, 401, 401]);
    const limited = await signIn("127.0.0.11", "owner@example.com", PASSWORD);
    expect429(limited);
    // Another address is not slowed by it.
    expect((await signIn("127.0.0.12", "other@example.com", PASSWORD)).status).toBe(200);
    // After the wait, one more attempt is allowed (and a right password signs in).
    expect((await afterTheWait(() => signIn("127.0.0.11", "other@example.com", PASSWORD))).status).toBe(200);
  }, 60_000);

  test("the delay doubles with each failure past the allowance (a flood gets 429s, not 401s)", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await signIn("127.0.0.13", `flood${i}@example.com`, "wrong password")).status);
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(6);
    expect(statuses.slice(-10)).toEqual(Array(10).fill(429));
  }, 60_000);
});

describe("sign-in per account, never a lockout of the owner", () => {
  test("guessing one account from many addresses: 429 for new addresses, while the owner's usual address still signs in", async () => {
    // The owner signs in from their usual address.
    expect((await signIn("127.0.0.21", "owner@example.com", PASSWORD)).status).toBe(200);
    // Someone guesses from addresses the account never signed in from.
    const guesses: number[] = [];
    for (let i = 0; i < 3; i++) guesses.push((await signIn(`127.0.1.${i + 1}`, "owner@example.com", "guess " + i)).status);
    expect(guesses).toEqual([401, 401, 401]);
    expect429(await signIn("127.0.1.9", "owner@example.com", "guess 9"));
    // Even the right password from a new address waits (else the limit would let guesses through) …
    expect429(await signIn("127.0.1.10", "owner@example.com", PASSWORD));
    // … but the owner's usual address is not held back by someone else's guesses.
    expect((await signIn("127.0.0.21", "owner@example.com", PASSWORD)).status).toBe(200);
    // Other accounts are untouched.
    expect((await signIn("127.0.1.11", "other@example.com", PASSWORD)).status).toBe(200);
    // And the new address gets in once the short wait is over.
    expect((await afterTheWait(() => signIn("127.0.1.10", "owner@example.com", PASSWORD))).status).toBe(200);
  }, 60_000);

  test("addresses that do not exist are limited alike (no hint of which accounts exist)", async () => {
    const a: number[] = [];
    for (let i = 0; i < 4; i++) a.push((await signIn(`127.0.2.${i + 1}`, "ghost@example.com", "x")).status);
    expect(a).toEqual([401, 401, 401, 429]);
  });
});

describe("unusable credentials per source address", () => {
  const BAD = "svc_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

  test("bad bearer tokens: 401s up to the allowance, then 429 before the token is looked at; other addresses unaffected", async () => {
    const owner = await setupOwner(server, "tokens");
    const seen: number[] = [];
    for (let i = 0; i < 3; i++)
      seen.push((await requestFrom("127.0.0.31", `${server.url}/v1/orgs/tokens/repos`, { headers: { authorization: `Bearer ${BAD}` } })).status);
    expect(seen).toEqual([401, 401, 401]);
    expect429(await requestFrom("127.0.0.31", `${server.url}/v1/orgs/tokens/repos`, { headers: { authorization: `Bearer ${BAD}` } }));
    // A good token from that address waits too (the limit is on the address) …
    expect429(await requestFrom("127.0.0.31", `${server.url}/v1/orgs/tokens/repos`, { headers: { authorization: `Bearer ${owner.token}` } }));
    // … not from another one.
    expect((await requestFrom("127.0.0.32", `${server.url}/v1/orgs/tokens/repos`, { headers: { authorization: `Bearer ${owner.token}` } })).status).toBe(200);
  });

  test("git over HTTP with bad Basic credentials: 429 in plain text with Retry-After", async () => {
    const owner = await setupOwner(server, "gitco");
    await createRepo(server, owner, "app");
    const refs = (source: string, auth: string) =>
      requestFrom(source, `${server.url}/gitco/app.git/info/refs?service=git-upload-pack`, { headers: { authorization: auth } });
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) seen.push((await refs("127.0.0.41", basicAuth(BAD))).status);
    expect(seen).toEqual([401, 401, 401]);
    const limited = await refs("127.0.0.41", basicAuth(BAD));
    expect({ status: limited.status, type: limited.headers["content-type"], text: limited.text }).toEqual({
      status: 429,
      type: "text/plain; charset=utf-8",
      text: expect.stringMatching(/^too many unusable credentials/),
    });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await refs("127.0.0.42", basicAuth(owner.token))).status).toBe(200);
  });

  test("requests without credentials are never counted", async () => {
    for (let i = 0; i < 10; i++) expect((await requestFrom("127.0.0.51", `${server.url}/v1/orgs/acme/repos`)).status).toBe(200);
  });
});

describe("behind a proxy (SVC_TRUST_PROXY)", () => {
  test("off (default): X-Forwarded-For is ignored, so a client cannot dodge the limit by claiming other addresses", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      seen.push(
        (
          await requestFrom("127.0.0.61", `${server.url}/v1/auth/login`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-forwarded-for": `10.0.0.${i}` },
            body: JSON.stringify({ email: `x${i}@example.com`, password: "x" }),
          })
        ).status,
      );
    }
    expect(seen).toEqual([401, 401, 401, 401, 429]);
  });

  test("on: the last X-Forwarded-For entry (added by our proxy) is the source", async () => {
    await using proxied = await startServer({ env: { ...LIMITS, SVC_TRUST_PROXY: "1" } });
    await createUser(proxied, { org: "acme", email: "owner@example.com", password: PASSWORD });
    const viaProxy = (client: string, i: number) =>
      requestFrom("127.0.0.71", `${proxied.url}/v1/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": `203.0.113.9, ${client}` },
        body: JSON.stringify({ email: `nobody${i}@example.com`, password: "x" }),
      });
    const a: number[] = [];
    for (let i = 0; i < 5; i++) a.push((await viaProxy("198.51.100.1", i)).status);
    expect(a).toEqual([401, 401, 401, 401, 429]);
    // Another client behind the same proxy is a different source.
    expect((await viaProxy("198.51.100.2", 9)).status).toBe(401);
    expect((await login(proxied, "owner@example.com", PASSWORD)).startsWith("svc_session=")).toBe(true);
  }, 60_000);
});

test("the limits are configuration: a bad value is a boot failure naming the variable", async () => {
  for (const [name, value] of [
    ["SVC_LOGIN_LIMIT_PER_SOURCE", "0"],
    ["SVC_TRUST_PROXY", "yes"],
    ["SVC_RATE_BACKOFF_MAX_SECONDS", "-1"],
  ]) {
    const r = await server.cli(["user-create", "--org", "x", "--email", "x@example.com", "--name", "x", "--password", PASSWORD, "--role", "owner"], {
      [name!]: value!,
    });
    expect({ name, code: r.code, stderr: r.stderr.trim() }).toEqual({ name, code: 2, stderr: expect.stringContaining(name!) });
  }
}, 60_000);
