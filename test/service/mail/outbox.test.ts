// The durable outbox (SPEC §5.7) against real transports: the capture transport writing files and
// a real SMTP relay (smtp-server). An in-process context on a temp data dir, as `svc serve` builds it.
// A message's scheduling (attempts, run time, lease) is its `mail.send` job (same id) on the
// engine (services/jobs); its state and bodies are the outbox row's.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { openContext } from "../../../src/runtime.ts";
import { openTestContext, testTables } from "../../helpers/context.ts";
import { now, setClock, type MailMessage } from "../../../src/services/context.ts";
import { deliverNow, enqueueMail } from "../../../src/services/mail/outbox.ts";
import { parseMail, startRelay, type Relay } from "../../helpers/mail-endpoints.ts";

type Ctx = Awaited<ReturnType<typeof openContext>>;
const { jobs, mailOutbox } = testTables;

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "svc-mail-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let restoreClock: (() => void) | null = null;
afterEach(() => {
  restoreClock?.();
  restoreClock = null;
});
/** Moves the service clock `ms` ahead of real time (instead of sleeping through a backoff). */
function advance(ms: number) {
  restoreClock?.();
  restoreClock = setClock(() => Date.now() + ms);
}

function open(dataDir: string, env: Record<string, string>): Promise<Ctx> {
  return openTestContext({ SVC_DATA_DIR: dataDir, SVC_LOG: "error", ...env });
}

const message = (n = 1): MailMessage => ({
  to: `person${n}@example.com`,
  subject: `Message ${n}`,
  text: `Follow https://git.example.test/verify?token=svcv_${n}`,
  html: `<p><a href="https://git.example.test/verify?token=svcv_${n}">confirm</a></p>`,
});

async function enqueue(ctx: Ctx, msg = message()): Promise<string> {
  const id = await ctx.db.transaction((tx) => enqueueMail(ctx, tx, msg));
  if (id === null) throw new Error("nothing queued");
  return id;
}

const row = async (ctx: Ctx, id: string) => (await ctx.db.read.select().from(mailOutbox).where(eq(mailOutbox.id, id)))[0]!;
/** The message's `mail.send` job: attempts, run time and lease. */
const job = async (ctx: Ctx, id: string) => (await ctx.db.read.select().from(jobs).where(eq(jobs.id, id)))[0]!;

/** The engine of `svc serve` on this context; `stop()` waits for running attempts. */
function startWorker(ctx: Ctx): { stop(): Promise<void> } {
  ctx.work.start();
  return { stop: () => ctx.work.stop() };
}

/** Polls `fn` until it returns a truthy value or the deadline passes. */
async function until<T>(fn: () => T | Promise<T>, what: string, ms = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const emlFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".eml"));

