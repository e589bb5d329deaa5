// The durable-work engine (services/jobs/engine.ts) on a real database: per-key order with a
// retrying head holding the rest back, unique folding (enqueueMany's multi-row inserts too), retry and give-up by the kind's rule,
// Later and Released (uncounted), lease renewal and a lost lease aborting the attempt and
// fencing its outcome, periodic cluster kinds once per slot across two engines, wake-ups after
// COMMIT only, and a dispatcher that survives a database refusing its claims.
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openContext } from "../../../src/runtime.ts";
import { openTestContext, otherConnection, testTables } from "../../helpers/context.ts";
import { setClock } from "../../../src/services/context.ts";
import { LocalSignals } from "../../../src/services/events/signals.ts";
import { LeaseLost, Later, Released, WorkEngine, type Attempt } from "../../../src/services/jobs/engine.ts";
import { jobKind, type JobKind } from "../../../src/services/jobs/kind.ts";

const root = mkdtempSync(join(tmpdir(), "svc-engine-"));
const { jobs } = testTables;
type Ctx = Awaited<ReturnType<typeof openContext>>;
const open: Ctx[] = [];
let restore: (() => void) | null = null;
afterEach(async () => {
  restore?.();
  restore = null;
  for (const c of open.splice(0)) {
    await c.work.stop();
    c.close();
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
async function context(dir = join(root, String(++n))): Promise<Ctx> {
  const ctx = await openTestContext({ SVC_DATA_DIR: dir, SVC_LOG: "error" });
  open.push(ctx);
  return ctx;
}

/** Polls `fn` until it is truthy or the deadline passes (waits for an event, never a fixed time). */
async function until<T>(fn: () => T | Promise<T>, what: string, ms = 20_000): Promise<NonNullable<T>> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

const row = async (ctx: Ctx, id: string) => (await ctx.db.read.select().from(jobs).where(eq(jobs.id, id)))[0]!;
const enqueue = <P>(ctx: Ctx, kind: JobKind<P>, p: P, o?: { delayMs?: number }) => ctx.db.transaction((tx) => ctx.work.enqueue(tx, kind, p, o));

/** Stops the service clock at `t` (moved by hand). */
function clockAt(t: { now: number }) {
  restore?.();
  restore = setClock(() => t.now);
}

test("per key: one at a time in order; a failing head holds its key back until its retry, other keys go on", async () => {
  const ctx = await context();
  const t = { now: Date.now() };
  clockAt(t);
  const kind = jobKind<{ k: string; n: number }>("test.ordered", { key: (p) => p.k, concurrency: 4, retry: { delaysMs: [10_000] } });
  const ran: string[] = [];
  let failFirst = true;
  ctx.work.define(kind, async (_c, p) => {
    ran.push(`${p.k}${p.n}`);
    if (p.k === "a" && p.n === 1 && failFirst) {
      failFirst = false;
      throw new Error("receiver down");
    }
  });
  for (let i = 1; i <= 3; i++) await enqueue(ctx, kind, { k: "a", n: i });
  await enqueue(ctx, kind, { k: "b", n: 1 });
  // One pass claims each key's head only: a1 fails, b1 runs.
  expect(await ctx.work.runDue({ kinds: [kind] })).toBe(2);
  expect(ran.sort()).toEqual(["a1", "b1"]);
  // a2 waits behind the retrying a1, even though it is due.
  expect(await ctx.work.runDue({ kinds: [kind] })).toBe(0);
  t.now += 10_000;
  while ((await ctx.work.runDue({ kinds: [kind] })) > 0);
  expect(ran).toEqual(["a1", "b1", "a1", "a2", "a3"]);
});

test("unique: an enqueue while one waits folds into it (sooner wins); once started, the next one queues", async () => {
  const ctx = await context();
  const t = { now: Date.now() };
  clockAt(t);
  const kind = jobKind<{ r: string }>("test.unique", { key: (p) => `r:${p.r}`, unique: (p) => p.r });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const ran: string[] = [];
  ctx.work.define(kind, async (_c, p) => {
    ran.push(p.r);
    await gate;
  });
  const a = await enqueue(ctx, kind, { r: "x" }, { delayMs: 60_000 });
  expect(await enqueue(ctx, kind, { r: "x" }, { delayMs: 120_000 })).toBe(a);
  expect((await row(ctx, a)).runAt).toBe(t.now + 60_000);
  expect(await enqueue(ctx, kind, { r: "x" })).toBe(a);
  expect((await row(ctx, a)).runAt).toBe(t.now);
  expect(await ctx.db.read.select().from(jobs).where(eq(jobs.kind, kind.name))).toHaveLength(1);
  // Running: a new request is a second row, behind the first (same key).
  const pass = ctx.work.runDue({ kinds: [kind] });
  await until(() => ran.length === 1, "the first run");
  const b = await enqueue(ctx, kind, { r: "x" });
  expect(b).not.toBe(a);
  release();
  expect(await pass).toBe(1);
  expect(await ctx.work.runDue({ kinds: [kind] })).toBe(1);
  expect(ran).toEqual(["x", "x"]);
});

test("enqueueMany: multi-row inserts with enqueue's unique folding (within the batch too), per-key order and payload order in one ms", async () => {
  const ctx = await context();
  const t = { now: Date.now() };
  clockAt(t);
  const mail = jobKind<{ u: string }>("test.many", { unique: (p) => p.u, concurrency: 8 });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const ran: string[] = [];
  ctx.work.define(mail, async (_c, p) => {
    ran.push(p.u);
    await gate;
  });
  const many = <P>(kind: JobKind<P>, ps: P[], o?: { delayMs?: number }) => ctx.db.transaction((tx) => ctx.work.enqueueMany(tx, kind, ps, o));
  const a = await enqueue(ctx, mail, { u: "a" }, { delayMs: 120_000 });
  // "a" folds into the pending row (sooner wins), the two "b" into one new row.
  const ids = await many(mail, [{ u: "a" }, { u: "b" }, { u: "b" }, { u: "c" }], { delayMs: 60_000 });
  expect(ids[0]).toBe(a);
  expect(ids[1]).toBe(ids[2]!);
  expect(new Set(ids).size).toBe(3);
  expect((await row(ctx, a)).runAt).toBe(t.now + 60_000);
  expect(await many(mail, [{ u: "a" }], { delayMs: 120_000 })).toEqual([a]);
  expect((await row(ctx, a)).runAt).toBe(t.now + 60_000);
  const pending = await ctx.db.read.select().from(jobs).where(eq(jobs.kind, mail.name));
  expect(pending.map((r) => [r.id, r.uniqueKey]).sort()).toEqual([...new Set(ids)].map((id, i) => [id, ["a", "b", "c"][i]!]).sort());
  // Started rows take no folds: the next ones are new rows.
  t.now += 60_000;
  const pass = ctx.work.runDue({ kinds: [mail] });
  await until(() => ran.length === 3, "the three runs");
  const again = await many(mail, [{ u: "a" }, { u: "c" }]);
  expect(again.filter((id) => ids.includes(id))).toEqual([]);
  release();
  expect(await pass).toBe(3);
  expect(await ctx.work.runDue({ kinds: [mail] })).toBe(2);
  expect(ran.sort()).toEqual(["a", "a", "b", "c", "c"]);

  // Per key: the batch queues behind the key's pending rows, in payload order; rows written in one
  // millisecond list by (created_at, id) in the order enqueued.
  const keyed = jobKind<{ k: string; n: number }>("test.many-keyed", { key: (p) => p.k, concurrency: 4 });
  const order: string[] = [];
  ctx.work.define(keyed, async (_c, p) => void order.push(`${p.k}${p.n}`));
  await enqueue(ctx, keyed, { k: "x", n: 0 });
  const batch = [
    { k: "x", n: 1 },
    { k: "x", n: 2 },
    { k: "y", n: 1 },
    { k: "x", n: 3 },
  ];
  const kids = await many(keyed, batch);
  const written = await ctx.db.read.select().from(jobs).where(eq(jobs.kind, keyed.name));
  const byId = written.filter((r) => kids.includes(r.id)).sort((p, q) => p.createdAt - q.createdAt || (p.id < q.id ? -1 : 1));
  expect(byId.map((r) => r.id)).toEqual(kids);
  const xs = written.filter((r) => r.key === "x").sort((p, q) => p.seq - q.seq);
  expect(xs.map((r) => (r.payload as { n: number }).n)).toEqual([0, 1, 2, 3]);
  while ((await ctx.work.runDue({ kinds: [keyed] })) > 0);
  expect(order.filter((s) => s.startsWith("x"))).toEqual(["x0", "x1", "x2", "x3"]);
  expect(order).toContain("y1");

  // Past one statement's rows (chunked): every payload gets its row.
  const bulk = jobKind<{ u: string }>("test.many-bulk", { unique: (p) => p.u });
  const bulkIds = await many(
    bulk,
    Array.from({ length: 1200 }, (_, i) => ({ u: `u${i}` })),
    { delayMs: 60_000 },
  );
  expect(new Set(bulkIds).size).toBe(1200);
  expect(await ctx.db.read.select({ id: jobs.id }).from(jobs).where(eq(jobs.kind, bulk.name))).toHaveLength(1200);
});

test("retry by the kind's rule, then given up with the last error; Later reschedules uncounted", async () => {
  const ctx = await context();
  const t = { now: Date.now() };
  clockAt(t);
  const failing = jobKind<{}>("test.failing", { retry: { firstMs: 1000, maxMs: 3000, attempts: 4 } });
  const seen: { n: number; final: boolean }[] = [];
  ctx.work.define(failing, async (_c, _p, at) => {
    seen.push({ n: at.n, final: at.final });
    throw new Error(`boom ${at.n}`);
  });
  const id = await enqueue(ctx, failing, {});
  const waits: number[] = [];
  for (let i = 0; i < 4; i++) {
    expect(await ctx.work.runDue({ kinds: [failing] })).toBe(1);
    const r = await row(ctx, id);
    waits.push(r.runAt - t.now);
    t.now = r.runAt;
  }
  expect(seen).toEqual([
    { n: 1, final: false },
    { n: 2, final: false },
    { n: 3, final: false },
    { n: 4, final: true },
  ]);
  expect(waits).toEqual([1000, 2000, 3000, 0]);
  expect(await row(ctx, id)).toMatchObject({ attempts: 4, lastError: "boom 4", lockedUntil: null, leaseToken: null });
  expect((await row(ctx, id)).doneAt).toBe(t.now);
  expect(await ctx.work.runNow(id, 1000)).toEqual({ state: "failed", error: "boom 4" });

  const later = jobKind<{}>("test.later");
  let calls = 0;
  ctx.work.define(later, async () => {
    if (++calls < 3) throw new Later(500);
  });
  const l = await enqueue(ctx, later, {});
  expect(await ctx.work.runDue({ kinds: [later] })).toBe(1);
  expect(await row(ctx, l)).toMatchObject({ attempts: 0, runAt: t.now + 500, doneAt: null });
  t.now += 500;
  expect(await ctx.work.runDue({ kinds: [later] })).toBe(1);
  t.now += 500;
  expect(await ctx.work.runDue({ kinds: [later] })).toBe(1);
  expect(await row(ctx, l)).toMatchObject({ attempts: 1, doneAt: t.now, lastError: null });
});

test("stop aborts a running attempt: Released gives the row back uncounted; complete() commits with the job", async () => {
  const ctx = await context();
  const kind = jobKind<{}>("test.stoppable", { leaseMs: 60_000 });
  let started = false;
  ctx.work.define(kind, async (_c, _p, at) => {
    started = true;
    await new Promise<void>((resolve) => at.signal.addEventListener("abort", () => resolve()));
    throw new Released();
  });
  const id = await enqueue(ctx, kind, {});
  ctx.work.start();
  await until(() => started, "the attempt to start");
  expect((await row(ctx, id)).leaseToken).not.toBeNull();
  await ctx.work.stop();
  expect(await row(ctx, id)).toMatchObject({ attempts: 0, lockedUntil: null, leaseToken: null, doneAt: null });

  const closing = jobKind<{}>("test.complete");
  ctx.work.define(closing, async (c, _p, at) => {
    await at.complete(async (tx) => void (await c.work.enqueue(tx, kind, {}, { delayMs: 3_600_000 })));
  });
  const c = await enqueue(ctx, closing, {});
  expect(await ctx.work.runDue({ kinds: [closing] })).toBe(1);
  expect((await row(ctx, c)).doneAt).not.toBeNull();
  expect(await ctx.db.read.select().from(jobs).where(eq(jobs.kind, kind.name))).toHaveLength(2);
});

test("the lease is renewed while the handler runs; a lost lease aborts the attempt and fences its outcome", async () => {
  const ctx = await context();
  const kind = jobKind<{}>("test.lease", { leaseMs: 300 });
  let at!: Attempt;
  let finished: unknown = null;
  ctx.work.define(kind, async (_c, _p, a) => {
    at = a;
    await new Promise<void>((resolve) => a.signal.addEventListener("abort", () => resolve()));
    try {
      await a.complete(async () => {});
    } catch (e) {
      finished = e;
    }
  });
  const id = await enqueue(ctx, kind, {});
  const pass = ctx.work.runDue({ kinds: [kind] });
  await until(() => at, "the attempt to start");
  const first = (await row(ctx, id)).lockedUntil!;
  await until(async () => (await row(ctx, id)).lockedUntil! > first, "a renewal");
  // Another node took the row (its lease ran out there): the next renewal finds it gone.
  await ctx.db.transaction((tx) => tx.update(jobs).set({ leaseToken: "other.1" }).where(eq(jobs.id, id)));
  await pass;
  expect(at.signal.reason).toBeInstanceOf(LeaseLost);
  expect(finished).toBeInstanceOf(LeaseLost);
  expect(await row(ctx, id)).toMatchObject({ leaseToken: "other.1", doneAt: null, attempts: 1 });
});

test("a cluster periodic kind runs once per slot across two engines on one database", async () => {
  const ctx = await context();
  // A second node: its own engine and signals on the same database (two contexts in one process
  // would block each other in SQLite's busy wait; the slot is decided by the database alone).
  const other = new WorkEngine(
    ctx.db,
    new LocalSignals(ctx.db),
    () => ctx,
    () => ctx.log,
  );
  const t = { now: Math.ceil(Date.now() / 3_600_000) * 3_600_000 + 10 };
  clockAt(t);
  const kind = jobKind<unknown>("test.periodic", { every: { ms: 3_600_000, scope: "cluster", immediate: true } });
  const ran: string[] = [];
  ctx.work.define(kind, async () => void ran.push("a"));
  other.define(kind, async () => void ran.push("b"));
  try {
    ctx.work.start();
    other.start();
    const rows = () => ctx.db.read.select().from(jobs).where(eq(jobs.kind, kind.name));
    await until(async () => (await rows()).length === 1 && (await rows())[0]!.doneAt !== null, "the first slot's run");
    expect(ran).toHaveLength(1);
    // A restart within the slot runs nothing more (the slot is recorded, not a timer's start).
    const restart = async () => {
      await Promise.all([ctx.work.stop(), other.stop()]);
      ctx.work.start();
      other.start();
    };
    await restart();
    // The next slot: once more, by one of them.
    t.now += 3_600_000;
    await restart();
    await until(async () => (await rows()).length === 2 && (await rows()).every((r) => r.doneAt !== null), "the next slot's run");
    expect(ran).toHaveLength(2);
    const slot = Math.floor(t.now / 3_600_000);
    expect((await rows()).map((r) => (r.payload as { slot: number }).slot).sort()).toEqual([slot - 1, slot]);
  } finally {
    await other.stop();
  }
});

test("wake-ups go out after COMMIT only: a rolled-back enqueue wakes nobody and leaves no row", async () => {
  const ctx = await context();
  const kind = jobKind<{}>("test.wake");
  ctx.work.define(kind, async () => {});
  const woken: string[] = [];
  ctx.signals.subscribe("work", (k) => void woken.push(k));
  await ctx.db
    .transaction(async (tx) => {
      await ctx.work.enqueue(tx, kind, {});
      expect(woken).toEqual([]);
      throw new Error("rolled back");
    })
    .catch(() => undefined);
  expect(woken).toEqual([]);
  expect(await ctx.db.read.select().from(jobs).where(eq(jobs.kind, kind.name))).toEqual([]);
  await ctx.db.transaction(async (tx) => {
    await ctx.work.enqueue(tx, kind, {});
    expect(woken).toEqual([]);
  });
  expect(woken).toEqual([kind.name]);
});

test("a failing claim is logged and retried; the dispatcher goes on and runs the next job", async () => {
  const dataDir = join(root, "refusing");
  const ctx = await context(dataDir);
  const errors: string[] = [];
  ctx.log = { ...ctx.log, error: (msg: string) => void errors.push(msg) };
  const kind = jobKind<{ r: string }>("test.refused");
  const ran: unknown[] = [];
  ctx.work.define(kind, async (_c, p) => void ran.push(p));
  // Another connection takes the jobs table away: every claim fails until it is back.
  const other = await otherConnection(dataDir);
  try {
    await other.exec("ALTER TABLE jobs RENAME TO jobs_away");
    ctx.work.start();
    await until(() => errors.includes("job claim failed"), "a logged claim failure");
    await other.exec("ALTER TABLE jobs_away RENAME TO jobs");
    await enqueue(ctx, kind, { r: "r1" });
    await until(() => ran.length === 1, "the job to run");
    expect(ran).toEqual([{ r: "r1" }]);
  } finally {
    await other.close();
  }
});

test("a claim that fails after reserving rows of one kind gives them back: the kind runs later and stop() returns", async () => {
  const dataDir = join(root, String(++n));
  const ctx = await context(dataDir);
  const first = jobKind<{ r: string }>("test.first");
  const second = jobKind<{ r: string }>("test.second");
  const ran: string[] = [];
  ctx.work.define(first, async (_c, p) => void ran.push(`first ${p.r}`));
  ctx.work.define(second, async (_c, p) => void ran.push(`second ${p.r}`));
  await enqueue(ctx, first, { r: "a" });
  await enqueue(ctx, second, { r: "b" });
  // Another connection makes the second kind's claim fail (as a serialization failure on a later
  // statement does on PostgreSQL), after the first kind's row was claimed in the same transaction.
  const other = await otherConnection(dataDir);
  try {
    await other.exec({
      sqlite: "CREATE TRIGGER refuse_second BEFORE UPDATE ON jobs WHEN OLD.kind = 'test.second' BEGIN SELECT RAISE(ABORT, 'refused'); END",
      pg:
        "CREATE FUNCTION refuse_second() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$; " +
        "CREATE TRIGGER refuse_second BEFORE UPDATE ON jobs FOR EACH ROW WHEN (OLD.kind = 'test.second') EXECUTE FUNCTION refuse_second()",
    });
    // (PostgreSQL's refusal arrives as the cause of drizzle's "Failed query" error.)
    const refusal = await ctx.work.runDue({ kinds: [first, second] }).then(
      () => null,
      (e: Error) => e,
    );
    expect(String(refusal?.cause ?? refusal)).toContain("refused");
    expect(ran).toEqual([]);
    await other.exec({ sqlite: "DROP TRIGGER refuse_second", pg: "DROP TRIGGER refuse_second ON jobs; DROP FUNCTION refuse_second()" });
  } finally {
    await other.close();
  }
  // Nothing of the failed claim is left registered: the dispatcher (which keeps to each kind's
  // concurrency of 1) runs both, and stop() has no attempt to wait for that never started.
  ctx.work.start();
  await until(() => ran.length === 2, "both kinds to run");
  expect(ran.sort()).toEqual(["first a", "second b"]);
  await ctx.work.stop();
});
