// The durable-work engine (DESIGN.md "Background work"): `ctx.work`.
import type { Database, Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now } from "../../util/clock.ts";
import type { Ctx } from "../context.ts";
import type { Signals } from "../events/signals.ts";
import type { JobKind } from "./kind.ts";
import { insertJob } from "./store.ts";

/** Runs one attempt of a job of its kind. */
export type Handler<P> = (ctx: Ctx, payload: P) => Promise<void>;

export interface Work {
  /** Registers the handler of `kind` (the composition root, `src/wiring.ts`). */
  define<P>(kind: JobKind<P>, run: Handler<P>): void;
  /** Schedules a job in the caller's transaction; wakes the kind's workers after COMMIT. Answers the row's id. */
  enqueue<P>(tx: Tx, kind: JobKind<P>, payload: P, o?: { delayMs?: number; id?: string }): Promise<string>;
  /** The handler of a kind name, or undefined. */
  handlerOf(name: string): Handler<unknown> | undefined;
}

export class WorkEngine implements Work {
  private readonly handlers = new Map<string, { kind: JobKind<any>; run: Handler<any> }>();

  constructor(
    private readonly db: Database,
    private readonly signals: Signals,
  ) {}

  define<P>(kind: JobKind<P>, run: Handler<P>): void {
    this.handlers.set(kind.name, { kind, run });
  }

  handlerOf(name: string): Handler<unknown> | undefined {
    return this.handlers.get(name)?.run;
  }

  async enqueue<P>(tx: Tx, kind: JobKind<P>, payload: P, o: { delayMs?: number; id?: string } = {}): Promise<string> {
    const id = o.id ?? newId();
    const t = now();
    const delayMs = o.delayMs ?? 0;
    await insertJob(tx, { id, kind: kind.name, payload, runAt: t + delayMs, createdAt: t });
    if (delayMs <= 0) this.signals.notify("work", kind.name, tx);
    void this.db;
    return id;
  }
}
