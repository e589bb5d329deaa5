// Repository events, written in the same transaction as the change that caused them (SPEC §6.1),
// and the subscribers that react to them inside that transaction: webhook deliveries, CI
// triggers, change updates. A subscriber only writes rows (usually a durable job); the work
// happens later in a worker, so a push commits or fails as one unit with everything it causes.
import { events } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now } from "../context.ts";

/** The event kinds of SPEC §6.1. */
export type EventKind = "push" | "change.landed" | "change.ejected";

/** How the push came in: git over HTTP, SSH, the commit/refs API, the lander, or a mirror's sync from its origin. */
export type PushVia = "git" | "ssh" | "api" | "lander" | "mirror";

/** A ref that moved in the event (old or new is null for a creation or deletion). */
export interface RefMove {
  ref: string;
  old: string | null;
  new: string | null;
}

/** An event as subscribers see it. */
export interface RepoEvent {
  id: string;
  repoId: string;
  orgId: string;
  kind: EventKind;
  /** The webhook payload (SPEC §6.1). */
  payload: Record<string, unknown>;
  actorUserId: string | null;
  /** Refs moved by the event (internal: not part of the webhook payload). */
  moves: RefMove[];
  createdAt: number;
}

/** Reacts to an event inside its transaction; must only write rows (no I/O). */
export type EventSubscriber = (tx: Tx, event: RepoEvent) => Promise<void>;

const subscribers = new Map<string, EventSubscriber>();

/** Registers (or replaces) the subscriber named `name`; the composition root calls this at start. */
export function subscribeToEvents(name: string, fn: EventSubscriber): void {
  subscribers.set(name, fn);
}

/** Records an event and runs every subscriber in the same transaction. */
export async function recordEvent(
  tx: Tx,
  e: { repoId: string; orgId: string; kind: EventKind; payload: Record<string, unknown>; actorUserId: string | null; moves?: RefMove[] },
): Promise<string> {
  const event: RepoEvent = { id: newId(), repoId: e.repoId, orgId: e.orgId, kind: e.kind, payload: e.payload, actorUserId: e.actorUserId, moves: e.moves ?? [], createdAt: now() };
  tx.insert(events).values({ id: event.id, repoId: event.repoId, orgId: event.orgId, kind: event.kind, payload: event.payload, actorUserId: event.actorUserId, createdAt: event.createdAt }).run();
  for (const fn of subscribers.values()) await fn(tx, event);
  return event.id;
}
