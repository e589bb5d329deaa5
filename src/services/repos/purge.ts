// Removes a deleted repository's objects from storage (the `repo.purge` job).
import type { Ctx } from "../context.ts";

/** Deletes every stored object under the repository's prefix. Idempotent. */
export async function purgeRepoStorage(ctx: Ctx, payload: { repoId: string }): Promise<void> {
  const prefix = `repos/${payload.repoId}/`;
  for await (const obj of ctx.store.list(prefix)) await ctx.store.delete(obj.key);
  if (ctx.store.abortIncompleteUploads) await ctx.store.abortIncompleteUploads(prefix, Number.MAX_SAFE_INTEGER);
}
