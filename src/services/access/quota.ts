// What access needs from billing to decide (SPEC §2.1 write_blocked, §2.12 may_*), as a source
// the billing domain registers on the context (src/wiring.ts): access sits below billing, so it
// names the question here and billing answers it. Required on every context, never defaulted, so
// no context can be built that forgets quota enforcement.
import type { Org } from "../../db/schema/index.ts";
import type { Ctx } from "../context.ts";

/** Why the org may not add a private repository or a person now (null: it may). */
export interface QuotaFacts {
  privateRepo: string | null;
  people: string | null;
}

export interface QuotaSource {
  /** The `quota: …` reason writes to `repo` are refused, or null when writes are allowed. From the org row alone (no I/O). */
  writeBlocked(ctx: Ctx, org: Org, repo: { public: boolean }): string | null;
  /** The org's quota facts (may count seats). */
  facts(ctx: Ctx, org: Org): Promise<QuotaFacts>;
}
