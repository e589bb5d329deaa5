// Billing through the payment provider, end to end: the real server, a local stand-in for the
// provider's REST API (port 0, SVC_STRIPE_API_BASE) that records what it was asked, and provider
// events signed as the provider signs them (SPEC §1 item 6, §2.1, §2.12, §3.2, §4.4, §7;
// DECISIONS §3 Billing).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, expectError, person, type Person } from "../../helpers/api.ts";
import { commitFiles, gitSandbox, lsRemote, repoUrl } from "../../helpers/git.ts";
import { startServer } from "../../helpers/server.ts";
import { gitSshEnv, registerKey, sshUrl, sshWorkspace, startSshServer, type SshRunningServer } from "../../helpers/ssh.ts";
import { deliver, providerEvent, signature, startStandin, type Standin } from "../../helpers/stripe-standin.ts";
import { dbRows, until } from "../ci/helpers.ts";

const SECRET = "whsec_test_billing";
/** The provider settings of a server pointed at `standin`. */
const billingEnv = (apiBase: string, extra: Record<string, string> = {}) => ({
  SVC_BILLING_PROVIDER: "stripe",
  SVC_STRIPE_SECRET_KEY: "sk_test_standin",
  SVC_STRIPE_WEBHOOK_SECRET: SECRET,
  SVC_STRIPE_PRICE_ID: "price_seat",
  SVC_STRIPE_API_BASE: apiBase,
  SVC_BILLING_FREE_SEATS: "3",
  ...extra,
});

let standin: Standin;
let server: SshRunningServer;
/** acme: owner, admin, member (three seats: the free plan's all). elsewhere: an outsider. */
let owner: Person, admin: Person, member: Person, outsider: Person;
const as = (who?: Person) => caller(server, who);
/** Seconds now, for provider timestamps; `tick` keeps later events strictly newer. */
let clock = Math.floor(Date.now() / 1000);
const tick = () => ++clock;

/** Signs and delivers a provider event; answers the delivery's response. */
async function send(type: string, object: unknown, o: { id?: string; created?: number } = {}) {
  const e = providerEvent(type, object, { created: tick(), ...o });
  return { ...(await deliver(server.url, e.body, signature(e.body, SECRET))), id: e.id };
}

/** acme's billing as its owner sees it. */
async function billing(org = "acme") {
  const r = await as(owner).get(`/v1/orgs/${org}/billing`);
  expect(r.status).toBe(200);
  return r.body;
}

beforeAll(async () => {
  standin = startStandin({ priceCents: 900 });
  server = await startSshServer({ env: billingEnv(standin.url) });
  owner = await person(server, "acme", "olga@acme.example", "owner");
  [admin, member, outsider] = await Promise.all([
    person(server, "acme", "adam@acme.example", "admin"),
    person(server, "acme", "mona@acme.example", "member"),
    person(server, "elsewhere", "otto@elsewhere.example", "owner"),
  ]);
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
  await standin?.stop();
});

