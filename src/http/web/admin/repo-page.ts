// Repository settings: grants with the effective access they give, and webhooks with their
// delivery attempts (the signing secret shown once, right after the webhook is made).
import type { Delivery, DeliveryList, Webhook, WebhookCreated } from "../../../services/hooks/schemas.ts";
import { GRANT_ROLES, type GrantList, type RepoAccess, type Team } from "../../../services/orgs/schemas.ts";
import type { RepoAdminFrame } from "../../../services/web/admin.ts";
import { html, seg, type Html } from "../kit/html.ts";
import type { Frame } from "../kit/layout.ts";
import { nextPage, options, repoSettings, repoSettingsHref, type Notice } from "./frame.ts";
import { buttonForm, csrfInput, timeOf } from "../kit/widgets.ts";

/** Grants (person or team → role), the forms to add them, and everyone's effective role. */
export function accessPage(
  f: RepoAdminFrame,
  v: { grants: GrantList; access: RepoAccess; teams: Team[] },
  page: Frame,
  notice: Notice,
  values?: URLSearchParams,
): Html {
  const csrf = page.csrf;
  const base = repoSettingsHref(f.org, f.repo, "access");
  const grants = v.grants.grants.map((g) =>
    "user_id" in g
      ? html`<tr><td>${g.handle}</td><td>person</td><td>${g.role}</td><td>${buttonForm(`${base}/users/${seg(g.user_id)}/remove`, "Remove", `Remove the grant of ${g.handle}`, csrf)}</td></tr>`
      : html`<tr><td>${g.team_name}</td><td>team</td><td>${g.role}</td><td>${buttonForm(`${base}/teams/${seg(g.team_id)}/remove`, "Remove", `Remove the grant of the team ${g.team_name}`, csrf)}</td></tr>`,
  );
  const people = v.access.people.map(
    (p) =>
      html`<tr><td>${p.handle}</td><td>${p.role}</td><td>${p.source === "team" ? html`team ${p.team_name ?? ""}` : p.source === "grant" ? "grant" : "org role"}</td></tr>`,
  );
  return repoSettings(
    page,
    f,
    "access",
    notice,
    html`<section class="box" aria-labelledby="grants-h"><header><h2 id="grants-h" class="inh">Grants</h2></header>
${
  grants.length
    ? html`<div class="scroll"><table class="grid"><thead><tr><th scope="col">Who</th><th scope="col">Kind</th><th scope="col">Role</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${grants}</tbody></table></div>`
    : html`<p class="pad muted">No grants: everyone has their org role.</p>`
}
<form class="row" method="post" action="${base}">${csrfInput(csrf)}<input type="hidden" name="kind" value="user">
<label>People (handles, comma-separated) <input type="text" name="users" required maxlength="2000" value="${values?.get("users") ?? ""}"></label>
<label>Role <select name="role">${options(GRANT_ROLES, values?.get("kind") === "user" ? (values.get("role") ?? "member") : "member")}</select></label>
<div><button type="submit">Grant to people</button></div></form>
${
  v.teams.length
    ? html`<form class="row" method="post" action="${base}">${csrfInput(csrf)}<input type="hidden" name="kind" value="team">
<label>Team <select name="team">${v.teams.map((t) => html`<option value="${t.id}">${t.name}</option>`)}</select></label>
<label>Role <select name="role">${options(GRANT_ROLES, "member")}</select></label>
<div><button type="submit">Grant to team</button></div></form>`
    : ""
}</section>
<section class="box" aria-labelledby="effective-h"><header><h2 id="effective-h" class="inh">Effective access</h2></header>
<div class="scroll"><table class="grid"><thead><tr><th scope="col">Person</th><th scope="col">Role</th><th scope="col">From</th></tr></thead><tbody>${people}</tbody></table></div></section>`,
  );
}

function attempt(d: Delivery | null): Html {
  if (!d) return html`<span class="muted">no delivery yet</span>`;
  return html`<span class="state state-${d.error ? "failure" : "success"}">${d.status_code ?? "no answer"}</span> ${d.event} ${timeOf(d.delivered_at)}`;
}

/** The webhooks with their latest attempt, and the form to add one. */
export function webhooksPage(f: RepoAdminFrame, hooks: Webhook[], page: Frame, notice: Notice, made?: WebhookCreated, values?: URLSearchParams): Html {
  const csrf = page.csrf;
  const base = repoSettingsHref(f.org, f.repo, "webhooks");
  const shown = made
    ? html`<section class="box secret" aria-labelledby="made-h"><header><h2 id="made-h" class="inh">Webhook created</h2></header>
<div class="pad"><p>Deliveries to ${made.url} are signed with this secret (<code>X-Svc-Signature-256</code>). Copy it now: it is shown only once.</p>
<div class="clone"><label for="webhook-secret" class="inl">Secret</label><input id="webhook-secret" type="text" readonly value="${made.secret}"><button type="button" data-copy="webhook-secret" hidden>Copy</button></div></div></section>`
    : "";
  const items = hooks.map((h) => html`<li><a href="${base}/${seg(h.id)}" class="sha">${h.url}</a><div>${attempt(h.last_delivery)}</div></li>`);
  return repoSettings(
    page,
    f,
    "webhooks",
    notice,
    html`${shown}<section class="box" aria-labelledby="hooks-h"><header><h2 id="hooks-h" class="inh">Webhooks</h2></header>
${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="pad muted">No webhooks.</p>`}
<form class="row" method="post" action="${base}">${csrfInput(csrf)}<label>Receiver URL <input type="url" name="url" required maxlength="2000" placeholder="https://" value="${values?.get("url") ?? ""}"></label><div><button class="primary" type="submit">Add webhook</button></div></form></section>`,
  );
}

/** One webhook: its delivery attempts (status, response code, error, duration) and deletion. */
export function webhookPage(f: RepoAdminFrame, hook: Webhook, list: DeliveryList, page: Frame, notice: Notice): Html {
  const csrf = page.csrf;
  const base = `${repoSettingsHref(f.org, f.repo, "webhooks")}/${seg(hook.id)}`;
  const rows = list.deliveries.map(
    (d) =>
      html`<tr><td>${timeOf(d.delivered_at)}</td><td>${d.event}</td><td class="sha">${d.id}</td><td>${d.attempt}</td><td><span class="state state-${d.error ? "failure" : "success"}">${d.error ? "failed" : "delivered"}</span></td><td>${d.status_code ?? "—"}</td><td>${d.duration_ms} ms</td><td>${d.error ?? ""}</td></tr>`,
  );
  return repoSettings(
    page,
    f,
    "webhooks",
    notice,
    html`<h2 class="sha">${hook.url}</h2>
<section class="box" aria-labelledby="deliveries-h"><header><h2 id="deliveries-h" class="inh">Deliveries</h2></header>
${
  rows.length
    ? html`<div class="scroll"><table class="grid"><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Delivery</th><th scope="col">Attempt</th><th scope="col">Outcome</th><th scope="col">Response</th><th scope="col">Duration</th><th scope="col">Error</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="pad muted">Nothing delivered yet.</p>`
}</section>
${nextPage(base, {}, list.next_cursor, "Older deliveries")}
<p>${buttonForm(`${base}/delete`, "Delete webhook", `Delete the webhook to ${hook.url}`, csrf)}</p>`,
  );
}
