// The fork page: where a fork goes, for a person who may create repositories in several namespaces
// (someone with only their personal namespace is never asked: the Fork button forks at once).
import type { RepoChrome } from "../../../services/web/views.ts";
import { html, type Html } from "../kit/html.ts";
import type { Frame } from "../kit/layout.ts";
import { alertOf } from "../kit/sign-in.ts";
import { csrfInput } from "../kit/widgets.ts";
import { repoBase, repoTop } from "./repo-layout.ts";

/** What the fork form had when it was refused. */
export interface ForkValues {
  org?: string;
  name?: string;
}

/** The form: a namespace (radio buttons, the personal one first and chosen) and the fork's name. */
export function forkPage(frame: Frame, chrome: RepoChrome, namespaces: string[], v: ForkValues = {}, error?: string): Html {
  const r = chrome.repo;
  const chosen = v.org && namespaces.includes(v.org) ? v.org : namespaces[0];
  const choice = (n: string, i: number) =>
    html`<label class="radio"><input type="radio" name="org" value="${n}" id="fork-org-${i}"${n === chosen ? html` checked` : ""}> ${n}</label>`;
  return html`${repoTop(frame, chrome, "code")}
<section class="box" aria-labelledby="fork-h"><header><h2 id="fork-h" class="inh">Fork ${r.org}/${r.name}</h2></header>
<form class="stack pad" method="post" action="${repoBase(chrome)}/fork">${csrfInput(frame.csrf)}
${alertOf(error)}
${
  namespaces.length
    ? html`<fieldset><legend>Where the fork goes</legend>${namespaces.map(choice)}</fieldset>`
    : html`<p class="muted">You may not create repositories in any organization.</p>`
}
<label for="fork-name">Name</label><input id="fork-name" type="text" name="name" required maxlength="100" value="${v.name ?? r.name}" spellcheck="false">
<p class="muted">The fork starts with every branch and tag of ${r.org}/${r.name}${r.public ? "" : " and, like it, is private"}.</p>
<div><button class="primary" type="submit">Create fork</button> <a href="${repoBase(chrome)}">Cancel</a></div>
</form></section>`;
}