describe("on the free plan", () => {
  test("GET billing: stored state, config and provider price, quotas, this month's minutes", async () => {
    expect(await billing()).toEqual({
      org: "acme",
      plan: "free",
      billable_seats: 3,
      paid_seats: 0,
      status: null,
      current_period_end: null,
      may_create_public: true,
      may_create_private: false,
      may_add_people: false,
      price_per_seat_cents: 900,
      paid_minutes_per_seat: 1000,
      free_minutes: 2000,
      ci_minutes_limit: 2000,
      ci_minutes_used: 0,
      ci_minutes_remaining: 2000,
      ci_suspended_reason: null,
      ci_suspended_at: null,
      private_repos: 0,
    });
    // Only the configured price was asked about, with the configured key.
    expect({ ...standin.calls("GET", "/v1/prices/")[0] }).toMatchObject({ path: "/v1/prices/price_seat", auth: "Bearer sk_test_standin" });
  });

  test("a personal namespace sells nothing and allows everything", async () => {
    const r = await as(owner).get(`/v1/orgs/${owner.handle}/billing`);
    expect(r.body).toMatchObject({
      plan: "free",
      billable_seats: 1,
      may_create_public: true,
      may_create_private: true,
      may_add_people: true,
      price_per_seat_cents: null,
      paid_minutes_per_seat: null,
    });
    expect((await as(owner).post(`/v1/orgs/${owner.handle}/repos`, { name: "mine" })).status).toBe(201);
  });

  test("a private repository is refused with 402 quota:, a public one is created", async () => {
    expectError(
      await as(owner).post("/v1/orgs/acme/repos", { name: "hidden" }),
      402,
      /^quota: private repositories need a subscription; .*\/settings\/orgs\/acme\/billing$/,
    );
    expectError(await as(member).post("/v1/orgs/acme/repos", { name: "hidden", public: false }), 402, /^quota:/);
    expect((await as(member).post("/v1/orgs/acme/repos", { name: "open", public: true })).status).toBe(201);
    // Making a public repository private is adding a private one.
    expectError(await as(owner).patch("/v1/orgs/acme/repos/open", { public: false }), 402, /^quota:/);
    expect((await as(owner).get("/v1/orgs/acme/repos/open")).body).toMatchObject({ public: true, write_blocked: null, viewer_write: true });
    // The role decision still comes first: a viewer-less outsider is not told about quotas.
    expectError(await as(outsider).post("/v1/orgs/acme/repos", { name: "x", public: false }), 404);
  });

  test("inviting past the free seats is refused with 402 quota: and nothing is recorded", async () => {
    expectError(
      await as(admin).post("/v1/orgs/acme/invites", { email: "new@acme.example", role: "viewer" }),
      402,
      /^quota: acme holds all 3 seats of the free plan/,
    );
    expect((await as(admin).get("/v1/orgs/acme/invites")).body.invites).toEqual([]);
    // A member may not invite at all: the role decision answers first.
    expectError(await as(member).post("/v1/orgs/acme/invites", { email: "new@acme.example", role: "viewer" }), 403);
  });

  test("the portal without a subscription is 402 card:, and nothing is asked of the provider", async () => {
    const before = standin.asked.length;
    expectError(await as(owner).post("/v1/orgs/acme/billing"), 402, /^card: acme has no subscription yet/);
    expect(standin.asked.length).toBe(before);
  });

  test("who may ask: admins; members and outsiders get the unknown org's 404; anonymous 401; personal namespaces 400", async () => {
    for (const path of ["/v1/orgs/acme/billing", "/v1/orgs/acme/billing/subscribe"]) {
      const unknown = await as(member).post(path.replace("acme", "no-such-org"));
      expectError(unknown, 404);
      // The same answer as for an org that does not exist: status, body and headers (but the clock's `date`, which moves between two requests).
      const shape = (r: { status: number; body: unknown; headers: Headers }) => ({
        status: r.status,
        body: r.body,
        headers: Object.fromEntries([...r.headers].filter(([k]) => k !== "date")),
      });
      for (const who of [member, outsider]) expect(shape(await as(who).post(path))).toEqual(shape(unknown));
      expectError(await as().post(path), 401);
      expectError(await as(owner).post(path.replace("acme", owner.handle)), 400, /personal namespace/);
    }
    expectError(await as(member).get("/v1/orgs/acme/billing"), 404);
  });
});

describe("subscribing", () => {
  test("checkout: a provider customer is created once, the seat price for the seats in use, a promotion-code box", async () => {
    const r = await as(admin).post("/v1/orgs/acme/billing/subscribe", undefined, { accept: "application/json" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ url: expect.stringMatching(/^https:\/\/checkout\.standin\.test\/c\/pay\/cs_/), kind: "checkout" });
    const [customer] = standin.calls("POST", "/v1/customers");
    expect({ ...customer!.form }).toMatchObject({ name: "acme", "metadata[org_id]": expect.any(String) });
    const [session] = standin.calls("POST", "/v1/checkout/sessions");
    // A copy: toMatchObject writes its matchers into the object it is given.
    expect({ ...session!.form }).toMatchObject({
      mode: "subscription",
      customer: expect.stringMatching(/^cus_/),
      "line_items[0][price]": "price_seat",
      "line_items[0][quantity]": "3",
      allow_promotion_codes: "true",
      success_url: `${server.url}/settings/orgs/acme/billing?checkout=done`,
      cancel_url: `${server.url}/settings/orgs/acme/billing?checkout=cancelled`,
    });
    // Nothing else is written: still free.
    expect(await billing()).toMatchObject({ plan: "free", status: null, paid_seats: 0 });
  });

  test("without Accept: application/json the answer is a 303 to the checkout page; the customer is reused", async () => {
    const res = await fetch(`${server.url}/v1/orgs/acme/billing/subscribe`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: owner.cookie, origin: server.url },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toMatch(/^https:\/\/checkout\.standin\.test\/c\/pay\/cs_/);
    expect(standin.calls("POST", "/v1/customers")).toHaveLength(1);
    const sessions = standin.calls("POST", "/v1/checkout/sessions");
    expect(sessions[1]!.form.customer).toBe(sessions[0]!.form.customer!);
  });
});