describe("capture transport", () => {
  test("enqueue → deliverNow: one .eml file with both parts; the row is sent and its bodies cleared", async () => {
    const mailDir = tempDir();
    const ctx = await open(tempDir(), { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir, SVC_MAIL_FROM: "svc@example.test" });
    try {
      const id = await enqueue(ctx);
      expect(await row(ctx, id)).toMatchObject({ toAddress: "person1@example.com", textBody: message().text, htmlBody: message().html, sentAt: null });
      expect(await job(ctx, id)).toMatchObject({ kind: "mail.send", attempts: 0, doneAt: null });
      expect(await deliverNow(ctx, id)).toEqual({ sent: true });
      const files = emlFiles(mailDir);
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/^\d{13}-\d{9}-[a-z2-7]{16}\.eml$/);
      expect(readdirSync(mailDir)).toEqual(files); // no temp file left behind
      const parsed = await parseMail(readFileSync(join(mailDir, files[0]!)));
      expect(parsed).toMatchObject({ from: "svc@example.test", to: "person1@example.com", subject: "Message 1" });
      expect(parsed.text.trim()).toBe(message().text);
      expect(parsed.html).toContain(`href="https://git.example.test/verify?token=svcv_1"`);
      expect(await row(ctx, id)).toMatchObject({ textBody: "", htmlBody: "", lastError: null });
      expect(await job(ctx, id)).toMatchObject({ lockedUntil: null, attempts: 1 });
      expect((await row(ctx, id)).sentAt).toBeGreaterThan(0);
      // A second call finds it sent and sends nothing more.
      expect(await deliverNow(ctx, id)).toEqual({ sent: true });
      expect(emlFiles(mailDir)).toHaveLength(1);
    } finally {
      ctx.close();
    }
  });

  test("a restart delivers what was queued before it, and retries an attempt cut short after its lease", async () => {
    const dataDir = tempDir();
    const mailDir = tempDir();
    const env = { SVC_MAIL_TRANSPORT: "capture", SVC_MAIL_DIR: mailDir };
    const first = await open(dataDir, env);
    const queued = await enqueue(first, message(1));
    const cut = await enqueue(first, message(2));
    // The process dies in the middle of an attempt: the row stays leased.
    await first.db.transaction((tx) =>
      tx
        .update(jobs)
        .set({ lockedUntil: now() + 120_000, leaseToken: "dead.1", attempts: 1 })
        .where(eq(jobs.id, cut)),
    );
    first.close();

    const second = await open(dataDir, env);
    const worker = startWorker(second);
    try {
      await until(async () => (await row(second, queued)).sentAt, "the queued message to be sent");
      expect(emlFiles(mailDir)).toHaveLength(1);
      expect((await row(second, cut)).sentAt).toBeNull();
      advance(121_000);
      second.signals.notify("work", "mail.send");
      await until(async () => (await row(second, cut)).sentAt, "the leased message to be retried");
      const subjects = await Promise.all(emlFiles(mailDir).map(async (f) => (await parseMail(readFileSync(join(mailDir, f)))).subject));
      expect(subjects.sort()).toEqual(["Message 1", "Message 2"]);
      expect(await row(second, cut)).toMatchObject({ textBody: "", htmlBody: "" });
      expect((await job(second, cut)).attempts).toBe(2);
    } finally {
      await worker.stop();
      second.close();
    }
  });
});

describe("null transport", () => {
  test("enqueue writes nothing and deliverNow reports no transport", async () => {
    const ctx = await open(tempDir(), {});
    try {
      expect(ctx.mail).toBeNull();
      expect(await ctx.db.transaction((tx) => enqueueMail(ctx, tx, message()))).toBeNull();
      expect(await ctx.db.read.select().from(mailOutbox)).toEqual([]);
      expect(await deliverNow(ctx, null)).toEqual({ sent: false });
      await startWorker(ctx).stop();
    } finally {
      ctx.close();
    }
  });
});

