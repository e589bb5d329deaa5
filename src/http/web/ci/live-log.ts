// The live log of a job as server-sent events. Bounded on every side (LIMITS): a chunk is read
// only when the client has taken the previous one (pull), each event carries at most eventBytes
// of log, a comment goes out when nothing else did for heartbeatMs, the stream ends when the job
// has finished and its log was sent, when the client goes, or after streamMs (the browser then
// reconnects from its Last-Event-ID), and at most maxStreams are open at once. Every read goes
// through the log route's access check.
import { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { logSince, type LogStep } from "../../../services/web/ci.ts";

/** The bounds of a live log stream. */
export interface StreamLimits {
  /** How often a quiet job is looked at again. */
  pollMs: number;
  /** A comment line at least this often, so proxies and the browser keep the connection. */
  heartbeatMs: number;
  /** A stream lives at most this long; the browser reconnects and resumes. */
  streamMs: number;
  /** The most log bytes in one event. */
  eventBytes: number;
  /** Live logs open at once in this process; more are refused with 503 (the browser retries). */
  maxStreams: number;
}

/** The bounds the pages use. */
export const LIMITS: Readonly<StreamLimits> = { pollMs: 500, heartbeatMs: 15_000, streamMs: 10 * 60_000, eventBytes: 64 * 1024, maxStreams: 500 };

/** The live logs open now through one web plugin (its closure holds it; `maxStreams` caps it). */
export interface LiveLogs {
  open: number;
}

/** A fresh count of open live logs (one per mounted ci web plugin). */
export function liveLogs(): LiveLogs {
  return { open: 0 };
}

/** Where a (re)connecting client resumes: Last-Event-ID, else `?from=`, else the start. */
export function resumeOffset(request: Request, from: string | undefined): number {
  const raw = request.headers.get("last-event-id") ?? from ?? "0";
  return /^\d{1,15}$/.test(raw) ? Number(raw) : 0;
}

/** One event in the text/event-stream format; JSON data keeps newlines and CRs out of the framing. */
function event(name: string, data: unknown, id?: number): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The state part of a step, to send it only when it changed. */
function stateOf(s: LogStep): string {
  return JSON.stringify([s.state, s.verdict, s.error, s.steps]);
}

/** The response streaming job `jobId`'s log from `from` for `actor` (already allowed once by the caller's page check). */
export function logStream(
  ctx: Ctx,
  streams: LiveLogs,
  request: Request,
  actor: Principal,
  where: { org: string; repo: string; run: string; job: string },
  from: number,
  limits: StreamLimits = LIMITS,
): Response {
  if (streams.open >= limits.maxStreams) {
    return new Response("too many live logs open; retrying", { status: 503, headers: { "retry-after": "5", "content-type": "text/plain; charset=utf-8" } });
  }
  streams.open++;
  const enc = new TextEncoder();
  const started = Date.now();
  let offset = from;
  let lastState = "";
  let lastSent = Date.now();
  let closed = false;
  let wake: (() => void) | null = null;
  const finish = () => {
    if (closed) return;
    closed = true;
    streams.open--;
    wake?.();
  };
  request.signal.addEventListener("abort", finish, { once: true });
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(enc.encode("retry: 2000\n\n"));
    },
    async pull(controller) {
      for (;;) {
        if (closed) return controller.close();
        if (Date.now() - started > limits.streamMs) {
          finish();
          return controller.close();
        }
        let step: LogStep;
        try {
          step = await logSince(ctx, actor, where.org, where.repo, where.run, where.job, offset, limits.eventBytes);
        } catch (error) {
          // Why close rather than report: access may have ended (the repository went private, the
          // person left); the browser's reconnect then meets the page's own refusal.
          if (!(error instanceof AppError)) ctx.log.error("live log failed", { error: error instanceof Error ? error.message : String(error) });
          finish();
          return controller.close();
        }
        if (closed) return controller.close();
        let out = "";
        if (step.next > offset) {
          out += event("log", { text: step.text }, step.next);
          offset = step.next;
        }
        const state = stateOf(step);
        if (state !== lastState) {
          out += event("state", { state: step.state, verdict: step.verdict, error: step.error, steps: step.steps });
          lastState = state;
        }
        const done = step.finished && !step.more && step.text === "";
        if (done) out += event("end", { state: step.state });
        if (out === "" && Date.now() - lastSent >= limits.heartbeatMs) out = ": keep-alive\n\n";
        if (out !== "") {
          controller.enqueue(enc.encode(out));
          lastSent = Date.now();
        }
        if (done) {
          finish();
          return controller.close();
        }
        if (out !== "") return;
        await pause(limits.pollMs);
      }
    },
    cancel() {
      finish();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
      "x-content-type-options": "nosniff",
    },
  });
}
