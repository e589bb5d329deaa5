// Webhook event selection, PATCH and redelivery against the real server (DECISIONS §2, §5; plan
// 28 §2, §3.8): a hook receives only the kinds it names (null: every kind), unknown kinds are
// 422, PATCH changes the selection, a stored delivery is sent again unchanged with a new
// X-Svc-Delivery and X-Svc-Redelivery-Of, and the change.* review events reach receivers with the
// documented payloads. Receivers are a local server that checks every signature.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, caller, person, type Person } from "../../helpers/api.ts";
import { eventually, startReceiver, type Receiver } from "../../helpers/receiver.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";

const T = 60_000;
let server: RunningServer;
let rx: Receiver;
let owner: Person;
let token: string;

beforeAll(async () => {
  server = await startServer({ env: { SVC_WEBHOOK_ALLOW_PRIVATE: "1" } });
  rx = startReceiver();
  owner = await person(server, "acme", "owner@acme.test", "owner");
  token = (await caller(server, owner).post("/v1/orgs/acme/tokens", { scopes: ["repo:write"], label: "api" })).body.token;
}, T);

afterAll(async () => {
  rx?.stop();
  await server?.[Symbol.asyncDispose]();
});

let repoCount = 0;
/** A new private repository of acme; returns its name and id. */
async function newRepo(): Promise<{ name: string; id: string }> {
  const name = `e${++repoCount}`;
  const r = await caller(server, owner).post("/v1/orgs/acme/repos", { name });
  expect(r.status).toBe(201);
  return { name, id: r.body.id };
}

/** Subscribes receiver path `path` to `repo` for `events` (omitted: the field is left out); registers its secret. */
async function hook(repo: string, path: string, events?: string[] | null): Promise<{ id: string; secret: string; events: string[] | null }> {
  const r = await caller(server, owner).post(`/v1/orgs/acme/repos/${repo}/webhooks`, { url: `${rx.url}${path}`, ...(events === undefined ? {} : { events }) });
  expect(r.status).toBe(201);
  rx.secret(path, r.body.secret);
  return r.body;
}

/** One commit on main through the commit API (a `push` event); returns the commit id. */
async function commit(repo: string, file: string): Promise<string> {
  const r = await caller(server, token).post(`/v1/orgs/acme/repos/${repo}/commits`, {
    branch: "main",
    message: `put ${file}`,
    operations: [{ op: "put", path: file, content: `${file}\n` }],
  });
  expect(r.status).toBe(201);
  return r.body.commit;
}

