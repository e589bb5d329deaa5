// Why nobody may write to a repository now (SPEC §2.1 write_blocked): a `quota:` sentence, or
// null. Billing fills this in; without a payment provider nothing is ever blocked.
import type { Org } from "../../db/schema/index.ts";
import type { Ctx } from "../context.ts";

/** The `quota: …` reason writes to `repo` are refused, or null when writes are allowed. */
export async function writeBlockedReason(ctx: Ctx, _org: Org, _repo: { public: boolean }): Promise<string | null> {
  if (!ctx.config.billing) return null;
  return null;
}
