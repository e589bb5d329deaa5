// Pack sharing between repositories: a fork names its parent's immutable packs instead of copying
// them, and a change landed from a fork names the fork's packs in the target. Packs are named by
// their content hash and never change, so one stored copy serves every repository that lists it.
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now } from "../context.ts";
import * as store from "./store.ts";

/**
 * Makes every live pack of `fromRepoId` live in `toRepoId`'s pack list too, without copying a
 * byte: the new rows name the same stored files (`storage_repo_id`). Call it inside the
 * transaction that needs the objects (a fork's first refs, or a `publish` that moves a ref of
 * `toRepoId` to a commit of `fromRepoId`, through its `also` hook), so readers see the refs and the
 * packs together. Idempotent; answers how many packs became live in `toRepoId`.
 *
 * Liveness: a pack file stays while any row of any repository names it (sweep and purge check
 * that), so maintenance of either repository, or deleting `fromRepoId`, leaves `toRepoId` whole.
 */
export async function sharePacks(tx: Tx, fromRepoId: string, toRepoId: string): Promise<number> {
  if (fromRepoId === toRepoId) return 0;
  return store.sharePackRows(tx, fromRepoId, toRepoId, newId, now());
}