describe("event selection", () => {
  test(
    "create answers events; a hook gets only the kinds it names, null and absent get all; unknown kinds are 422",
    async () => {
      const repo = await newRepo();
      const all = await hook(repo.name, "/sel-all");
      const nul = await hook(repo.name, "/sel-null", null);
      const push = await hook(repo.name, "/sel-push", ["push", "push"]);
      const reviewed = await hook(repo.name, "/sel-reviewed", ["change.reviewed"]);
      expect([all.events, nul.events, push.events, reviewed.events]).toEqual([null, null, ["push"], ["change.reviewed"]]);
      const list = await caller(server, owner).get(`/v1/orgs/acme/repos/${repo.name}/webhooks`);
      expect(list.body.webhooks.map((w: { events: unknown }) => w.events)).toEqual([null, null, ["push"], ["change.reviewed"]]);

      const c1 = await commit(repo.name, "one.txt");
      await rx.until(() => ["/sel-all", "/sel-null", "/sel-push"].every((p) => rx.of(p).length === 1));
      for (const p of ["/sel-all", "/sel-null", "/sel-push"]) {
        const got = rx.of(p)[0]!;
        expect(got.signed).toBe(true);
        expect(got.body).toEqual({ event: "push", repo_id: repo.id, payload: { via: "api", commit: c1, branch: "main" } });
      }
      // The change.reviewed hook had nothing queued for that push: once it also takes push, the
      // first thing it receives (a hook's deliveries go in order) is the second push.
      const patched = await caller(server, owner).patch(`/v1/orgs/acme/repos/${repo.name}/webhooks/${reviewed.id}`, { events: ["change.reviewed", "push"] });
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual({
        id: reviewed.id,
        url: `${rx.url}/sel-reviewed`,
        events: ["change.reviewed", "push"],
        created_at: expect.any(Number),
        last_delivery: null,
      });
      const c2 = await commit(repo.name, "two.txt");
      await rx.until(() => rx.of("/sel-reviewed").length === 1 && rx.of("/sel-all").length === 2);
      expect(rx.of("/sel-reviewed")[0]!.body.payload.commit).toBe(c2);
      expect(rx.of("/sel-reviewed")[0]!.signed).toBe(true);

      // PATCH to push nothing more: events back to null takes every kind again.
      const back = await caller(server, owner).patch(`/v1/orgs/acme/repos/${repo.name}/webhooks/${push.id}`, { events: null });
      expect(back.body.events).toBeNull();
      const same = await caller(server, owner).patch(`/v1/orgs/acme/repos/${repo.name}/webhooks/${push.id}`, {});
      expect({ status: same.status, events: same.body.events }).toEqual({ status: 200, events: null });
    },
    T,
  );

  test(
    "unknown or empty events are 422, malformed 400; PATCH: unknown hook 404, member 403, outsider 404",
    async () => {
      const repo = await newRepo();
      const path = `/v1/orgs/acme/repos/${repo.name}/webhooks`;
      expectError(await caller(server, owner).post(path, { url: `${rx.url}/x`, events: ["push", "issue.nope"] }), 422, 'unknown event kind "issue.nope"');
      expectError(await caller(server, owner).post(path, { url: `${rx.url}/x`, events: [] }), 422, "at least one kind");
      expectError(await caller(server, owner).post(path, { url: `${rx.url}/x`, events: "push" }), 400);
      expectError(await caller(server, owner).post(path, { url: `${rx.url}/x`, events: [1] }), 400);
      expect((await caller(server, owner).get(path)).body).toEqual({ webhooks: [] });
      const h = await hook(repo.name, "/patch", ["push"]);
      expectError(await caller(server, owner).patch(`${path}/${h.id}`, { events: ["change.opened", "bogus"] }), 422, 'unknown event kind "bogus"');
      expectError(await caller(server, owner).patch(`${path}/nosuchhook0000000`, { events: ["push"] }), 404, "webhook not found");
      const member = await person(server, "acme", `member-${repo.name}@acme.test`, "member");
      const outsider = await person(server, "other", `out-${repo.name}@other.test`, "owner");
      expectError(await caller(server, member).patch(`${path}/${h.id}`, { events: null }), 403);
      expectError(await caller(server, outsider).patch(`${path}/${h.id}`, { events: null }), 404);
      expectError(await caller(server).patch(`${path}/${h.id}`, { events: null }), 401);
      const ok = await caller(server, owner).patch(`${path}/${h.id}`, {
        events: ["change.opened", "change.reviewed", "change.commented", "change.landed", "change.ejected"],
      });
      expect(ok.body.events).toEqual(["change.opened", "change.reviewed", "change.commented", "change.landed", "change.ejected"]);
      expect((await caller(server, owner).get(path)).body.webhooks[0].events).toEqual(ok.body.events);
    },
    T,
  );
});

