// The durable mail outbox (SPEC §5.7, DESIGN "Background work"): a message is a `mail_outbox`
// row written in the transaction of the event that causes it; delivery happens afterwards, by
// `deliverNow` (a request that reports the result, bounded in time) or by the worker of
// `svc serve`. So a slow relay never holds a request and a restart loses no mail.
// Delivery is at least once: a crash between the relay's acceptance and the row's update repeats it.
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx, type MailMessage } from "../context.ts";
import * as store from "./store.ts";
import type { OutboxRow as Row } from "./store.ts";

/** How long one claimed attempt owns its row; longer than any transport's own time limits. */
const LEASE_MS = 2 * 60 * 1000;
/** Attempts before a message is given up on (the last one about an hour after the first). */
const MAX_ATTEMPTS = 8;
const FIRST_BACKOFF_MS = 30_000;
const MAX_BACKOFF_MS = 3_600_000;
/** The worker looks for due rows at least this often, besides being woken when a message is queued. */
const POLL_MS = 5_000;
const MIN_WAIT_MS = 200;
/** Rows one worker pass sends concurrently. */
const BATCH = 4;

/** The outcome of one delivery as the invitation response reports it (SPEC §5.7 `mail`). */
export interface MailResult {
  sent: boolean;
  error?: string;
}

/** Attempts running in this process, by row id: `deliverNow` joins one the worker started, and vice versa. */
const inflight = new Map<string, Promise<MailResult>>();
/** Queues a message inside the caller's transaction; null (nothing written) under the null transport. */
export async function enqueueMail(ctx: Ctx, tx: Tx, msg: MailMessage): Promise<string | null> {
  if (!ctx.mail) return null;
  const id = newId();
  const t = now();
  await store.insertMessage(tx, { id, toAddress: msg.to, subject: msg.subject, textBody: msg.text, htmlBody: msg.html, runAt: t, createdAt: t });
  // The mail worker is woken once this commits.
  ctx.signals.notify("work", "mail.send", tx);
  return id;
}

/**
 * Tries to deliver one queued message now, waiting at most `waitMs` for the outcome.
 * null id → `{ sent: false }` (no transport). A failure leaves the row queued for the worker's retry.
 */
