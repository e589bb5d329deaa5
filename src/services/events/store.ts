import type { Tx } from "../../db/database.ts";
import type { RepoEvent } from "./types.ts";
import { tables } from "../../db/tables.ts";

/** Stores one event (inside the transaction of its cause). */
export async function insertEvent(tx: Tx, e: RepoEvent): Promise<void> {
  const { events } = tables(tx);
  await tx
    .insert(events)
    .values({ id: e.id, repoId: e.repoId, orgId: e.orgId, kind: e.kind, payload: e.payload, actorUserId: e.actorUserId, createdAt: e.createdAt });
}
