// The events domain's queries: the `events` table (SPEC §6.1 events, kept for activity feeds).
import { events } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import type { RepoEvent } from "./types.ts";

/** Stores one event (inside the transaction of its cause). */
export async function insertEvent(tx: Tx, e: RepoEvent): Promise<void> {
  tx.insert(events)
    .values({ id: e.id, repoId: e.repoId, orgId: e.orgId, kind: e.kind, payload: e.payload, actorUserId: e.actorUserId, createdAt: e.createdAt })
    .run();
}
