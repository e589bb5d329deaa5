// Email address settings: the addresses with their state, and a form per action (send the link
// again, make it the sign-in address, remove it), then the form that adds one.
import type { EmailRecord } from "../../../services/people/schemas.ts";
import { html, type Html } from "../kit/html.ts";
import { alertOf, csrfField } from "../kit/sign-in.ts";

/** A one-button form acting on one address. */
function action(csrf: string | null, path: string, address: string, label: string): Html {
  return html`<form class="inline" method="post" action="${path}">${csrfField(csrf)}<input type="hidden" name="address" value="${address}"><button type="submit" aria-label="${label} ${address}">${label}</button></form>`;
}

function row(csrf: string | null, e: EmailRecord): Html {
  const state = e.verified_at === null ? html`<span class="badge warn">unconfirmed</span>` : html`<span class="badge">confirmed</span>`;
  return html`<li class="email-row"><div><strong class="addr">${e.address}</strong> ${e.primary ? html`<span class="badge">sign-in address</span>` : ""} ${state}</div>
<div class="actions">${e.verified_at === null ? action(csrf, "/settings/emails/resend", e.address, "Send link again") : ""}${e.verified_at !== null && !e.primary ? action(csrf, "/settings/emails/primary", e.address, "Make sign-in address") : ""}${e.primary ? "" : action(csrf, "/settings/emails/remove", e.address, "Remove")}</div></li>`;
}

/** The page. */
export function emailSettings(o: { csrf: string | null; emails: EmailRecord[]; error?: string; value?: string }): Html {
  return html`<h1>Email addresses</h1>
<p class="muted">Your addresses are private: no page or API answer shows them to anyone else. A commit you push counts on your contribution graph when its author address is one of your confirmed addresses.</p>
<section class="box" aria-labelledby="emails-h"><header><h2 id="emails-h" class="inh">Your addresses</h2></header>
<ul class="list">${o.emails.map((e) => row(o.csrf, e))}</ul></section>
<h2 id="add-email-h">Add an address</h2>
${alertOf(o.error)}
<form class="stack" method="post" action="/settings/emails" aria-labelledby="add-email-h">${csrfField(o.csrf)}
<label>Email <input type="email" name="email" autocomplete="email" required value="${o.value ?? ""}"></label>
<div><button class="primary" type="submit">Add address</button></div>
</form>
<p class="muted">A confirmation link is mailed to the new address; it works once, for one day. An account has at most ten addresses.</p>`;
}