describe("provider events", () => {
  test("unsigned, mis-signed, tampered, stale or foreign-secret deliveries are 400 and change nothing", async () => {
    const customer = standin.calls("POST", "/v1/checkout/sessions")[0]!.form.customer!;
    const sub = standin.subscribe(customer, 3);
    const e = providerEvent("customer.subscription.updated", sub, { created: tick() });
    const t = Math.floor(Date.now() / 1000);
    const cases: [string, string | null, string][] = [
      ["no header", null, e.body],
      ["garbage header", "nonsense", e.body],
      ["wrong secret", signature(e.body, "whsec_other", t), e.body],
      ["tampered body", signature(e.body, SECRET, t), e.body.replace('"active"', '"trialing"')],
      ["six minutes old", signature(e.body, SECRET, t - 360), e.body],
      ["six minutes ahead", signature(e.body, SECRET, t + 360), e.body],
      ["signature of another timestamp", signature(e.body, SECRET, t).replace(`t=${t}`, `t=${t - 1}`), e.body],
    ];
    for (const [what, header, body] of cases) {
      const r = await deliver(server.url, body, header);
      expect({ what, status: r.status, keys: Object.keys(r.body ?? {}) }).toEqual({ what, status: 400, keys: ["error"] });
    }
    expect(await billing()).toMatchObject({ plan: "free", status: null });
    // The same event, properly signed four minutes ago, is within the tolerance: accepted later below.
    standin.subscriptions.delete(sub.id);
  });

  test("checkout completed: the subscription is fetched and applied once; a repeat is a no-op", async () => {
    const customer = standin.calls("POST", "/v1/checkout/sessions")[0]!.form.customer!;
    const sub = standin.subscribe(customer, 3);
    const session = { id: "cs_done", object: "checkout.session", mode: "subscription", customer, subscription: sub.id, client_reference_id: null };
    const e = providerEvent("checkout.session.completed", session, { created: tick() });
    const header = signature(e.body, SECRET, Math.floor(Date.now() / 1000) - 240);
    const first = await deliver(server.url, e.body, header);
    expect(first).toEqual({ status: 200, body: { received: true, outcome: "applied" } });
    expect(standin.calls("GET", `/v1/subscriptions/${sub.id}`)).toHaveLength(1);
    const b = await billing();
    expect(b).toMatchObject({
      plan: "paid",
      status: "active",
      paid_seats: 3,
      billable_seats: 3,
      may_create_private: true,
      may_add_people: true,
      ci_minutes_limit: 2000 + 3 * 1000,
    });
    expect(b.current_period_end).toBe(sub.items.data[0]!.current_period_end * 1000);
    const again = await deliver(server.url, e.body, header);
    expect(again).toEqual({ status: 200, body: { received: true, outcome: "duplicate" } });
    expect(standin.calls("GET", `/v1/subscriptions/${sub.id}`)).toHaveLength(1);
    const audit = dbRows<{ action: string; actor_name: string }>(
      server,
      "SELECT action, actor_name FROM audit_events WHERE action LIKE 'billing.%' ORDER BY created_at",
    );
    expect(audit.filter((a) => a.action === "billing.subscribed")).toEqual([{ action: "billing.subscribed", actor_name: "stripe" }]);
    expect(audit.map((a) => a.action)).toContain("billing.customer_created");
  });

  test("the portal: the provider's URL, returning to this deployment's billing screen whatever the caller sends", async () => {
    const r = await as(owner).post("/v1/orgs/acme/billing?return_url=https://evil.example/", {
      return_url: "https://evil.example/",
      returnUrl: "https://evil.example/",
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ url: expect.stringMatching(/^https:\/\/billing\.standin\.test\/p\/session\/bps_/), kind: "portal" });
    const calls = standin.calls("POST", "/v1/billing_portal/sessions");
    expect(calls.at(-1)!.form).toEqual({
      customer: standin.calls("POST", "/v1/checkout/sessions")[0]!.form.customer!,
      return_url: `${server.url}/settings/orgs/acme/billing`,
    });
    expectError(await as(member).post("/v1/orgs/acme/billing"), 404);
    // Already subscribed: checkout is refused rather than selling a second subscription.
    expectError(await as(owner).post("/v1/orgs/acme/billing/subscribe"), 409, /already has a subscription/);
  });

  test("a new member reaches the provider as a seat through the durable job; paid_seats follows", async () => {
    const inv = await as(admin).post("/v1/orgs/acme/invites", { email: "vic@acme.example", role: "viewer" });
    expect(inv.status).toBe(201);
    const res = await fetch(`${server.url}/v1/auth/accept-invite`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ invite: inv.body.invite_link, name: "Vic", password: "correct horse battery" }),
    });
    expect(res.status).toBe(201);
    // billable_seats moves at once; paid_seats when the provider has been told.
    expect((await billing()).billable_seats).toBe(4);
    const sub = [...standin.subscriptions.values()].at(-1)!;
    await until("the seat update at the provider", () => standin.calls("POST", `/v1/subscriptions/${sub.id}`).length > 0);
    expect({ ...standin.calls("POST", `/v1/subscriptions/${sub.id}`)[0]!.form }).toMatchObject({
      "items[0][id]": sub.items.data[0]!.id,
      "items[0][quantity]": "4",
    });
    await until("paid_seats 4", async () => (await billing()).paid_seats === 4);
    expect(dbRows(server, "SELECT action FROM audit_events WHERE action = 'billing.seats_updated'")).toHaveLength(1);
  });

  test("out of order: an older event loses to the state in force; newer ones move it", async () => {
    const sub = [...standin.subscriptions.values()].at(-1)!;
    const failed = await send("invoice.payment_failed", {
      id: "in_1",
      object: "invoice",
      customer: sub.customer,
      parent: { subscription_details: { subscription: sub.id } },
    });
    expect(failed.body.outcome).toBe("applied");
    expect(await billing()).toMatchObject({ plan: "past_due", status: "past_due", may_create_private: false });
    // A late delivery of an older "active" update does not undo the failure.
    const late = await send("customer.subscription.updated", { ...sub, status: "active" }, { created: clock - 10 });
    expect(late.body.outcome).toBe("stale");
    expect((await billing()).plan).toBe("past_due");
    const end = clock + 40 * 86400;
    const paid = await send("invoice.paid", {
      id: "in_2",
      object: "invoice",
      customer: sub.customer,
      subscription: sub.id,
      lines: { data: [{ period: { end } }] },
    });
    expect(paid.body.outcome).toBe("applied");
    expect(await billing()).toMatchObject({ plan: "paid", status: "active", current_period_end: end * 1000 });
    // Unknown customers and kinds we do not act on are recorded and acknowledged.
    expect((await send("customer.subscription.updated", { ...sub, id: "sub_other", customer: "cus_nobody" })).body.outcome).toBe("unmatched");
    expect((await send("charge.refunded", { id: "ch_1" })).body.outcome).toBe("ignored");
  });
});

