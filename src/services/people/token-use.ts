// last_used_at of API tokens, written in batches: at most one write every ten seconds for all
// tokens together. Every write empties the fact cache (fact-cache.ts), so stamping each token as
// it is used would make a busy API with many tokens run every request cold.
import type { Token } from "../../db/schema/index.ts";
import { now, type Ctx } from "../context.ts";
import { stampTokens } from "./store-credentials.ts";

/** A token's last_used_at moves at most this often, and stamps wait at most this long (while requests arrive). */
export const TOKEN_USE_GRANULARITY_MS = 10_000;

/** Records that `row` was just used; the cached row shows it at once, the database at the next flush. */
export function noteTokenUse(ctx: Ctx, row: Token): void {
  const t = now();
  if (row.lastUsedAt !== null && t - row.lastUsedAt < TOKEN_USE_GRANULARITY_MS) return;
  row.lastUsedAt = t;
  const p = ctx.buffers.tokenUse;
  p.note(row.id, t);
  // Why not awaited: the stamp is bookkeeping, not part of the request; a failure is only logged.
  if (t - p.flushedAt >= TOKEN_USE_GRANULARITY_MS) void flushTokenUse(ctx).catch((error) => ctx.log.warn("token use not recorded", { error: String(error) }));
}

/** Writes every waiting stamp in one transaction (before listing tokens, and at shutdown). */
export async function flushTokenUse(ctx: Ctx): Promise<void> {
  const stamps = ctx.buffers.tokenUse.take(now());
  if (stamps.length === 0) return;
  await ctx.db.transaction((tx) => stampTokens(tx, stamps));
}
