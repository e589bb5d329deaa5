// The "new repository" form (on the org page for those who may create one, and alone when a
// submission is refused). It posts to /{org}/new, which calls the same service as the API's
// POST /v1/orgs/{org}/repos.
import { CSRF_FIELD } from "../kit/csrf.ts";
import { html, seg, type Html } from "../kit/html.ts";

/** What the form had when it was refused. */
export interface NewRepoValues {
  name?: string;
  description?: string;
  public?: boolean;
}

/** The form; `error` is shown above it with the values kept. */
export function newRepoForm(org: string, csrf: string | null, v: NewRepoValues = {}, error?: string): Html {
  return html`${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form class="stack" method="post" action="/${seg(org)}/new">
${csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">` : ""}
<label>Repository name <input type="text" name="name" required maxlength="100" autocomplete="off" spellcheck="false" value="${v.name ?? ""}"></label>
<label>Description <span class="muted">(optional)</span><input type="text" name="description" maxlength="350" value="${v.description ?? ""}"></label>
<fieldset><legend>Visibility</legend>
<label class="radio"><input type="radio" name="visibility" value="private"${v.public ? "" : html` checked`}> Private: only members and people granted access</label>
<label class="radio"><input type="radio" name="visibility" value="public"${v.public ? html` checked` : ""}> Public: anyone can read it</label>
</fieldset>
<div><button class="primary" type="submit">Create repository</button></div>
</form>`;
}

/** The form alone on a page, after a refused submission. */
export function newRepoPage(org: string, csrf: string | null, v: NewRepoValues, error: string): Html {
  return html`<h1>New repository in <a href="/${seg(org)}">${org}</a></h1>${newRepoForm(org, csrf, v, error)}`;
}
