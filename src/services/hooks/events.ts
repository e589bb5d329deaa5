// Repository events, written in the same transaction as the change that caused them (SPEC §6.1).
import { events } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now } from "../context.ts";

/** Records an event (webhook delivery jobs hang off it once webhooks exist). */
export async function recordEvent(
  tx: Tx,
  e: { repoId: string; orgId: string; kind: "push" | "change.landed" | "change.ejected"; payload: Record<string, unknown>; actorUserId: string | null },
): Promise<string> {
  const id = newId();
  tx.insert(events).values({ id, repoId: e.repoId, orgId: e.orgId, kind: e.kind, payload: e.payload, actorUserId: e.actorUserId, createdAt: now() }).run();
  return id;
}
