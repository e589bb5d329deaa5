// Removes a deleted repository's objects from storage (the `repo.purge` job).
import type { Ctx } from "../context.ts";
import { packNamesStoredUnder, repoIsLive } from "./store.ts";
import { jobKind } from "../jobs/kind.ts";

/** The payload of a `repo.purge` job. */
export interface PurgePayload {
  repoId: string;
  orgId?: string;
  shared?: string[];
}

/** Removing a deleted repository's stored objects, after its rows are gone. */
export const REPO_PURGE = jobKind<PurgePayload>("repo.purge");

const PACK_FILE = /^repos\/[^/]+\/packs\/pack-([0-9a-f]{40})\.(pack|idx)$/;

/**
 * Deletes every stored object under the repository's prefix, except pack files another
 * repository's rows still name (a fork shares its parent's packs: they stay until the last row
 * naming them is swept, and that sweep deletes them). Then the same for each deleted repository
 * in `shared` (whose files only this one's rows kept alive); a live one's own sweep collects its
 * files that nobody names. Idempotent.
 */
export async function purgeRepoStorage(ctx: Ctx, payload: PurgePayload): Promise<void> {
  await purgePrefix(ctx, payload.repoId);
  for (const id of payload.shared ?? []) if (!(await repoIsLive(ctx.db.read, id))) await purgePrefix(ctx, id);
}

async function purgePrefix(ctx: Ctx, repoId: string): Promise<void> {
  // Why read once before listing: rows naming these files are only ever copied from live rows,
  // and the repository's own rows are gone, so the set cannot grow while we list.
  const named = await packNamesStoredUnder(ctx.db.read, repoId);
  for await (const obj of ctx.store.list(`repos/${repoId}/`)) {
    const m = PACK_FILE.exec(obj.key);
    if (m && named.has(m[1]!)) continue;
    await ctx.store.delete(obj.key);
  }
  // Multipart uploads a crash left open under the prefix (S3); nothing another repository names.
  if (ctx.store.abortIncompleteUploads) await ctx.store.abortIncompleteUploads(`repos/${repoId}/`, Number.MAX_SAFE_INTEGER);
}
