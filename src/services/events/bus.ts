// The one event path (DESIGN.md "Background work"): an event is recorded in the transaction of
// the change that caused it, and every subscriber of its kind runs in that same transaction. A
// subscriber only writes rows (usually a durable job, `ctx.work.enqueue`); the work happens
// later, so a push commits or fails as one unit with everything it causes.
//
// The bus lives on the context (`ctx.events`); `src/wiring.ts` registers the subscribers.
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now } from "../../util/clock.ts";
import type { Ctx } from "../context.ts";
import { insertEvent } from "./store.ts";
import type { EventKind, EventOf, InternalEvent, InternalKind, NewRepoEvent, RepoEvent, Subscriber } from "./types.ts";

interface Entry {
  name: string;
  kinds: ReadonlySet<string>;
  fn: Subscriber<never>;
}

export class EventBus {
  private readonly entries: Entry[] = [];

  /** The context subscribers receive; set once by the composition root. */
  constructor(private readonly ctxOf: () => Ctx) {}

  /** Registers (or replaces) the subscriber `name` for `kinds`; subscribers run in registration order. */
  subscribe<K extends EventKind | InternalKind>(name: string, kinds: readonly K[], fn: Subscriber<EventOf<K>>): void {
    const entry: Entry = { name, kinds: new Set(kinds), fn: fn as Subscriber<never> };
    const at = this.entries.findIndex((e) => e.name === name);
    if (at >= 0) this.entries[at] = entry;
    else this.entries.push(entry);
  }

  /** The names of the subscribers of `kind`, in order (tests and docs). */
  subscribersOf(kind: EventKind | InternalKind): string[] {
    return this.entries.filter((e) => e.kinds.has(kind)).map((e) => e.name);
  }

  /** SPEC §6.1 events: stored in `events`, then every subscriber of the kind, in the caller's transaction. */
  async record(tx: Tx, e: NewRepoEvent): Promise<string> {
    const event: RepoEvent = {
      id: newId(),
      repoId: e.repoId,
      orgId: e.orgId,
      kind: e.kind,
      payload: e.payload,
      actorUserId: e.actorUserId,
      moves: e.moves ?? [],
      createdAt: now(),
    };
    await insertEvent(tx, event);
    await this.run(tx, event.kind, event);
    return event.id;
  }

  /** Internal events: not stored, never sent to webhooks; subscribers run in the caller's transaction. */
  async emit(tx: Tx, e: InternalEvent): Promise<void> {
    await this.run(tx, e.kind, e);
  }

  private async run(tx: Tx, kind: string, event: unknown): Promise<void> {
    const ctx = this.ctxOf();
    for (const entry of this.entries) if (entry.kinds.has(kind)) await (entry.fn as Subscriber<unknown>)(ctx, tx, event);
  }
}
