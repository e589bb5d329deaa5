// Small pieces of pages that several features draw: the hidden form token, a form of one button,
// and a time for people.
import { CSRF_FIELD } from "./csrf.ts";
import { html, type Html } from "./html.ts";

/** The hidden form token of the session. */
export function csrfInput(csrf: string | null): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf ?? ""}">`;
}

/** A form of one button (remove, revoke, delete); `label` names the thing for screen readers. */
export function buttonForm(action: string, text: string, label: string, csrf: string | null, danger = true): Html {
  return html`<form class="inline" method="post" action="${action}">${csrfInput(csrf)}<button type="submit" class="${danger ? "danger" : ""}" aria-label="${label}">${text}</button></form>`;
}

/** A time for people (UTC, to the minute) in a <time> element. */
export function timeOf(ms: number | null): Html {
  if (ms === null) return html`<span class="muted">never</span>`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>`;
}
