// Webhook delivery in process, with the service clock moved by hand instead of waiting: the
// retry schedule (10 s, 60 s, 5 min, then given up) with a hook's later deliveries held behind
// its head; change.landed / change.ejected recorded through recordEvent (as the lander will)
// delivered like pushes; the receiver's address checked again at delivery time; the attempt
// time limit; a deleted hook's queue dropped; a webhook.delivery metric per attempt.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { openTestContext, testTables } from "../../helpers/context.ts";
import type { Principal } from "../../../src/services/access/principal.ts";
import { setClock, type Ctx } from "../../../src/services/context.ts";
import { deliverDue, RETRY_DELAYS_MS, signature } from "../../../src/services/hooks/delivery.ts";
import * as hookStore from "../../../src/services/hooks/store.ts";
import { createWebhook, deleteWebhook, listDeliveries, redeliver, updateWebhook } from "../../../src/services/hooks/webhooks.ts";
import { createUserWithOrg } from "../../../src/services/people/accounts.ts";
import { createRepo, openRepo } from "../../../src/services/repos/repos.ts";
import { startReceiver } from "../../helpers/receiver.ts";

const { metricBuckets, repos, users } = testTables;
const root = mkdtempSync(join(tmpdir(), "svc-deliveries-"));
const rx = startReceiver();
afterAll(() => {
  rx.stop();
  rmSync(root, { recursive: true, force: true });
});

let t = 0;
let restore: (() => void) | null = null;
const open: { close(): void }[] = [];
afterEach(() => {
  restore?.();
  restore = null;
  for (const c of open.splice(0)) c.close();
});

let n = 0;
/** A context (private receivers allowed or not), an owner and a repository. */
async function harness(allowPrivate = true) {
  const dir = join(root, String(++n));
  t = Date.now();
  restore ??= setClock(() => t);
  const ctx = await openTestContext({ SVC_DATA_DIR: dir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "error", SVC_WEBHOOK_ALLOW_PRIVATE: allowPrivate ? "1" : "0" });
  open.push(ctx);
  const user = await createUserWithOrg(ctx, { org: "acme", email: `o${n}@acme.test`, name: "Owner", password: "a long enough password", role: "owner" });
  const actor: Principal = { kind: "session", user: (await ctx.db.read.select().from(users).where(eq(users.id, user.id)))[0]!, sessionId: "test" };
  const repo = await createRepo(ctx, actor, "acme", { name: `r${n}` });
  /** Records an event of the repository as the lander (or a push) would, in its own transaction. */
  const event = (kind: "push" | "change.landed" | "change.ejected" | "change.reviewed", payload: Record<string, unknown>) =>
    ctx.db.transaction((tx) => ctx.events.record(tx, { repoId: repo.id, orgId: repo.org_id, kind, payload, actorUserId: null }));
  const attempts = async (hookId: string) => (await listDeliveries(ctx, await openRepo(ctx, actor, "acme", repo.name), hookId, {})).deliveries.reverse();
  return { ctx, actor, repo, event, attempts };
}

async function subscribe(h: { ctx: Ctx; actor: Principal; repo: { name: string } }, path: string, events?: string[] | null) {
  const w = await createWebhook(h.ctx, await openRepo(h.ctx, h.actor, "acme", h.repo.name), { url: `${rx.url}${path}`, events });
  rx.secret(path, w.secret);
  return w;
}

