// Org administration: billing (the view, checkout and portal links) and the audit log.
import { Elysia } from "elysia";
import { AppError, Invalid } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { openPortal, startCheckout } from "../../../services/billing/billing.ts";
import { auditView, billingView, orgAdminFrame } from "../../../services/web/admin.ts";
import { postForm } from "../kit/forms.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import type { Notice } from "./frame.ts";
import { auditPage, billingPage, providerLinkPage, type AuditForm } from "./billing-page.ts";

const DAY_MS = 24 * 3600 * 1000;

/** A YYYY-MM-DD date as the epoch milliseconds of its start (UTC), "" as undefined; 400 otherwise. */
export function dayStart(name: string, value: string): number | undefined {
  if (value === "") return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (!Number.isFinite(ms) || ms < 0) throw Invalid(`${name} must be a date (YYYY-MM-DD)`);
  return ms;
}

/** Billing and audit pages. */
export function adminBillingRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);

  const billing = async (actor: Principal, frame: Frame, org: string, notice: Notice, status = 200) => {
    const v = await billingView(ctx, actor, org);
    return page(layout(frame, `Billing · ${v.frame.org} settings`, billingPage(v.frame, v.billing, v.forSale, frame.csrf, notice)), status);
  };
  const provider = async (actor: Principal, frame: Frame, org: string, link: { url: string; kind: "checkout" | "portal" }) =>
    page(layout(frame, `Billing · ${org} settings`, providerLinkPage(await orgAdminFrame(ctx, actor, org), link)), 200, { "cache-control": "no-store" });

  return new Elysia({ name: "routes.web.admin.billing" })
    .get(
      "/settings/orgs/:org/billing",
      ({ request, params, query }) => {
        const checkout = queryParam(query, "checkout");
        const done = checkout === "done" || checkout === "cancelled" ? `checkout-${checkout}` : queryParam(query, "done");
        return draw(request, (actor, frame) => billing(actor, frame, params.org, { done }));
      },
      HIDE,
    )
    .post(
      "/settings/orgs/:org/billing/subscribe",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, frame }) => provider(actor, frame, params.org, await startCheckout(ctx, actor, params.org)),
          again: async ({ actor, frame }, e) => billing(actor, frame, params.org, { error: e.message }, e.status),
        }),
      HIDE,
    )
    .post(
      "/settings/orgs/:org/billing/portal",
      ({ request, params, body }) =>
        postForm(ctx, request, body, {
          act: async ({ actor, frame }) => provider(actor, frame, params.org, await openPortal(ctx, actor, params.org)),
          again: async ({ actor, frame }, e) => billing(actor, frame, params.org, { error: e.message }, e.status),
        }),
      HIDE,
    )
    .get(
      "/settings/orgs/:org/audit",
      ({ request, params, query }) =>
        draw(request, async (actor, frame) => {
          const form: AuditForm = {
            action: (queryParam(query, "action") ?? "").trim(),
            from: queryParam(query, "from") ?? "",
            to: queryParam(query, "to") ?? "",
          };
          try {
            const from = dayStart("from", form.from);
            const to = dayStart("to", form.to);
            // The form's "to" is a whole day, inclusive; the service's is exclusive.
            const q = {
              action: form.action || undefined,
              from: from?.toString(),
              to: to === undefined ? undefined : (to + DAY_MS).toString(),
              cursor: queryParam(query, "cursor"),
            };
            const v = await auditView(ctx, actor, params.org, q);
            return page(layout(frame, `Audit log · ${v.frame.org} settings`, auditPage(v.frame, v.audit, form, {})));
          } catch (error) {
            // A filter the service refuses (400) shows the form again with the reason; anything else is the page's refusal.
            if (!(error instanceof AppError) || error.code !== "invalid") throw error;
            const v = await auditView(ctx, actor, params.org, {});
            return page(layout(frame, `Audit log · ${v.frame.org} settings`, auditPage(v.frame, null, form, { error: error.message })), 400);
          }
        }),
      HIDE,
    );
}