describe("a cancelled subscription", () => {
  test("private repositories stay, become read-only for every writer and every path; nothing is stored", async () => {
    using g = gitSandbox();
    using ws = sshWorkspace();
    expect((await as(owner).post("/v1/orgs/acme/repos", { name: "secret" })).status).toBe(201);
    const token = (await as(owner).post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "push" })).body.token;
    const url = repoUrl(server, "acme", "secret", token);
    const dir = g.path("work");
    await g.ok(["init", "-q", "-b", "main", dir]);
    const first = await commitFiles(g, dir, { "a.txt": "one\n" });
    await g.ok(["push", "-q", url, "HEAD:refs/heads/main"], { cwd: dir });
    // A change opened while writes were allowed, to be landed after the subscription ends.
    await g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
    await commitFiles(g, dir, { "f.txt": "feature\n" });
    await g.ok(["push", "-q", url, "feature"], { cwd: dir });
    await g.ok(["checkout", "-q", "main"], { cwd: dir });
    const change = await as(owner).post("/v1/orgs/acme/repos/secret/changes", { title: "feature", branch: "feature" });
    expect(change.status).toBe(201);

    const sub = [...standin.subscriptions.values()].at(-1)!;
    const ended = await send("customer.subscription.deleted", { ...sub, status: "canceled" });
    expect(ended.body.outcome).toBe("applied");
    const b = await billing();
    expect(b).toMatchObject({ plan: "free", status: "canceled", paid_seats: 0, private_repos: 1, may_create_private: false });
    // An update of the ended subscription at the same second does not revive it.
    expect((await send("customer.subscription.updated", sub, { created: clock })).body.outcome).toBe("stale");

    const repo = (await as(member).get("/v1/orgs/acme/repos/secret")).body;
    expect(repo.write_blocked).toMatch(/^quota: acme has no active subscription, so its private repositories are read-only/);
    expect(repo.viewer_write).toBe(false);
    // Public repositories are untouched.
    expect((await as(member).get("/v1/orgs/acme/repos/open")).body).toMatchObject({ write_blocked: null, viewer_write: true });

    const second = await commitFiles(g, dir, { "b.txt": "two\n" });
    const http = await g.run(["push", url, "HEAD:refs/heads/main"], { cwd: dir });
    expect(http.code).not.toBe(0);
    expect(http.stderr).toContain("quota: acme has no active subscription");

    const key = await ws.keygen("owner", "ed25519");
    await registerKey(server, { cookie: owner.cookie }, "acme", key);
    const ssh = await g.run(["push", sshUrl(server, "acme", "secret"), "HEAD:refs/heads/main"], { cwd: dir, env: gitSshEnv(key) });
    expect(ssh.code).not.toBe(0);
    expect(ssh.stderr).toContain("quota: acme has no active subscription");

    const commit = await as(owner).post("/v1/orgs/acme/repos/secret/commits", {
      branch: "main",
      message: "m",
      operations: [{ op: "put", path: "c.txt", content: "c" }],
    });
    expectError(commit, 402, /^quota:/);
    expectError(await as(owner).put("/v1/orgs/acme/repos/secret/refs/refs/heads/other", { target: first }), 402, /^quota:/);
    // The lander is a writer like any other: the land request is refused the same way.
    expectError(await as(owner).post(`/v1/orgs/acme/repos/secret/changes/${change.body.number}/land`), 402, /^quota:/);
    // Git LFS (issue 31): an upload is refused the same way, a download is not.
    const lfsBatch = async (operation: string) => {
      const r = await fetch(`${server.url}/acme/secret.git/info/lfs/objects/batch`, {
        method: "POST",
        headers: { "content-type": "application/vnd.git-lfs+json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ operation, objects: [{ oid: "0".repeat(64), size: 1 }] }),
      });
      return { status: r.status, message: ((await r.json()) as { message?: string }).message ?? null };
    };
    expect(await lfsBatch("upload")).toEqual({ status: 402, message: expect.stringMatching(/^quota: acme has no active subscription/) });
    expect((await lfsBatch("download")).status).toBe(200);

    // Nothing was stored, and reading still works.
    expect((await lsRemote(g, url))["refs/heads/main"]).toBe(first);
    expect(Object.keys(await lsRemote(g, url))).not.toContain("refs/heads/other");
    expect(second).not.toBe(first);
    const copy = g.path("copy");
    await g.ok(["clone", "-q", url, copy]);
    expect(await g.ok(["rev-parse", "HEAD"], { cwd: copy })).toBe(first);
    expect(dbRows(server, "SELECT action FROM audit_events WHERE action = 'billing.subscription_ended'")).toHaveLength(1);
  }, 60_000);

  test("the portal is 402 card: again; subscribing is open again", async () => {
    expectError(await as(owner).post("/v1/orgs/acme/billing"), 402, /^card:/);
    const r = await as(owner).post("/v1/orgs/acme/billing/subscribe", undefined, { accept: "application/json" });
    expect(r.body.kind).toBe("checkout");
  });
});

