// The durable job loop of `svc serve`: takes due rows from `jobs`, runs them, records outcomes.
import { and, asc, eq, inArray, isNull, lte, or } from "drizzle-orm";
import { jobs } from "../../db/schema/index.ts";
import { now, type Ctx } from "../context.ts";

/** A job handler: throws to be retried with backoff. */
export type JobHandler = (ctx: Ctx, payload: any) => Promise<void>;

const LEASE_MS = 5 * 60 * 1000;
const MAX_ATTEMPTS = 8;

/** Claims one due job (lease-based, so a crashed worker's job is retried after its lease). */
function claim(ctx: Ctx, kinds: string[]) {
  return ctx.db.transaction((tx) => {
    const t = now();
    const row = tx
      .select()
      .from(jobs)
      .where(and(isNull(jobs.doneAt), inArray(jobs.kind, kinds), lte(jobs.runAt, t), or(isNull(jobs.lockedUntil), lte(jobs.lockedUntil, t))))
      .orderBy(asc(jobs.runAt))
      .limit(1)
      .get();
    if (!row) return null;
    tx.update(jobs).set({ lockedUntil: t + LEASE_MS, attempts: row.attempts + 1 }).where(eq(jobs.id, row.id)).run();
    return { ...row, attempts: row.attempts + 1 };
  }, { behavior: "immediate" });
}

/** Runs the worker loop until `signal` aborts; wakes on `poke()` or every `intervalMs`. */
export function startWorkers(ctx: Ctx, handlers: Record<string, JobHandler>, intervalMs = 1000) {
  let stopped = false;
  let wake: (() => void) | null = null;
  const kinds = Object.keys(handlers);
  const loop = async () => {
    while (!stopped) {
      const job = claim(ctx, kinds);
      if (!job) {
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, intervalMs);
        });
        continue;
      }
      try {
        await handlers[job.kind]!(ctx, job.payload);
        ctx.db.update(jobs).set({ doneAt: now(), lockedUntil: null, lastError: null }).where(eq(jobs.id, job.id)).run();
      } catch (error) {
        const giveUp = job.attempts >= MAX_ATTEMPTS;
        const backoff = Math.min(60_000 * 2 ** job.attempts, 3_600_000);
        ctx.log.warn("job failed", { job_id: job.id, kind: job.kind, attempt: job.attempts, error: String(error) });
        ctx.db
          .update(jobs)
          .set({ lastError: String(error), lockedUntil: null, runAt: now() + backoff, doneAt: giveUp ? now() : null })
          .where(eq(jobs.id, job.id))
          .run();
      }
    }
  };
  const done = loop();
  return {
    /** Wake the loop now (after enqueuing work). */
    poke: () => wake?.(),
    async stop() {
      stopped = true;
      wake?.();
      await done;
    },
  };
}
