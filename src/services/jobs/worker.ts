// The durable job loop of `svc serve`: takes due rows from `jobs`, runs them, records outcomes.
import { now, type Ctx } from "../context.ts";
import * as store from "./store.ts";
import type { JobRow } from "./store.ts";

/** A job handler: throws to be retried with backoff. */
export type JobHandler = (ctx: Ctx, payload: any) => Promise<void>;

const LEASE_MS = 5 * 60 * 1000;

const MAX_ATTEMPTS = 8;

/** Claims one due job (lease-based, so a crashed worker's job is retried after its lease). */
function claim(ctx: Ctx, kinds: string[]): Promise<JobRow | null> {
  return ctx.db.transaction((tx) => {
    const t = now();
    return store.leaseDueJob(tx, kinds, t, t + LEASE_MS);
  });
}

/** Runs one claimed job and records its outcome; an outcome that cannot be recorded is retried when the lease expires. */
async function runJob(ctx: Ctx, handlers: Record<string, JobHandler>, job: JobRow): Promise<void> {
  try {
    await handlers[job.kind]!(ctx, job.payload);
    await ctx.db.transaction((tx) => store.finishJob(tx, job.id, now()));
  } catch (error) {
    const giveUp = job.attempts >= MAX_ATTEMPTS;
    const backoff = Math.min(60_000 * 2 ** job.attempts, 3_600_000);
    ctx.log.warn("job failed", { job_id: job.id, kind: job.kind, attempt: job.attempts, error: String(error) });
    await ctx.db
      .transaction((tx) => store.failJob(tx, job.id, String(error), now() + backoff, giveUp ? now() : null))
      .catch((e) => ctx.log.error("job outcome not recorded", { job_id: job.id, error: String(e) }));
  }
}

/** Runs the worker loop until `signal` aborts; wakes on `poke()` or every `intervalMs`. */
export function startWorkers(ctx: Ctx, handlers: Record<string, JobHandler>, intervalMs = 1000) {
  let stopped = false;
  let wake: (() => void) | null = null;
  let poked = false;
  const kinds = Object.keys(handlers);
  const poke = () => {
    poked = true;
    wake?.();
  };
  // Woken after the commit of a job of one of its kinds (ctx.work.enqueue → ctx.signals).
  const unsubscribe = ctx.signals.subscribe("work", (kind) => {
    if (kinds.includes(kind)) poke();
  });
  const loop = async () => {
    while (!stopped) {
      poked = false;
      let job: JobRow | null = null;
      try {
        job = await claim(ctx, kinds);
      } catch (error) {
        // Why: a busy or failing database must not end the loop for good; try again later.
        ctx.log.error("job claim failed", { error: String(error) });
      }
      if (!job) {
        if (poked) continue;
        await new Promise<void>((r) => {
          const timer = setTimeout(r, intervalMs);
          wake = () => {
            clearTimeout(timer);
            r();
          };
        });
        wake = null;
        continue;
      }
      await runJob(ctx, handlers, job);
    }
  };
  const done = loop();
  return {
    /** Wake the loop now (after enqueuing work). */
    poke,
    async stop() {
      stopped = true;
      unsubscribe();
      wake?.();
      await done;
    },
  };
}