describe("redelivery", () => {
  test(
    "202 { id }: the receiver gets the same body, signed, with a new X-Svc-Delivery and X-Svc-Redelivery-Of; the attempt is listed",
    async () => {
      const repo = await newRepo();
      const h = await hook(repo.name, "/re");
      await commit(repo.name, "a.txt");
      await rx.until(() => rx.of("/re").length === 1);
      const first = rx.of("/re")[0]!;
      expect(first.redeliveryOf).toBeNull();
      const base = `/v1/orgs/acme/repos/${repo.name}/webhooks/${h.id}/deliveries`;
      const r = await caller(server, owner).post(`${base}/${first.delivery}/redeliver`);
      expect(r.status).toBe(202);
      expect(Object.keys(r.body)).toEqual(["id"]);
      expect(r.body.id).not.toBe(first.delivery);
      await rx.until(() => rx.of("/re").length === 2);
      const again = rx.of("/re")[1]!;
      expect({ raw: again.raw, event: again.event, delivery: again.delivery, redeliveryOf: again.redeliveryOf, signed: again.signed }).toEqual({
        raw: first.raw,
        event: "push",
        delivery: r.body.id,
        redeliveryOf: first.delivery,
        signed: true,
      });
      const list = await eventually(async () => {
        const l = await caller(server, owner).get(base);
        return l.body.deliveries.length === 2 && l;
      });
      expect(list.body.deliveries.map((d: { id: string; event: string; attempt: number }) => [d.id, d.event, d.attempt])).toEqual([
        [r.body.id, "push", 1],
        [first.delivery, "push", 1],
      ]);
      // A redelivery can itself be redelivered; it names the delivery it copies.
      const r2 = await caller(server, owner).post(`${base}/${r.body.id}/redeliver`);
      expect(r2.status).toBe(202);
      await rx.until(() => rx.of("/re").length === 3);
      expect({ raw: rx.of("/re")[2]!.raw, redeliveryOf: rx.of("/re")[2]!.redeliveryOf }).toEqual({ raw: first.raw, redeliveryOf: r.body.id });
    },
    T,
  );

  test(
    "unknown delivery or one of another hook 404; unknown hook 404; member 403; outsider 404; nobody 401",
    async () => {
      const repo = await newRepo();
      const a = await hook(repo.name, "/re-a");
      const b = await hook(repo.name, "/re-b");
      await commit(repo.name, "b.txt");
      await rx.until(() => rx.of("/re-a").length === 1 && rx.of("/re-b").length === 1);
      const ofA = rx.of("/re-a")[0]!.delivery!;
      const hooks = `/v1/orgs/acme/repos/${repo.name}/webhooks`;
      expectError(await caller(server, owner).post(`${hooks}/${a.id}/deliveries/nosuchdelivery00/redeliver`), 404, "delivery not found");
      expectError(await caller(server, owner).post(`${hooks}/${b.id}/deliveries/${ofA}/redeliver`), 404, "delivery not found");
      expectError(await caller(server, owner).post(`${hooks}/nosuchhook000000/deliveries/${ofA}/redeliver`), 404, "webhook not found");
      const member = await person(server, "acme", `member-${repo.name}@acme.test`, "member");
      const outsider = await person(server, "other", `out-${repo.name}@other.test`, "owner");
      expectError(await caller(server, member).post(`${hooks}/${a.id}/deliveries/${ofA}/redeliver`), 403);
      expectError(await caller(server, outsider).post(`${hooks}/${a.id}/deliveries/${ofA}/redeliver`), 404);
      expectError(await caller(server).post(`${hooks}/${a.id}/deliveries/${ofA}/redeliver`), 401);
      // Nothing was queued by the refusals: the hook's next delivery is the next event's.
      const c = await commit(repo.name, "c.txt");
      await rx.until(() => rx.of("/re-a").length === 2);
      expect({ commit: rx.of("/re-a")[1]!.body.payload.commit, redeliveryOf: rx.of("/re-a")[1]!.redeliveryOf }).toEqual({ commit: c, redeliveryOf: null });
    },
    T,
  );
});

/** A repository with main and a branch `feature` one commit ahead, and a change for it; returns the change number. */
async function openChange(repo: string): Promise<{ number: number; head: string }> {
  const base = await commit(repo, "base.txt");
  const ref = await caller(server, token).put(`/v1/orgs/acme/repos/${repo}/refs/refs/heads/feature`, { target: base, expected: null });
  expect(ref.status).toBe(200);
  const r = await caller(server, token).post(`/v1/orgs/acme/repos/${repo}/commits`, {
    branch: "feature",
    message: "feature work",
    operations: [{ op: "put", path: "feature.txt", content: "one\ntwo\nthree\n" }],
  });
  expect(r.status).toBe(201);
  const opened = await caller(server, owner).post(`/v1/orgs/acme/repos/${repo}/changes`, { title: "adds feature", branch: "feature" });
  expect(opened.status).toBe(201);
  return { number: opened.body.number, head: r.body.commit };
}