describe("the provider unreachable, or not configured", () => {
  test("502 from subscribe and the portal when the provider does not answer; the billing view still answers", async () => {
    const gone = startStandin();
    const deadUrl = gone.url;
    await gone.stop();
    await using s = await startServer({ env: billingEnv(deadUrl) });
    const o = await person(s, "dead", "o@dead.example", "owner");
    const api = caller(s, o);
    expectError(await api.post("/v1/orgs/dead/billing/subscribe", undefined, { accept: "application/json" }), 502, /^payment provider unreachable/);
    expectError(await api.post("/v1/orgs/dead/billing/subscribe"), 502);
    expect((await api.get("/v1/orgs/dead/billing")).body).toMatchObject({ plan: "free", price_per_seat_cents: null });
    // A signed checkout whose subscription cannot be fetched is 502 (the provider redelivers), and not recorded.
    const e = providerEvent("checkout.session.completed", { id: "cs_x", customer: "cus_x", subscription: "sub_x", client_reference_id: null });
    expect((await deliver(s.url, e.body, signature(e.body, SECRET))).status).toBe(502);
    expect(dbRows(s, "SELECT id FROM billing_events")).toEqual([]);
  }, 60_000);

  test("503 without a provider, after the admin check", async () => {
    await using s = await startServer();
    const o = await person(s, "plain", "o@plain.example", "owner");
    const m = await person(s, "plain", "m@plain.example", "member");
    for (const path of ["/v1/orgs/plain/billing", "/v1/orgs/plain/billing/subscribe"]) {
      expectError(await caller(s, o).post(path), 503, /not configured/);
      expectError(await caller(s, m).post(path), 404);
    }
    const e = providerEvent("invoice.paid", {});
    expectError(await deliver(s.url, e.body, signature(e.body, SECRET)), 503);
    // Nothing for sale: everything allowed, minutes unlimited.
    expect((await caller(s, o).get("/v1/orgs/plain/billing")).body).toMatchObject({
      may_create_private: true,
      may_add_people: true,
      ci_minutes_limit: null,
      free_minutes: null,
    });
    expect((await caller(s, o).post("/v1/orgs/plain/repos", { name: "p" })).status).toBe(201);
  }, 60_000);
});

