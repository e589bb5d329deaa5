// Token and SSH key settings: create (a token's secret is shown once, right after), list, revoke.
import type { SshKey, Token } from "../../../services/people/schemas.ts";
import type { OrgCredentials } from "../../../services/web/account-settings.ts";
import { html, type Html } from "../kit/html.ts";
import { alertOf, csrfField } from "../kit/sign-in.ts";

const SCOPES: readonly [string, string][] = [
  ["repo:read", "read repositories"],
  ["repo:write", "push and write repositories"],
  ["org:read", "read the organization"],
  ["org:admin", "administer the organization"],
];

/** A date for lists: YYYY-MM-DD (UTC). */
function day(t: number | null): string {
  return t === null ? "never" : new Date(t).toISOString().slice(0, 10);
}

/** The secret of a token just created: shown this once, with a copy button where script runs. */
function secretBox(secret: string): Html {
  return html`<section class="secret box pad" aria-labelledby="secret-h"><h2 id="secret-h" class="inh">Your new token</h2>
<p>Copy it now: it is shown only this once and cannot be shown again.</p>
<div class="clone"><input id="new-token" type="text" readonly value="${secret}" aria-label="Token secret"><button type="button" data-copy="new-token" hidden>Copy</button></div></section>`;
}

function revoke(csrf: string | null, path: string, org: string, id: string, name: string, verb = "Revoke"): Html {
  return html`<form class="inline" method="post" action="${path}">${csrfField(csrf)}<input type="hidden" name="org" value="${org}"><input type="hidden" name="id" value="${id}"><button type="submit" aria-label="${verb} ${name}">${verb}</button></form>`;
}

/** The tokens page. */
export function tokenSettings(o: {
  csrf: string | null;
  orgs: string[];
  tokens: OrgCredentials<Token>[];
  secret: string | null;
  error?: string;
  values?: Record<string, string>;
  scopes?: string[];
}): Html {
  const v = o.values ?? {};
  const chosen = new Set(o.scopes ?? ["repo:read"]);
  return html`<h1>Tokens</h1>
${o.secret ? secretBox(o.secret) : ""}
<p class="muted">A personal token acts as you in one organization, limited to its scopes: use it for git over HTTPS (as the password) and for the API.</p>
<h2 id="new-token-h">Create a token</h2>
${alertOf(o.error)}
<form class="stack" method="post" action="/settings/tokens" aria-labelledby="new-token-h">${csrfField(o.csrf)}
<label>Organization <select name="org">${o.orgs.map((n) => html`<option${n === v.org ? html` selected` : ""}>${n}</option>`)}</select></label>
<label>Label <input type="text" name="label" required maxlength="100" value="${v.label ?? ""}"></label>
<fieldset><legend>Scopes</legend>${SCOPES.map(([s, what]) => html`<label class="check"><input type="checkbox" name="scope" value="${s}"${chosen.has(s) ? html` checked` : ""}> <span class="sha">${s}</span> <span class="muted">${what}</span></label>`)}</fieldset>
<label>Repository (optional: only this one) <input type="text" name="repo" maxlength="100" value="${v.repo ?? ""}"></label>
<div><button class="primary" type="submit">Create token</button></div>
</form>
<h2>Your tokens</h2>
${o.tokens.map(
  (g) => html`<section class="box" aria-labelledby="tok-${g.org}"><header><h3 class="inh" id="tok-${g.org}">${g.org}</h3></header>
${
  g.items.length
    ? html`<ul class="list">${g.items.map(
        (
          t,
        ) => html`<li class="cred"><div><strong>${t.label}</strong> <span class="sha">${t.scopes.join(" ")}</span>${t.repo ? html` <span class="badge">${t.repo} only</span>` : ""}
<div class="muted">created ${day(t.created_at)} · last used ${day(t.last_used_at)}</div></div>${revoke(o.csrf, "/settings/tokens/revoke", g.org, t.id, t.label)}</li>`,
      )}</ul>`
    : html`<p class="pad muted">No tokens.</p>`
}
${g.more ? html`<p class="pad muted">More tokens exist in ${g.org}; the API lists them all.</p>` : ""}</section>`,
)}`;
}

/** The SSH keys page. */
export function keySettings(o: { csrf: string | null; keys: OrgCredentials<SshKey>[]; error?: string; values?: Record<string, string> }): Html {
  const v = o.values ?? {};
  const count = o.keys.reduce((n, g) => n + g.items.length, 0);
  return html`<h1>SSH keys</h1>
<p class="muted">A key acts as you for git over SSH, in every organization you belong to.</p>
<section class="box" aria-labelledby="keys-h"><header><h2 id="keys-h" class="inh">Your keys</h2></header>
${
  count
    ? html`<ul class="list">${o.keys.flatMap((g) =>
        g.items.map(
          (k) => html`<li class="cred"><div><strong>${k.label}</strong> <span class="sha">${k.fingerprint}</span>
<div class="muted">added ${day(k.created_at)} in ${g.org}</div></div>${revoke(o.csrf, "/settings/keys/remove", g.org, k.id, k.label, "Remove")}</li>`,
        ),
      )}</ul>`
    : html`<p class="pad muted">No keys yet.</p>`
}
</section>
<h2 id="new-key-h">Add a key</h2>
${alertOf(o.error)}
<form class="stack wide" method="post" action="/settings/keys" aria-labelledby="new-key-h">${csrfField(o.csrf)}
<label>Label <input type="text" name="label" required maxlength="100" value="${v.label ?? ""}"></label>
<label>Public key <textarea name="public_key" rows="4" required aria-describedby="key-hint">${v.public_key ?? ""}</textarea></label>
<p id="key-hint" class="hint muted">The line of your .pub file: ed25519, ECDSA or RSA (at least 2048 bits).</p>
<div><button class="primary" type="submit">Add key</button></div>
</form>`;
}
