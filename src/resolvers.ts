// What access asks the domains above it (ctx.resolvers): credential kinds and billing's quota
// answers, composed here so that access imports none of them (docs/architecture.md "Domain
// order"). Issue 26: this is package B's section of src/wiring.ts, kept in its own file until
// that file exists on main; it then moves there in one step.
import type { Resolvers } from "./services/access/resolvers.ts";
import { BILLING_QUOTA } from "./services/billing/write-blocked.ts";
import { isRunnerCredential, resolveRunnerCredential } from "./services/ci/credentials.ts";
import { SESSION_CREDENTIAL, TOKEN_CREDENTIAL } from "./services/people/auth.ts";
import { guardPresentation } from "./services/people/throttle.ts";

/** The resolvers every context carries. Order matters: the first kind whose shape fits resolves a value. */
export function domainResolvers(): Resolvers {
  return {
    credentials: {
      kinds: [
        // CI's runner registration tokens (svcg_) and machine credentials (svcr_): bearer only.
        { name: "runner", carriers: ["bearer"], matches: isRunnerCredential, resolve: resolveRunnerCredential },
        TOKEN_CREDENTIAL,
        SESSION_CREDENTIAL,
      ],
      guard: guardPresentation,
    },
    quota: BILLING_QUOTA,
  };
}