export async function deliverNow(ctx: Ctx, id: string | null, waitMs = 5000): Promise<MailResult> {
  if (id === null || !ctx.mail) return { sent: false };
  let attempt = inflight.get(id);
  try {
    if (!attempt) {
      const row = await claimOne(ctx, id);
      if (row) attempt = startAttempt(ctx, row);
      // The worker (woken by the commit) may have claimed it just before us: join its attempt.
      for (let i = 0; !attempt && i < 20; i++) {
        await new Promise((r) => setImmediate(r));
        attempt = inflight.get(id);
      }
    }
    if (!attempt) {
      const row = await store.messageById(ctx.db.read, id);
      if (!row) return { sent: false, error: "message not found in the outbox" };
      if (row.sentAt !== null) return { sent: true };
      if (row.failedAt !== null) return { sent: false, error: row.lastError ?? "delivery failed" };
      // Leased by another process: its outcome is recorded there.
      return { sent: false, error: IN_PROGRESS };
    }
  } catch (error) {
    // The caller's event is already committed: a busy database must not turn it into a 500.
    ctx.log.error("mail outbox claim failed", { outbox_id: id, error: String(error) });
    return { sent: false, error: "mail is queued; delivery will be retried" };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<MailResult>((resolve) => {
    timer = setTimeout(() => resolve({ sent: false, error: IN_PROGRESS }), waitMs);
  });
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const IN_PROGRESS = "delivery is still in progress; it will be retried if it fails";

/** Starts the delivery loop of `svc serve`; `stop()` lets running attempts record their outcome. */
export function startMailWorker(ctx: Ctx): { stop(): Promise<void> } {
  if (!ctx.mail) return { stop: async () => {} };
  let stopped = false;
  let wake: (() => void) | null = null;
  // A notification that arrives while the loop is busy (claiming, sending) is remembered, so the
  // loop claims again instead of sleeping past it.
  let notified = false;
  const waker = () => {
    notified = true;
    wake?.();
  };
  const unsubscribe = ctx.signals.subscribe("work", (kind) => {
    if (kind === "mail.send") waker();
  });
  const loop = async () => {
    while (!stopped) {
      let rows: Row[] = [];
      notified = false;
      try {
        rows = await claimDue(ctx);
      } catch (error) {
        ctx.log.error("mail outbox claim failed", { error: String(error) });
      }
      if (rows.length > 0) {
        await Promise.all(rows.map((row) => startAttempt(ctx, row)));
        continue;
      }
      if (stopped) break;
      if (notified) continue;
      const next = await safeNextDue(ctx);
      // The floor keeps a database that refuses claims from turning this into a busy loop.
      const delay = next === null ? POLL_MS : Math.min(POLL_MS, Math.max(MIN_WAIT_MS, next - now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  };
  const done = loop();
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      wake?.();
      await done;
      // deliverNow attempts still running record their outcome before the database closes.
      await Promise.all(inflight.values());
    },
  };
}

/** Leases one row by id when it is still pending and nobody holds it. */
function claimOne(ctx: Ctx, id: string): Promise<Row | null> {
  return ctx.db.transaction((tx) => {
    const t = now();
    return store.leaseMessage(tx, id, t, t + LEASE_MS);
  });
}

/** Leases up to BATCH due rows, oldest first. */
function claimDue(ctx: Ctx): Promise<Row[]> {
  return ctx.db.transaction((tx) => {
    const t = now();
    return store.leaseDueMessages(tx, t, t + LEASE_MS, BATCH);
  });
}

/** When the earliest pending row falls due (null when none is pending or the read fails). */
async function safeNextDue(ctx: Ctx): Promise<number | null> {
  try {
    return await store.nextDueAt(ctx.db.read);
  } catch {
    return null;
  }
}

/** Sends a leased row and records the outcome; registered in `inflight` while it runs. Never rejects. */
function startAttempt(ctx: Ctx, row: Row): Promise<MailResult> {
  const attempt = (async (): Promise<MailResult> => {
    try {
      await ctx.mail!.send({ to: row.toAddress, subject: row.subject, text: row.textBody, html: row.htmlBody });
    } catch (error) {
      return record(ctx, row, () => recordFailure(ctx, row, reasonOf(error)), { sent: false, error: reasonOf(error) });
    }
    // Why: the bodies carry single-use links; once handed over they are no longer kept.
    return record(ctx, row, async () => {
      await ctx.db.transaction((tx) => store.recordOutcome(tx, row.id, row.lockedUntil!, { kind: "sent", at: now() }));
      return { sent: true };
    }, { sent: true });
  })().finally(() => inflight.delete(row.id));
  inflight.set(row.id, attempt);
  return attempt;
}

/** Runs an outcome update; if the database refuses it the lease expires and the row is retried. */
async function record(ctx: Ctx, row: Row, write: () => Promise<MailResult>, fallback: MailResult): Promise<MailResult> {
  try {
    return await write();
  } catch (error) {
    ctx.log.error("mail outcome not recorded", { outbox_id: row.id, error: String(error) });
    return fallback;
  }
}

async function recordFailure(ctx: Ctx, row: Row, reason: string): Promise<MailResult> {
  const t = now();
  const giveUp = row.attempts >= MAX_ATTEMPTS;
  const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** (row.attempts - 1), MAX_BACKOFF_MS);
  // Never the address or the bodies in the log: the bodies hold single-use links.
  ctx.log.warn(giveUp ? "mail given up" : "mail delivery failed", { outbox_id: row.id, transport: ctx.mail!.name, attempt: row.attempts, error: reason });
  await ctx.db.transaction((tx) =>
    store.recordOutcome(tx, row.id, row.lockedUntil!, giveUp ? { kind: "failed", error: reason, at: t } : { kind: "retry", error: reason, runAt: t + backoff }),
  );
  return { sent: false, error: reason };
}

/** A failure reason fit for an API answer and a log line: one line, bounded. */
function reasonOf(error: unknown): string {
  const raw = error instanceof Error ? error.message || error.name : String(error);
  const line = raw.replace(/\s+/g, " ").trim() || "unknown error";
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
