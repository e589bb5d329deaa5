// CI secrets and variables settings, for a repository (/{org}/{repo}/settings/secrets|variables)
// and for an organization (/settings/orgs/{org}/secrets|variables). A secret's value is never on a
// page: the lists show names, and the value field is write-only (never filled in, not even after a
// refused post, `autocomplete=off`). Variables are plain text and show their values.
import type { CiValueItem } from "../../../services/ci/secrets.ts";
import type { OrgAdminFrame, RepoAdminFrame } from "../../../services/web/admin.ts";
import { html, seg, type Html } from "../kit/html.ts";
import type { Frame } from "../kit/layout.ts";
import { orgHref, orgSettings, repoSettings, repoSettingsHref, type Notice } from "./frame.ts";
import { buttonForm, csrfInput, timeOf } from "../kit/widgets.ts";

/** Secrets or variables. */
export type ValueKind = "secret" | "variable";

/** The path segment of a kind: `secrets` or `variables`. */
export function kindPath(kind: ValueKind): "secrets" | "variables" {
  return kind === "secret" ? "secrets" : "variables";
}

/** What a form posted, to draw it again after a refusal (a secret's value is never among them). */
export interface ValueForm {
  name: string;
  /** A variable's value only. */
  value?: string;
  access?: "all" | "selected";
  repos?: string[];
}

const NAME_HINT = "Upper-case letters A-Z, digits and _, not starting with a digit (GITHUB_ and SVC_ are reserved).";

/** The `repos` choice of an org form: every repository, or the ones selected (current ones kept even beyond the listed). */
function reachFields(repos: string[], access: "all" | "selected", chosen: readonly string[]): Html {
  const all = [...new Set([...repos, ...chosen])];
  const size = Math.min(8, Math.max(2, all.length));
  return html`<fieldset><legend>Repositories</legend>
<label class="check"><input type="radio" name="access" value="all"${access === "all" ? html` checked` : ""}> All repositories</label>
<label class="check"><input type="radio" name="access" value="selected"${access === "selected" ? html` checked` : ""}> Selected repositories</label>
<label>Selected <select name="repos" multiple size="${size}">${all.map((r) => html`<option value="${r}"${chosen.includes(r) ? html` selected` : ""}>${r}</option>`)}</select></label></fieldset>`;
}

/** The value field: a secret's is always empty and never completed by the browser; a variable's may be filled in. */
function valueField(kind: ValueKind, value: string | undefined, label: string): Html {
  if (kind === "secret") return html`<label>${label} <textarea name="value" rows="3" required autocomplete="off" spellcheck="false"></textarea></label>`;
  return html`<label>${label} <textarea name="value" rows="3" required spellcheck="false">${value ?? ""}</textarea></label>`;
}

/** The add-or-replace form (a NAME that exists is replaced, as the API's PUT). */
function putForm(kind: ValueKind, base: string, csrf: string | null, repos: string[] | null, values?: ValueForm): Html {
  const noun = kind === "secret" ? "secret" : "variable";
  return html`<section class="box" aria-labelledby="put-h"><header><h2 id="put-h" class="inh">Add or replace a ${noun}</h2></header>
<form class="row" method="post" action="${base}">${csrfInput(csrf)}
<label>Name <input type="text" name="name" required maxlength="100" autocomplete="off" spellcheck="false" value="${values?.name ?? ""}"></label>
${valueField(kind, values?.value, "Value")}${repos ? reachFields(repos, values?.access ?? "all", values?.repos ?? []) : ""}
<p class="muted hint">${NAME_HINT}${kind === "secret" ? " A secret's value cannot be read back: jobs receive it, pages and the API never show it." : ""}</p>
<div><button class="primary" type="submit">Save ${noun}</button></div></form></section>`;
}

/** The per-row form replacing one item's value (and, at org level, its reach). */
function editForm(kind: ValueKind, base: string, csrf: string | null, item: CiValueItem, repos: string[] | null): Html {
  const reach = item.repos ?? null;
  return html`<details><summary>Edit<span class="sr-only"> ${item.name}</span></summary><form class="row" method="post" action="${base}">${csrfInput(csrf)}<input type="hidden" name="name" value="${item.name}">
${valueField(kind, item.value, kind === "secret" ? `New value of ${item.name}` : `Value of ${item.name}`)}${repos ? reachFields(repos, reach === null ? "all" : "selected", reach ?? []) : ""}
<div><button type="submit">Save ${item.name}</button></div></form></details>`;
}

