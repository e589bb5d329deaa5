// Org settings: the billing view (SPEC §2.12) with the provider's checkout and portal, and the
// audit log with its filters and paging.
import type { Billing } from "../../../services/billing/schemas.ts";
import type { AuditList } from "../../../services/audit/schemas.ts";
import type { OrgAdminFrame } from "../../../services/web/admin.ts";
import { html, type Html } from "../kit/html.ts";
import { nextPage, orgHref, orgSettings, type Notice } from "./frame.ts";
import { csrfInput, timeOf } from "../kit/widgets.ts";

/** A minutes field: null means unlimited (SPEC §2.12), never zero. */
function minutes(n: number | null): string {
  return n === null ? "unlimited" : `${n}`;
}

function money(cents: number | null): string {
  return cents === null ? "—" : (cents / 100).toFixed(2);
}

/** The billing view; `forSale` when this deployment has a payment provider and this is an organization. */
export function billingPage(f: OrgAdminFrame, b: Billing, forSale: boolean, csrf: string | null, notice: Notice): Html {
  const base = orgHref(f.org, "billing");
  const row = (label: string, value: Html | string | number) => html`<dt>${label}</dt><dd>${value}</dd>`;
  const action = !forSale
    ? html`<p class="pad muted">This deployment sells nothing: every feature is available without a subscription.</p>`
    : b.plan === "free"
      ? html`<form class="row" method="post" action="${base}/subscribe">${csrfInput(csrf)}<p class="inh">Subscribe for ${b.billable_seats} ${b.billable_seats === 1 ? "seat" : "seats"} at ${money(b.price_per_seat_cents)} per seat a month.</p><div><button class="primary" type="submit">Subscribe</button></div></form>`
      : html`<form class="row" method="post" action="${base}/portal">${csrfInput(csrf)}<p class="inh">Change the card, the seats or cancel at the payment provider.</p><div><button type="submit">Manage billing</button></div></form>`;
  return orgSettings(
    f,
    "billing",
    notice,
    html`<section class="box" aria-labelledby="plan-h"><header><h2 id="plan-h" class="inh">Plan</h2></header>
<dl class="facts">${row("Plan", b.plan)}${row("Subscription status", b.status ?? "none")}${row("Current period ends", timeOf(b.current_period_end))}
${row("Billable seats", b.billable_seats)}${row("Paid seats", b.paid_seats)}${row("Price per seat", money(b.price_per_seat_cents))}
${row("Private repositories", b.private_repos)}${row("May create private repositories", b.may_create_private ? "yes" : "no")}${row("May add people", b.may_add_people ? "yes" : "no")}</dl>
${action}</section>
<section class="box" aria-labelledby="minutes-h"><header><h2 id="minutes-h" class="inh">Hosted CI minutes this month</h2></header>
<dl class="facts">${row("Used", b.ci_minutes_used)}${row("Limit", minutes(b.ci_minutes_limit))}${row("Remaining", minutes(b.ci_minutes_remaining))}
${row("Included free", minutes(b.free_minutes))}${row("Added per paid seat", b.paid_minutes_per_seat === null ? "—" : b.paid_minutes_per_seat)}</dl>
${b.ci_suspended_reason ? html`<p class="pad error">${b.ci_suspended_reason}</p>` : ""}</section>`,
  );
}

/** The page after asking the provider: a link there (a form may not redirect to another site under our CSP). */
export function providerLinkPage(f: OrgAdminFrame, link: { url: string; kind: "checkout" | "portal" }): Html {
  return orgSettings(
    f,
    "billing",
    {},
    html`<section class="box"><header><h2 class="inh">${link.kind === "checkout" ? "Checkout is ready" : "Billing portal is ready"}</h2></header>
<p class="pad"><a class="button primary" href="${link.url}" rel="noreferrer">Continue to the payment provider</a></p></section>`,
  );
}

/** The audit filters as the form shows them (dates as YYYY-MM-DD). */
export interface AuditForm {
  action: string;
  from: string;
  to: string;
}

/** The audit log: filters, events newest first, the next page. */
export function auditPage(f: OrgAdminFrame, list: AuditList | null, form: AuditForm, notice: Notice): Html {
  const base = orgHref(f.org, "audit");
  const rows = (list?.events ?? []).map((e) => {
    const data = e.data ? JSON.stringify(e.data) : "";
    return html`<tr><td>${timeOf(e.created_at)}</td><td>${e.actor.name ?? e.actor.kind}<span class="muted"> (${e.actor.kind})</span></td><td><code>${e.action}</code></td><td>${e.target ?? ""}</td><td><code class="data">${data.length > 300 ? `${data.slice(0, 300)}…` : data}</code></td></tr>`;
  });
  return orgSettings(
    f,
    "audit",
    notice,
    html`<form class="row box" method="get" action="${base}" aria-label="Filter the audit log">
<label>Action <input type="text" name="action" maxlength="100" placeholder="member.role_changed" value="${form.action}"></label>
<label>From <input type="date" name="from" value="${form.from}"></label>
<label>To <input type="date" name="to" value="${form.to}"></label>
<div><button type="submit">Filter</button></div></form>
<section class="box" aria-labelledby="audit-h"><header><h2 id="audit-h" class="inh">Events</h2></header>
${
  rows.length
    ? html`<div class="scroll"><table class="grid"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="pad muted">No events${form.action || form.from || form.to ? " match these filters" : ""}.</p>`
}</section>
${nextPage(base, { action: form.action, from: form.from, to: form.to }, list?.next_cursor ?? null, "Older events")}`,
  );
}