describe("hosted CI minutes", () => {
  test("past the month's minutes hosted jobs fail at trigger time with ci_suspended_reason; a subscription adds minutes", async () => {
    await using p = startStandin();
    await using s = await startServer({ env: billingEnv(p.url, { SVC_BILLING_FREE_MINUTES: "0", SVC_BILLING_MINUTES_PER_SEAT: "500" }) });
    const o = await person(s, "ci-org", "o@ci.example", "owner");
    const api = caller(s, o);
    expect((await api.post("/v1/orgs/ci-org/repos", { name: "app", public: true })).status).toBe(201);
    const workflow = "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n";
    const push = async (n: number) => {
      const r = await api.post("/v1/orgs/ci-org/repos/app/commits", {
        branch: "main",
        message: `c${n}`,
        operations: [{ op: "put", path: ".svc/workflows/ci.yml", content: `${workflow}# ${n}\n` }],
      });
      expect(r.status).toBe(201);
      return r.body.commit as string;
    };
    const runOf = (commit: string) =>
      until(`the run of ${commit}`, async () => (await api.get("/v1/orgs/ci-org/repos/app/runs")).body.runs.find((r: any) => r.commit === commit));

    expect((await api.get("/v1/orgs/ci-org/billing")).body).toMatchObject({
      free_minutes: 0,
      ci_minutes_limit: 0,
      ci_minutes_used: 0,
      ci_minutes_remaining: 0,
      ci_suspended_reason: null,
    });
    const refused = await runOf(await push(1));
    const reason: string = refused.jobs[0].error;
    expect(refused).toMatchObject({
      state: "failure",
      jobs: [{ key: "build", state: "failure", error: expect.stringMatching(/^quota: ci-org has used its 0 hosted CI minutes for this month/) }],
    });
    const suspended = (await api.get("/v1/orgs/ci-org/billing")).body;
    expect(suspended.ci_suspended_reason).toBe(reason);
    expect(suspended.ci_suspended_at).toEqual(expect.any(Number));

    // The provider reports a subscription for the org (found by the org id it carries back): 500 minutes.
    const orgId = dbRows<{ id: string }>(s, "SELECT id FROM orgs WHERE name = 'ci-org'")[0]!.id;
    const sub = p.subscribe("cus_ci", 1, { orgId });
    const e = providerEvent("customer.subscription.created", sub);
    expect((await deliver(s.url, e.body, signature(e.body, SECRET))).body.outcome).toBe("applied");
    expect((await api.get("/v1/orgs/ci-org/billing")).body).toMatchObject({ plan: "paid", paid_seats: 1, ci_minutes_limit: 500, ci_minutes_remaining: 500 });

    const queued = await runOf(await push(2));
    expect(queued).toMatchObject({ state: "queued", jobs: [{ key: "build", state: "queued", error: null }] });
    expect((await api.get("/v1/orgs/ci-org/billing")).body).toMatchObject({ ci_suspended_reason: null, ci_suspended_at: null });
    expect(dbRows<{ action: string }>(s, "SELECT action FROM audit_events WHERE action LIKE 'billing.ci_%' ORDER BY created_at").map((r) => r.action)).toEqual([
      "billing.ci_suspended",
      "billing.ci_resumed",
    ]);
  }, 60_000);
});