function reachOf(item: CiValueItem): Html {
  if (item.repos === undefined) return html``;
  return html`<td>${item.repos === null ? "all repositories" : item.repos.join(", ")}</td>`;
}

/** The items as a table: name, value (variables), reach (org level), last change, and the admin's controls. */
function itemsBox(kind: ValueKind, title: string, items: CiValueItem[], base: string, csrf: string | null, admin: boolean, repos: string[] | null): Html {
  const org = repos !== null;
  const rows = items.map(
    (i) =>
      html`<tr><td><code>${i.name}</code></td>${kind === "variable" ? html`<td><code class="data">${i.value ?? ""}</code></td>` : ""}${reachOf(i)}<td>${timeOf(i.updated_at)}</td>${
        admin
          ? html`<td>${editForm(kind, base, csrf, i, repos)}${buttonForm(`${base}/${seg(i.name)}/delete`, "Delete", `Delete the ${kind} ${i.name}`, csrf)}</td>`
          : ""
      }</tr>`,
  );
  const heads = html`<th scope="col">Name</th>${kind === "variable" ? html`<th scope="col">Value</th>` : ""}${org ? html`<th scope="col">Repositories</th>` : ""}<th scope="col">Updated</th>${
    admin ? html`<th scope="col"><span class="sr-only">Actions</span></th>` : ""
  }`;
  return html`<section class="box" aria-labelledby="items-h"><header><h2 id="items-h" class="inh">${title}</h2></header>
${
  rows.length
    ? html`<div class="scroll"><table class="grid"><thead><tr>${heads}</tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="pad muted">No ${kind}s yet.</p>`
}</section>`;
}

const USE: Readonly<Record<ValueKind, string>> = {
  secret: "Jobs read a secret as ${{ secrets.NAME }}; a repository secret takes precedence over an organization secret of the same name.",
  variable: "Jobs read a variable as ${{ vars.NAME }}; a repository variable takes precedence over an organization variable of the same name.",
};

/** A repository's secrets: its own (names), the org secrets that reach it, and the admin's forms. */
export function repoSecretsPage(
  f: RepoAdminFrame,
  secrets: CiValueItem[],
  fromOrg: { name: string; updated_at: number }[],
  page: Frame,
  notice: Notice,
  values?: ValueForm,
): Html {
  const csrf = page.csrf;
  const base = repoSettingsHref(f.org, f.repo, "secrets");
  const org = html`<section class="box" aria-labelledby="org-h"><header><h2 id="org-h" class="inh">Organization secrets</h2></header>
${
  fromOrg.length
    ? html`<ul class="list">${fromOrg.map((s) => html`<li><code>${s.name}</code>${secrets.some((r) => r.name === s.name) ? html` <span class="muted">(replaced here by the repository secret)</span>` : ""}</li>`)}</ul>`
    : html`<p class="pad muted">No organization secret reaches this repository.</p>`
}</section>`;
  return repoSettings(
    page,
    f,
    "secrets",
    notice,
    html`<p class="muted">${USE.secret}</p>${itemsBox("secret", "Repository secrets", secrets, base, csrf, true, null)}${org}${putForm("secret", base, csrf, null, values)}`,
  );
}

/** A repository's variables with their values; the forms for repo admins. */
export function repoVariablesPage(f: RepoAdminFrame, variables: CiValueItem[], page: Frame, notice: Notice, values?: ValueForm): Html {
  const csrf = page.csrf;
  const base = repoSettingsHref(f.org, f.repo, "variables");
  return repoSettings(
    page,
    f,
    "variables",
    notice,
    html`<p class="muted">${USE.variable}</p>${itemsBox("variable", "Repository variables", variables, base, csrf, f.repoAdmin, null)}${
      f.repoAdmin ? putForm("variable", base, csrf, null, values) : ""
    }`,
  );
}

/** An org's secrets or variables with their reach, and the forms (org admins only reach this page). */
export function orgValuesPage(
  f: OrgAdminFrame,
  kind: ValueKind,
  items: CiValueItem[],
  repos: string[],
  csrf: string | null,
  notice: Notice,
  values?: ValueForm,
): Html {
  const base = orgHref(f.org, kindPath(kind));
  return orgSettings(
    f,
    kindPath(kind),
    notice,
    html`<p class="muted">${USE[kind]}</p>${itemsBox(kind, kind === "secret" ? "Organization secrets" : "Organization variables", items, base, csrf, f.admin, repos)}${
      f.admin ? putForm(kind, base, csrf, repos, values) : ""
    }`,
  );
}
