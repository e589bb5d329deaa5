// The Protections tab of a repository's settings (issue 33): the branch protections with every
// field of the API's Protection, a form to add one or replace the rules of a pattern (each row's
// Edit opens the same form filled in), and Delete. Git enforces them (services/git/policy.ts).
import type { Protection } from "../../../services/repos/schemas.ts";
import type { RepoAdminFrame } from "../../../services/web/admin.ts";
import type { ProtectionForm } from "../../../services/web/repo-settings.ts";
import { html, type Html } from "../kit/html.ts";
import type { Frame } from "../kit/layout.ts";
import { csrfInput } from "../kit/widgets.ts";
import { repoSettings, repoSettingsHref, type Notice } from "./frame.ts";

/** A refused protection form: its reason and what it sent. */
export interface ProtectionRefusal {
  error: string;
  values: ProtectionForm;
}

/** The form's values for a protection as stored. */
function formOf(p: Protection): ProtectionForm {
  return {
    pattern: p.pattern,
    allow_force_push: p.allow_force_push,
    allow_deletion: p.allow_deletion,
    require_change: p.require_change,
    dismiss_stale_approvals: p.dismiss_stale_approvals,
    required_approvals: String(p.required_approvals),
    required_checks: p.required_checks.join("\n"),
  };
}

/** A new protection's defaults, as the API's PUT fills in omitted fields. */
function blank(): ProtectionForm {
  return {
    pattern: "",
    allow_force_push: false,
    allow_deletion: false,
    require_change: false,
    dismiss_stale_approvals: true,
    required_approvals: "0",
    required_checks: "",
  };
}

function check(name: keyof ProtectionForm, on: boolean, label: string, id: string): Html {
  return html`<label class="check"><input type="checkbox" name="${name}" value="1" id="${id}-${name}"${on ? html` checked` : ""}> ${label}</label>`;
}

/** The add-or-replace form; `id` keeps its field ids unique on the page. */
function protectionForm(action: string, csrf: string | null, v: ProtectionForm, id: string, fixed: boolean, submit: string): Html {
  return html`<form class="stack wide pad" method="post" action="${action}">${csrfInput(csrf)}
${
  fixed
    ? html`<input type="hidden" name="pattern" value="${v.pattern}">`
    : html`<label>Branch name pattern <input type="text" name="pattern" required maxlength="200" autocomplete="off" spellcheck="false" placeholder="main or release/*" value="${v.pattern}"></label>
<p class="muted hint">A branch name; <code>*</code> matches within one path segment (<code>release/*</code>).</p>`
}
<fieldset><legend>Pushes</legend>
${check("require_change", v.require_change, "Require a change: only the lander moves the branch (direct pushes are refused)", id)}
${check("allow_force_push", v.allow_force_push, "Allow force pushes", id)}
${check("allow_deletion", v.allow_deletion, "Allow deletion", id)}</fieldset>
<fieldset><legend>Reviews</legend>
<label>Required approvals (0–10) <input type="number" name="required_approvals" min="0" max="10" step="1" inputmode="numeric" value="${v.required_approvals}"></label>
${check("dismiss_stale_approvals", v.dismiss_stale_approvals, "Dismiss approvals when a change gets new commits", id)}</fieldset>
<label><span>Required checks <span class="muted">(one a line)</span></span><textarea name="required_checks" rows="3" spellcheck="false">${v.required_checks}</textarea></label>
<div><button class="primary" type="submit">${submit}</button></div></form>`;
}

/** What a protection asks for, in words. */
function rules(p: Protection): Html {
  const items: string[] = [];
  items.push(p.require_change ? "changes only" : "direct pushes allowed");
  items.push(p.allow_force_push ? "force pushes allowed" : "no force pushes");
  items.push(p.allow_deletion ? "deletion allowed" : "no deletion");
  items.push(p.required_approvals ? `${p.required_approvals} approval${p.required_approvals === 1 ? "" : "s"}` : "no approvals required");
  if (p.required_approvals) items.push(p.dismiss_stale_approvals ? "stale approvals dismissed" : "approvals kept on new commits");
  return html`${items.join(" · ")}${p.required_checks.length ? html`<br>checks: ${p.required_checks.map((c, i) => html`${i ? ", " : ""}<code>${c}</code>`)}` : ""}`;
}

/** The Protections tab. */
export function protectionsPage(page: Frame, f: RepoAdminFrame, list: Protection[], notice: Notice, refused?: ProtectionRefusal): Html {
  const base = repoSettingsHref(f.org, f.repo, "protections");
  const csrf = page.csrf;
  // A list, not a table: each item's Edit opens the whole form at full width, on a phone too.
  const items = list.map(
    (p, i) =>
      html`<li class="protection"><div class="prot-rule"><h3 class="inh"><code>${p.pattern}</code></h3><p class="muted">${rules(p)}</p></div>
<div class="prot-actions"><form class="inline" method="post" action="${base}/delete">${csrfInput(csrf)}<input type="hidden" name="pattern" value="${p.pattern}"><button type="submit" class="danger" aria-label="Delete the protection of ${p.pattern}">Delete</button></form></div>
<details><summary>Edit<span class="sr-only"> ${p.pattern}</span></summary>${protectionForm(base, csrf, formOf(p), `p${i}`, true, `Save ${p.pattern}`)}</details></li>`,
  );
  return repoSettings(
    page,
    f,
    "protections",
    notice,
    html`<section class="box" aria-labelledby="prot-h"><header><h2 id="prot-h" class="inh">Branch protections</h2></header>
${
  items.length
    ? html`<ul class="list">${items}</ul>`
    : html`<p class="pad muted">No branch is protected: anyone with write access may push, force-push or delete any branch.</p>`
}</section>
<section class="box" aria-labelledby="add-h"><header><h2 id="add-h" class="inh">Add a protection</h2></header>${refused ? html`<p class="error notice" role="alert">${refused.error}</p>` : ""}
<p class="pad muted">Saving a pattern that is already protected replaces its rules.</p>
${protectionForm(base, csrf, refused?.values ?? blank(), "new", false, "Save protection")}</section>`,
  );
}
