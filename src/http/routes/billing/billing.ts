// Billing (SPEC §2.12, §4.4; DECISIONS §3 Billing): the billing view, the provider's portal and
// checkout, and the provider's signed events at POST /webhooks/billing.
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { getBilling, openPortal, startCheckout } from "../../../services/billing/billing.ts";
import { checkEventHeaders, EVENT_BODY_LIMIT, receiveEvent } from "../../../services/billing/events.ts";
import { Billing, BillingLink, EventReceipt } from "../../../services/billing/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { policy } from "../../policy.ts";
import { callerOf } from "../../principal.ts";

/** Whether the caller asked for JSON rather than a redirect. */
function wantsJson(request: Request): boolean {
  return (request.headers.get("accept") ?? "").toLowerCase().includes("application/json");
}

/** Billing routes. */
export function billingRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.billing" })
    .get("/v1/orgs/:org/billing", ({ request, params }) => getBilling(ctx, callerOf(request), params.org), {
      response: { 200: Billing, ...errors(401, 403, 404) },
      detail: { summary: "Billing state of the organization (org admins; 404 for everyone else)" },
    })
    .post("/v1/orgs/:org/billing", ({ request, params }) => openPortal(ctx, callerOf(request), params.org), {
      response: { 200: BillingLink, ...errors(400, 401, 402, 403, 404, 502, 503) },
      detail: {
        summary:
          "The provider's billing portal for the organization (org admins). Its return address is always this deployment's billing screen; 402 `card:` without a subscription",
      },
    })
    .post(
      "/v1/orgs/:org/billing/subscribe",
      async ({ request, params, set }) => {
        const link = await startCheckout(ctx, callerOf(request), params.org);
        if (wantsJson(request)) return link;
        set.status = 303;
        set.headers.location = link.url;
        set.headers["cache-control"] = "no-store";
        return null;
      },
      {
        response: {
          200: BillingLink,
          303: t.Null({ description: "redirect to the provider's checkout page (Location)" }),
          ...errors(400, 401, 403, 404, 409, 502, 503),
        },
        detail: {
          summary:
            'Subscribe: 303 to the provider\'s checkout page for the seats in use (200 `{ url, kind: "checkout" }` with Accept: application/json); 409 when already subscribed',
        },
      },
    )
    .post("/webhooks/billing", ({ request, body }) => receiveEvent(ctx, body as Uint8Array, request.headers), {
      response: { 200: EventReceipt, ...errors(400, 413, 502, 503) },
      // Why hidden: the provider calls it, not API clients; docs/api.md describes it.
      // Signed: the exact bytes, read only after the headers could be refused (issue 25 row 7).
      detail: {
        hide: true,
        summary: "Payment provider events (signed)",
        ...policy({ caller: "anonymous", body: { raw: EVENT_BODY_LIMIT, admit: (headers) => checkEventHeaders(ctx, headers) } }),
      },
    });
}
