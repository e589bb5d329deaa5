// The General tab of a repository's settings (issue 33): rename, description and homepage,
// visibility, the default branch chosen from the existing branches, and the danger zone (delete,
// confirmed by typing `org/name`). Each box is its own form, one PATCH (or the DELETE) of the API;
// a refused form is drawn again with its reason inside its own box and what was typed.
import type { RepoBody } from "../../../services/repos/repos.ts";
import type { RepoAdminFrame } from "../../../services/web/admin.ts";
import { html, type Html } from "../kit/html.ts";
import type { Frame } from "../kit/layout.ts";
import { csrfInput } from "../kit/widgets.ts";
import { repoSettings, repoSettingsHref, type Notice } from "./frame.ts";

/** The General page's forms, each posting to `…/settings/{form}`. */
export type GeneralForm = "name" | "about" | "visibility" | "default-branch" | "delete";

/** A refused form: which one, its reason, and what it sent (drawn again in place). */
export interface GeneralRefusal {
  form: GeneralForm;
  error: string;
  values: URLSearchParams;
}

/** The reason under a form's heading when that form was refused. */
function alertFor(form: GeneralForm, refused: GeneralRefusal | undefined): Html {
  return refused?.form === form ? html`<p class="error notice" role="alert">${refused.error}</p>` : html``;
}

/** A field's value: what the refused form sent, else the repository's. */
function shownValue(form: GeneralForm, refused: GeneralRefusal | undefined, key: string, current: string): string {
  return refused?.form === form ? (refused.values.get(key) ?? "") : current;
}

/** The General tab. */
export function generalPage(page: Frame, f: RepoAdminFrame, repo: RepoBody, branches: string[], notice: Notice, refused?: GeneralRefusal): Html {
  const base = repoSettingsHref(f.org, f.repo, "general");
  const csrf = page.csrf;
  const full = `${repo.org}/${repo.name}`;
  const isPublic = refused?.form === "visibility" ? refused.values.get("visibility") === "public" : repo.public;
  const chosen = shownValue("default-branch", refused, "default_branch", repo.default_branch);
  // The current default is offered even before it exists (an empty repository), marked as such.
  const names = branches.includes(repo.default_branch) ? branches : [repo.default_branch, ...branches];
  const branchOptions = names.map(
    (b) => html`<option value="${b}"${b === chosen ? html` selected` : ""}>${b}${branches.includes(b) ? "" : " (not pushed yet)"}</option>`,
  );
  return repoSettings(
    page,
    f,
    "general",
    notice,
    html`<section class="box" aria-labelledby="name-h"><header><h2 id="name-h" class="inh">Repository name</h2></header>${alertFor("name", refused)}
<form class="row" method="post" action="${base}/name">${csrfInput(csrf)}
<label>Name <input type="text" name="name" required maxlength="100" autocomplete="off" spellcheck="false" value="${shownValue("name", refused, "name", repo.name)}"></label>
<div><button type="submit">Rename</button></div>
<p class="muted">Web pages at the old name lead here until another repository takes it. Git remotes and API clients must use the new name.</p></form></section>
<section class="box" aria-labelledby="about-h"><header><h2 id="about-h" class="inh">About</h2></header>${alertFor("about", refused)}
<form class="stack wide pad" method="post" action="${base}/about">${csrfInput(csrf)}
<label>Description <textarea name="description" rows="2" maxlength="2000">${shownValue("about", refused, "description", repo.description ?? "")}</textarea></label>
<label>Homepage <input type="url" name="homepage" maxlength="2000" placeholder="https://" value="${shownValue("about", refused, "homepage", repo.homepage ?? "")}"></label>
<div><button type="submit">Save</button></div></form></section>
<section class="box" aria-labelledby="visibility-h"><header><h2 id="visibility-h" class="inh">Visibility</h2></header>${alertFor("visibility", refused)}
<form class="stack wide pad" method="post" action="${base}/visibility">${csrfInput(csrf)}
<fieldset><legend>This repository is ${repo.public ? "public" : "private"}</legend>
<label class="check"><input type="radio" name="visibility" value="public"${isPublic ? html` checked` : ""}> Public: anyone can read it, signed in or not</label>
<label class="check"><input type="radio" name="visibility" value="private"${isPublic ? "" : html` checked`}> Private: only the organization's members and people granted access</label></fieldset>
<div><button type="submit">Change visibility</button></div></form></section>
<section class="box" aria-labelledby="branch-h"><header><h2 id="branch-h" class="inh">Default branch</h2></header>${alertFor("default-branch", refused)}
<form class="row" method="post" action="${base}/default-branch">${csrfInput(csrf)}
<div><label for="default-branch">Branch</label><select id="default-branch" name="default_branch">${branchOptions}</select></div>
<div><button type="submit">Update</button></div>
<p class="muted">${branches.length ? "Clones check it out, changes target it, and the repository page shows it." : "Nothing is pushed yet: the first branch pushed becomes the default."}</p></form></section>
<section class="box danger-zone" aria-labelledby="danger-h"><header><h2 id="danger-h" class="inh">Danger zone</h2></header>${alertFor("delete", refused)}
<form class="stack wide pad" method="post" action="${base}/delete">${csrfInput(csrf)}
<p><strong>Delete this repository.</strong> Its code, changes, issues, runs and settings go, and cannot be brought back. Forks stay.</p>
<label><span>Type <code>${full}</code> to confirm</span><input type="text" name="confirm" required maxlength="300" autocomplete="off" spellcheck="false" value="${shownValue("delete", refused, "confirm", "")}"></label>
<div><button type="submit" class="danger">Delete this repository</button></div></form></section>`,
  );
}
