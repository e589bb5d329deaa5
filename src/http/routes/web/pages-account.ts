// Sign-in and home.
import type { RepoBody } from "../../../services/repos/repos.ts";
import { CSRF_FIELD } from "./csrf.ts";
import { html, seg, type Html } from "./html.ts";
import { repoItem } from "./pages-repo.ts";

/** Where to go after signing in: only a path on this site (never `//host`, never a URL). */
export function safeNext(next: string | null | undefined): string {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") && next.length <= 2000 ? next : "/";
}

/** The sign-in form; `error` is shown above it, `email` kept. */
export function loginPage(o: { next: string; csrf: string | null; email?: string; error?: string }): Html {
  return html`<h1>Sign in</h1>
${o.error ? html`<p class="error" role="alert">${o.error}</p>` : ""}
<form class="stack" method="post" action="/login">
<input type="hidden" name="next" value="${o.next}">${o.csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${o.csrf}">` : ""}
<label>Email <input type="email" name="email" autocomplete="username" required value="${o.email ?? ""}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<div><button class="primary" type="submit">Sign in</button></div>
</form>`;
}

/** The home page of a signed-in person: their orgs and the repositories in each. */
export function homePage(name: string, orgs: { name: string; role: string; repos: RepoBody[]; more: boolean }[]): Html {
  return html`<h1>Welcome, ${name}</h1>
${orgs.map(
  (o) => html`<section class="box" aria-labelledby="org-${o.name}"><header><h2 class="inh" id="org-${o.name}"><a href="/${seg(o.name)}">${o.name}</a></h2><span class="badge">${o.role}</span></header>
${o.repos.length ? html`<ul class="list">${o.repos.map(repoItem)}</ul>` : html`<p class="pad muted">No repositories yet.</p>`}
${o.more ? html`<p class="pad"><a href="/${seg(o.name)}">All repositories of ${o.name}</a></p>` : ""}</section>`,
)}`;
}

/** The front page for someone not signed in. */
export function welcomePage(): Html {
  return html`<h1>svc</h1><p>A self-hosted git host. <a href="/login">Sign in</a> to see your organizations and repositories; public repositories are open to everyone at <span class="sha">/org/repository</span>.</p>`;
}