describe("webhook delivery", () => {
  test("event selection (the JSON column read back on either database): only hooks naming the kind, or every kind, get a delivery; PATCH changes it; a redelivery copies the body in the hook's order", async () => {
    const h = await harness();
    const all = await subscribe(h, "/sel-all");
    const pushOnly = await subscribe(h, "/sel-push", ["push"]);
    const reviewedOnly = await subscribe(h, "/sel-reviewed", ["change.reviewed", "change.opened"]);
    const target = () => openRepo(h.ctx, h.actor, "acme", h.repo.name);
    expect((await listDeliveries(h.ctx, await target(), reviewedOnly.id, {})).deliveries).toEqual([]);
    await h.event("push", { via: "git" });
    await h.event("change.reviewed", { change: 1 });
    while ((await deliverDue(h.ctx)) > 0);
    expect(rx.of("/sel-all").map((r) => r.event)).toEqual(["push", "change.reviewed"]);
    expect(rx.of("/sel-push").map((r) => r.event)).toEqual(["push"]);
    expect(rx.of("/sel-reviewed").map((r) => r.event)).toEqual(["change.reviewed"]);
    const patched = await updateWebhook(h.ctx, await target(), pushOnly.id, { events: null });
    expect(patched.events).toBeNull();
    await h.event("change.reviewed", { change: 2 });
    const again = await redeliver(h.ctx, await target(), all.id, rx.of("/sel-all")[0]!.delivery!);
    while ((await deliverDue(h.ctx)) > 0);
    expect(rx.of("/sel-push").map((r) => r.event)).toEqual(["push", "change.reviewed"]);
    const last = rx.of("/sel-all").at(-1)!;
    expect({ delivery: last.delivery, of: last.redeliveryOf, raw: last.raw, signed: last.signed }).toEqual({
      delivery: again.id,
      of: rx.of("/sel-all")[0]!.delivery,
      raw: rx.of("/sel-all")[0]!.raw,
      signed: true,
    });
    expect(rx.of("/sel-all").map((r) => r.event)).toEqual(["push", "change.reviewed", "change.reviewed", "push"]);
  });

  test("change.landed and change.ejected go out like pushes: the SPEC body, signed, in event order", async () => {
    const h = await harness();
    const w = await subscribe(h, "/changes");
    await h.event("change.landed", { change: 7, commit: "a".repeat(40), branch: "main", patchset: 2 });
    await h.event("change.landed", { change: 8, commit: "b".repeat(40), branch: "main", included_in: 9 });
    await h.event("change.ejected", { change: 10, verdict: "merge conflict in a.txt" });
    while ((await deliverDue(h.ctx)) > 0);
    const got = rx.of("/changes");
    expect(got.map((r) => JSON.parse(r.raw))).toEqual([
      { event: "change.landed", repo_id: h.repo.id, payload: { change: 7, commit: "a".repeat(40), branch: "main", patchset: 2 } },
      { event: "change.landed", repo_id: h.repo.id, payload: { change: 8, commit: "b".repeat(40), branch: "main", included_in: 9 } },
      { event: "change.ejected", repo_id: h.repo.id, payload: { change: 10, verdict: "merge conflict in a.txt" } },
    ]);
    expect(got.map((r) => r.event)).toEqual(["change.landed", "change.landed", "change.ejected"]);
    expect(got.every((r) => r.signed && r.signature === signature(w.secret, r.raw))).toBe(true);
  });

  test("retries after 10 s, 60 s and 5 min, then gives up; the hook's next delivery waits behind it the whole time", async () => {
    const h = await harness();
    const w = await subscribe(h, "/flaky");
    rx.behave("/flaky", { status: 500 });
    await h.event("push", { via: "git" });
    await h.event("push", { via: "ssh" });
    const start = t;
    expect(await deliverDue(h.ctx)).toBe(1);
    // Nothing is due until the first retry: not the retry, not the next event.
    t = start + RETRY_DELAYS_MS[0] - 1;
    expect(await deliverDue(h.ctx)).toBe(0);
    t = start + RETRY_DELAYS_MS[0];
    expect(await deliverDue(h.ctx)).toBe(1);
    t += RETRY_DELAYS_MS[1];
    expect(await deliverDue(h.ctx)).toBe(1);
    t += RETRY_DELAYS_MS[2] - 1;
    expect(await deliverDue(h.ctx)).toBe(0);
    t += 1;
    // The fourth attempt (third retry) is the last of the first delivery, then the second goes.
    rx.behave("/flaky", { status: 502 });
    expect(await deliverDue(h.ctx)).toBe(1);
    rx.behave("/flaky", null);
    expect(await deliverDue(h.ctx)).toBe(1);
    expect(await deliverDue(h.ctx)).toBe(0);
    const list = await h.attempts(w.id);
    expect(list.map((a) => [a.attempt, a.status_code, a.error, a.event])).toEqual([
      [1, 500, "receiver answered HTTP 500", "push"],
      [2, 500, "receiver answered HTTP 500", "push"],
      [3, 500, "receiver answered HTTP 500", "push"],
      [4, 502, "receiver answered HTTP 502", "push"],
      [1, 200, null, "push"],
    ]);
    expect(new Set(list.slice(0, 4).map((a) => a.id)).size).toBe(1);
    expect(list[4]!.id).not.toBe(list[0]!.id);
    expect(rx.of("/flaky").map((r) => r.body.payload.via)).toEqual(["git", "git", "git", "git", "ssh"]);
    // Every attempt is one webhook.delivery operation of the org, with the body's bytes (the day buckets hold them all).
    const days = await h.ctx.db.read
      .select()
      .from(metricBuckets)
      .where(and(eq(metricBuckets.kind, "webhook.delivery"), eq(metricBuckets.grain, 1440)));
    expect(days.reduce((n, r) => n + r.count, 0)).toBe(5);
    expect(days.reduce((n, r) => n + r.bytes, 0)).toBe(5 * Buffer.byteLength(rx.of("/flaky")[0]!.raw));
  });

  test("a hook on a loopback address is refused again at delivery time when private receivers are not allowed", async () => {
    const h = await harness(false);
    // As if created while allowed, or a name that resolved elsewhere then: the check is on every attempt.
    await h.ctx.db.transaction((tx) =>
      hookStore.insertWebhook(tx, { id: "hook-private", repoId: h.repo.id, url: `${rx.url}/private`, secret: "s", createdAt: t }),
    );
    await h.event("push", { via: "git" });
    expect(await deliverDue(h.ctx)).toBe(1);
    const [a] = await h.attempts("hook-private");
    expect(a).toMatchObject({ attempt: 1, status_code: null, error: "127.0.0.1 resolves to 127.0.0.1, a loopback address; only public addresses are allowed" });
    expect(rx.of("/private")).toHaveLength(0);
  });

  test("an attempt that outlives its time limit is recorded as timed out", async () => {
    const h = await harness();
    const w = await subscribe(h, "/hang");
    let release!: () => void;
    rx.behave("/hang", { hold: new Promise<void>((r) => (release = r)) });
    await h.event("push", { via: "git" });
    expect(await deliverDue(h.ctx, { timeoutMs: 300 })).toBe(1);
    release();
    rx.behave("/hang", null);
    const [a] = await h.attempts(w.id);
    expect(a).toMatchObject({ status_code: null, error: "timed out after 0.3 s" });
  });

  test("deleting a hook drops what it still had queued", async () => {
    const h = await harness();
    const w = await subscribe(h, "/gone");
    await h.event("push", { via: "git" });
    await h.event("push", { via: "ssh" });
    await deleteWebhook(h.ctx, await openRepo(h.ctx, h.actor, "acme", h.repo.name), w.id);
    expect(await deliverDue(h.ctx)).toBe(0);
    expect(rx.of("/gone")).toHaveLength(0);
    expect((await h.ctx.db.read.select().from(repos).where(eq(repos.id, h.repo.id)))[0]).toBeDefined();
  });
});