describe("change.* events (payloads of docs/api.md, What a receiver gets)", () => {
  test(
    "change.reviewed: { change, review: { id, verdict, author, patchset }, comments }, signed; a hook for change.reviewed only gets just that; the review's line comments fire no change.commented",
    async () => {
      const repo = await newRepo();
      await hook(repo.name, "/rv-all");
      await hook(repo.name, "/rv-only", ["change.reviewed"]);
      const reviewer = await person(server, "acme", `rv-${repo.name}@acme.test`, "owner");
      const c = await openChange(repo.name);
      const review = await caller(server, reviewer).post(`/v1/orgs/acme/repos/${repo.name}/changes/${c.number}/reviews`, {
        verdict: "approve",
        body: "fine",
        comments: [
          { body: "nice first line", path: "feature.txt", line: 1, side: "new" },
          { body: "and the last", path: "feature.txt", line: 3, side: "new" },
        ],
      });
      expect(review.status).toBe(201);
      expect(review.body.comments.length).toBe(2);
      await rx.until(() => rx.of("/rv-only").length === 1 && rx.of("/rv-all").some((r) => r.event === "change.reviewed"));
      const got = rx.of("/rv-only")[0]!;
      expect({ signed: got.signed, event: got.event }).toEqual({ signed: true, event: "change.reviewed" });
      expect(JSON.parse(got.raw)).toEqual({
        event: "change.reviewed",
        repo_id: repo.id,
        payload: {
          change: c.number,
          review: { id: review.body.id, verdict: "approve", author: { user_id: reviewer.id, handle: reviewer.handle }, patchset: 1 },
          comments: 2,
        },
      });
      expect(rx.of("/rv-all").find((r) => r.event === "change.reviewed")!.raw).toBe(got.raw);
      // A comment posted on its own after the review: once its change.commented arrives (a hook's
      // deliveries go in event order), every event of the review has arrived too, and the review's
      // two line comments fired none of their own.
      const alone = await caller(server, reviewer).post(`/v1/orgs/acme/repos/${repo.name}/changes/${c.number}/comments`, { body: "one more thing" });
      expect(alone.status).toBe(201);
      await rx.until(() => rx.of("/rv-all").some((r) => r.event === "change.commented"));
      const all = rx.of("/rv-all");
      expect(all.map((r) => r.event)).toEqual(["push", "push", "push", "change.opened", "change.reviewed", "change.commented"]);
      expect(all[5]!.body.payload.comment.id).toBe(alone.body.id);
      expect(rx.of("/rv-only").length).toBe(1);
    },
    T,
  );
});

describe("change.opened and change.commented", () => {
  test(
    "change.opened: { change, title, branch, target, author, source }; change.commented for a line comment, a reply and a general comment; signed, in order",
    async () => {
      const repo = await newRepo();
      await hook(repo.name, "/ch-all");
      await hook(repo.name, "/ch-opened", ["change.opened"]);
      await hook(repo.name, "/ch-commented", ["change.commented"]);
      const c = await openChange(repo.name);
      await rx.until(() => rx.of("/ch-opened").length === 1);
      const opened = rx.of("/ch-opened")[0]!;
      expect({ signed: opened.signed, event: opened.event }).toEqual({ signed: true, event: "change.opened" });
      expect(JSON.parse(opened.raw)).toEqual({
        event: "change.opened",
        repo_id: repo.id,
        payload: {
          change: c.number,
          title: "adds feature",
          branch: "feature",
          target: "main",
          author: { user_id: owner.id, handle: owner.handle },
          source: null,
        },
      });

      const base = `/v1/orgs/acme/repos/${repo.name}/changes/${c.number}/comments`;
      const line = await caller(server, owner).post(base, { body: "why three?", path: "feature.txt", line: 3, side: "new" });
      expect(line.status).toBe(201);
      const reply = await caller(server, owner).post(base, { body: "because", in_reply_to: line.body.id });
      expect(reply.status).toBe(201);
      const general = await caller(server, owner).post(base, { body: "looks fine overall" });
      expect(general.status).toBe(201);
      await rx.until(() => rx.of("/ch-commented").length === 3);
      const got = rx.of("/ch-commented");
      expect(got.every((r) => r.signed === true && r.event === "change.commented")).toBe(true);
      const author = { user_id: owner.id, handle: owner.handle };
      expect(got.map((r) => JSON.parse(r.raw))).toEqual([
        {
          event: "change.commented",
          repo_id: repo.id,
          payload: { change: c.number, comment: { id: line.body.id, author, path: "feature.txt", line: 3, side: "new", in_reply_to: null } },
        },
        {
          event: "change.commented",
          repo_id: repo.id,
          payload: { change: c.number, comment: { id: reply.body.id, author, path: null, line: null, side: null, in_reply_to: line.body.id } },
        },
        {
          event: "change.commented",
          repo_id: repo.id,
          payload: { change: c.number, comment: { id: general.body.id, author, path: null, line: null, side: null, in_reply_to: null } },
        },
      ]);
      // The all-kinds hook got the same bodies, after the pushes and the opening, in event order.
      await rx.until(() => rx.of("/ch-all").filter((r) => r.event === "change.commented").length === 3);
      const all = rx.of("/ch-all");
      expect(all.map((r) => r.event)).toEqual(["push", "push", "push", "change.opened", "change.commented", "change.commented", "change.commented"]);
      expect(all.slice(4).map((r) => r.raw)).toEqual(got.map((r) => r.raw));
      expect(all[3]!.raw).toBe(opened.raw);
    },
    T,
  );
});
