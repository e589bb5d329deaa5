// The configured payment provider (DECISIONS §0 SVC_BILLING_PROVIDER): one adapter per context
// (`ctx.billing`, made by src/runtime.ts).
import type { Config } from "../../config.ts";
import type { Ctx } from "../context.ts";
import type { BillingProvider } from "./provider.ts";
import { StripeProvider } from "./stripe.ts";

/** The provider a configuration names, or null when the deployment sells nothing. */
export function billingProvider(config: Config): BillingProvider | null {
  return config.billing ? new StripeProvider(config.billing) : null;
}

/** The configured provider, or null when the deployment sells nothing. */
export function providerOf(ctx: Ctx): BillingProvider | null {
  return ctx.billing;
}
