// The configured payment provider (DECISIONS §0 SVC_BILLING_PROVIDER): one adapter per configuration.
import type { Ctx } from "../context.ts";
import type { BillingProvider } from "./provider.ts";
import { StripeProvider } from "./stripe.ts";

const providers = new WeakMap<object, BillingProvider>();

/** The configured provider, or null when the deployment sells nothing. */
export function providerOf(ctx: Ctx): BillingProvider | null {
  const cfg = ctx.config.billing;
  if (!cfg) return null;
  let p = providers.get(cfg);
  if (!p) providers.set(cfg, (p = new StripeProvider(cfg)));
  return p;
}