describe("smtp transport through the outbox", () => {
  let relay: Relay;
  let ctx: Ctx;
  beforeAll(async () => {
    relay = await startRelay();
    ctx = await open(tempDir(), { SVC_MAIL_TRANSPORT: "smtp", SVC_MAIL_SMTP_HOST: `127.0.0.1:${relay.port}`, SVC_MAIL_FROM: "svc@example.test" });
  });
  afterAll(async () => {
    ctx.close();
    await relay.close();
  });
  afterEach(() => {
    relay.refuse = false;
  });

  test("deliverNow hands the message to the relay", async () => {
    const id = await enqueue(ctx, message(10));
    expect(await deliverNow(ctx, id)).toEqual({ sent: true });
    const got = await relay.waitFor((m) => m.to[0] === "person10@example.com");
    expect({ from: got.from, to: got.to, secure: got.secure }).toEqual({ from: "svc@example.test", to: ["person10@example.com"], secure: false });
    const parsed = await parseMail(got.raw);
    expect(parsed.text.trim()).toBe(message(10).text);
    expect(parsed.html).toContain("token=svcv_10");
    expect(await row(ctx, id)).toMatchObject({ textBody: "", htmlBody: "" });
  });

  test("relay down: the error is reported, the row waits 30 s, and the worker delivers it once due and the relay is back", async () => {
    relay.refuse = true;
    const id = await enqueue(ctx, message(11));
    const t0 = now();
    const result = await deliverNow(ctx, id);
    expect(result.sent).toBe(false);
    expect(result.error).toMatch(/421|down for maintenance/);
    const failed = await row(ctx, id);
    expect(failed).toMatchObject({ sentAt: null, failedAt: null, textBody: message(11).text });
    expect(failed.lastError).toBe(result.error!);
    const waiting = await job(ctx, id);
    expect(waiting).toMatchObject({ attempts: 1, lockedUntil: null, doneAt: null });
    expect(waiting.runAt - t0).toBeGreaterThanOrEqual(30_000);
    expect(waiting.runAt - t0).toBeLessThan(31_000);

    relay.refuse = false;
    const worker = startWorker(ctx);
    try {
      advance(31_000);
      ctx.signals.notify("work", "mail.send");
      const got = await relay.waitFor((m) => m.to[0] === "person11@example.com");
      expect((await parseMail(got.raw)).text).toContain("token=svcv_11");
      await until(async () => (await row(ctx, id)).sentAt, "the retried row to be marked sent");
      expect(await row(ctx, id)).toMatchObject({ lastError: null, textBody: "", htmlBody: "" });
      expect((await job(ctx, id)).attempts).toBe(2);
      expect(relay.messages.filter((m) => m.to[0] === "person11@example.com")).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });

  test("deliverNow joins an attempt the worker already started: one message, one answer", async () => {
    const worker = startWorker(ctx);
    const release = relay.hold();
    try {
      const connected = relay.nextConnection();
      const id = await enqueue(ctx, message(12));
      ctx.signals.notify("work", "mail.send");
      await connected;
      const answer = deliverNow(ctx, id, 10_000);
      release();
      expect(await answer).toEqual({ sent: true });
      expect(relay.messages.filter((m) => m.to[0] === "person12@example.com")).toHaveLength(1);
    } finally {
      release();
      await worker.stop();
    }
  });

  test("a slow relay: deliverNow answers within waitMs and the attempt still records its outcome", async () => {
    const release = relay.hold();
    try {
      const id = await enqueue(ctx, message(13));
      const started = Date.now();
      const result = await deliverNow(ctx, id, 200);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(result).toEqual({ sent: false, error: "delivery is still in progress; it will be retried if it fails" });
      expect((await row(ctx, id)).sentAt).toBeNull();
      release();
      await relay.waitFor((m) => m.to[0] === "person13@example.com");
      await until(async () => (await row(ctx, id)).sentAt, "the background attempt to record its outcome");
      expect(await row(ctx, id)).toMatchObject({ textBody: "", htmlBody: "" });
      expect((await job(ctx, id)).attempts).toBe(1);
    } finally {
      release();
    }
  });

  test("backoff doubles from 30 s; after 8 attempts the message is given up and its bodies cleared", async () => {
    relay.refuse = true;
    // A stopped clock: each runAt is exactly T plus its backoff.
    const T = Date.now();
    restoreClock = setClock(() => T);
    const id = await enqueue(ctx, message(14));
    const delays: number[] = [];
    for (let i = 1; i <= 7; i++) {
      expect((await deliverNow(ctx, id)).sent).toBe(false);
      delays.push((await job(ctx, id)).runAt - T);
    }
    expect(delays).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000]);
    const last = await deliverNow(ctx, id);
    expect(last.sent).toBe(false);
    expect(await row(ctx, id)).toMatchObject({ failedAt: T, textBody: "", htmlBody: "" });
    expect(await job(ctx, id)).toMatchObject({ attempts: 8, doneAt: T, lockedUntil: null });
    // Given up: nothing more is attempted, and the answer repeats the last reason.
    const connections = relay.connections;
    expect(await deliverNow(ctx, id)).toEqual({ sent: false, error: last.error! });
    expect(relay.connections).toBe(connections);
  });
});
