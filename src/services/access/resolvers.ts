// `ctx.resolvers`: what access asks the domains above it, registered once when the context is
// built (src/wiring.ts), so the arrows point down (docs/architecture.md "Domain order").
import type { CredentialResolvers } from "./credentials.ts";
import type { QuotaSource } from "./quota.ts";

export interface Resolvers {
  /** Credential kinds in order (people: tokens, sessions; ci: runner credentials, registrations). */
  credentials: CredentialResolvers;
  /** Billing's answers for write blocks and may_* facts. */
  quota: QuotaSource;
}
