// The durable mail outbox (SPEC §5.7, DESIGN "Background work"): a message is a `mail_outbox`
// row written in the transaction of the event that causes it, with a `mail.send` job of the same
// id; delivery happens afterwards, by `deliverNow` (a request that reports the result, bounded in
// time: `ctx.work.runNow`) or by the engine of `svc serve`. So a slow relay never holds a request
// and a restart loses no mail. The engine's lease makes one attempt at a time, and the outcome is
// recorded only while the lease is ours. Delivery is at least once: a crash between the relay's
// acceptance and the row's update repeats it.
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx, type MailMessage } from "../context.ts";
import { Failure, Later, reasonOf, type Attempt } from "../jobs/engine.ts";
import { jobKind } from "../jobs/kind.ts";
import * as store from "./store.ts";

/** The outcome of one delivery as the invitation response reports it (SPEC §5.7 `mail`). */
export interface MailResult {
  sent: boolean;
  error?: string;
}

/** The payload of a `mail.send` job (its id is the outbox row's). */
export interface SendPayload {
  outboxId: string;
}

/**
 * One attempt at one message: 4 at once; a failure is retried 30 s later, doubling up to an hour,
 * and given up after 8 attempts (the last about an hour after the first). The lease (2 min)
 * outlives any transport's own time limits.
 */
export const MAIL_SEND = jobKind<SendPayload>("mail.send", {
  concurrency: 4,
  leaseMs: 2 * 60 * 1000,
  retry: { firstMs: 30_000, maxMs: 3_600_000, attempts: 8 },
});

const IN_PROGRESS = "delivery is still in progress; it will be retried if it fails";

/** Queues a message inside the caller's transaction; null (nothing written) under the null transport. */
export async function enqueueMail(ctx: Ctx, tx: Tx, msg: MailMessage): Promise<string | null> {
  if (!ctx.mail) return null;
  const id = newId();
  const t = now();
  await store.insertMessage(tx, {
    id,
    toAddress: msg.to,
    subject: msg.subject,
    textBody: msg.text,
    htmlBody: msg.html,
    // The outbox keeps a sender of its own among the headers (`From`); sendMail takes it back out.
    headers: msg.from ? { ...msg.headers, From: msg.from } : (msg.headers ?? null),
    runAt: t,
    createdAt: t,
  });
  await ctx.work.enqueue(tx, MAIL_SEND, { outboxId: id }, { id });
  return id;
}

/**
 * Tries to deliver one queued message now, waiting at most `waitMs` for the outcome (joining an
 * attempt this process already runs). null id → `{ sent: false }` (no transport). A failure
 * leaves the message queued for the retry.
 */
export async function deliverNow(ctx: Ctx, id: string | null, waitMs = 5000): Promise<MailResult> {
  if (id === null || !ctx.mail) return { sent: false };
  let outcome: Awaited<ReturnType<Ctx["work"]["runNow"]>>;
  try {
    outcome = await ctx.work.runNow(id, waitMs);
  } catch (error) {
    // The caller's event is already committed: a busy database must not turn it into a 500.
    ctx.log.error("mail outbox claim failed", { outbox_id: id, error: String(error) });
    return { sent: false, error: "mail is queued; delivery will be retried" };
  }
  if (outcome.state === "done") return { sent: true };
  if (outcome.error) return { sent: false, error: outcome.error };
  // Still running here, or held by another node: its outcome is recorded there.
  return { sent: false, error: IN_PROGRESS };
}

/** The `mail.send` handler: one hand-over to the transport, recorded with the job's new state. */
export async function sendMail(ctx: Ctx, p: SendPayload, at: Attempt): Promise<void> {
  // The transport was switched off after the message was queued: keep it for when it is back.
  if (!ctx.mail) throw new Later(60_000);
  const row = await store.messageById(ctx.db.read, p.outboxId);
  if (!row || row.sentAt !== null || row.failedAt !== null) return;
  try {
    const { From: from, ...headers } = row.headers ?? {};
    await ctx.mail.send({
      to: row.toAddress,
      ...(from ? { from } : {}),
      subject: row.subject,
      text: row.textBody,
      html: row.htmlBody,
      ...(Object.keys(headers).length ? { headers } : {}),
    });
  } catch (error) {
    const reason = reasonOf(error);
    // Never the address or the bodies in the log: the bodies hold single-use links.
    ctx.log.warn(at.final ? "mail given up" : "mail delivery failed", { outbox_id: row.id, transport: ctx.mail.name, attempt: at.n, error: reason });
    throw new Failure(reason, (tx) => store.recordFailure(tx, row.id, reason, at.final ? now() : null));
  }
  // Why: the bodies carry single-use links; once handed over they are no longer kept.
  await at.complete((tx) => store.recordSent(tx, row.id, now()));
}
