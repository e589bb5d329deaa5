// Sign-in, the front page and the home page of a signed-in person.
import type { Activity } from "../../../services/hooks/activity.ts";
import type { HomeOrg } from "../../../services/web/account.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { activityList } from "./activity-page.ts";
import { repoItem } from "../repos/tree-page.ts";

/** A base no request can name: what `next` is resolved against to see where a browser would go. */
const NEXT_BASE = "https://next.invalid";

/**
 * Where to go after signing in: a path on this site, as a browser would resolve it, or `/`.
 * Why resolve instead of checking the text: browsers drop tabs and newlines from URLs and read
 * `\` as `/`, so `/\t/evil.example/` and `/\\evil.example` are `//evil.example/`, another site
 * (issue 25 row 9). The answer is the resolved path, query and fragment, which the URL rules
 * percent-encode to printable ASCII, so it is always a valid Location header (row 10: a newline
 * or U+3000 in `next` made the sign-in answer 500).
 */
export function safeNext(next: string | null | undefined): string {
  if (!next || next.length > 2000 || !next.startsWith("/")) return "/";
  let url: URL;
  try {
    url = new URL(next, NEXT_BASE);
  } catch {
    return "/";
  }
  const path = url.pathname + url.search + url.hash;
  if (url.origin !== NEXT_BASE || !path.startsWith("/") || path.startsWith("//") || !/^[\x21-\x7e]*$/.test(path)) return "/";
  return path;
}

/** The hidden CSRF field of a form (nothing without a session: then the Origin check stands alone). */
export function csrfField(csrf: string | null): Html | "" {
  return csrf ? html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf}">` : "";
}

/** A refusal shown above a form. */
export function alertOf(error: string | undefined): Html | "" {
  return error ? html`<p class="error" role="alert">${error}</p>` : "";
}

/** The sign-in form; `error` is shown above it, `email` kept. */
export function loginPage(o: { next: string; csrf: string | null; email?: string; error?: string }): Html {
  return html`<h1>Sign in</h1>
${alertOf(o.error)}
<form class="stack" method="post" action="/login">
<input type="hidden" name="next" value="${o.next}">${csrfField(o.csrf)}
<label>Email <input type="email" name="email" autocomplete="username" required value="${o.email ?? ""}"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<div><button class="primary" type="submit">Sign in</button></div>
</form>
<p class="muted"><a href="/login/forgot">Forgot your password?</a> · New here? <a href="/signup">Create an account</a></p>`;
}

/** The home page of a signed-in person: recent activity, their orgs and the repositories in each. */
export function homePage(name: string, handle: string, orgs: HomeOrg[], activity: Activity[], nowMs: number): Html {
  return html`<h1>Welcome, ${name}</h1>
<div class="home-grid">
<section class="box" aria-labelledby="activity-h"><header><h2 class="inh" id="activity-h">Recent activity</h2></header>
${activity.length ? activityList(activity, nowMs) : html`<p class="pad muted">Nothing yet: pushes and landed changes in your organizations show here.</p>`}
</section>
<nav class="box" aria-labelledby="you-h"><header><h2 class="inh" id="you-h">You</h2></header>
<ul class="list"><li><a href="/${seg(handle)}">Your profile</a></li><li><a href="/settings/profile">Settings</a></li>
${orgs.map((o) => html`<li><a href="/${seg(o.name)}">${o.name}</a> <span class="badge">${o.personal ? "personal" : o.role}</span></li>`)}</ul>
</nav>
</div>
<h2>Repositories</h2>
${orgs.map(
  (o) => html`<section class="box" aria-labelledby="org-${o.name}"><header><h3 class="inh" id="org-${o.name}"><a href="/${seg(o.name)}">${o.name}</a></h3><span class="badge">${o.personal ? "personal" : o.role}</span></header>
${o.repos.length ? html`<ul class="list">${o.repos.map(repoItem)}</ul>` : html`<p class="pad muted">No repositories yet.</p>`}
${o.more ? html`<p class="pad"><a href="/${seg(o.name)}">All repositories of ${o.name}</a></p>` : ""}</section>`,
)}`;
}

/** The front page for someone not signed in. */
export function welcomePage(): Html {
  return html`<h1>svc</h1><p>A self-hosted git host. <a href="/login">Sign in</a> to see your organizations and repositories, or <a href="/signup">create an account</a>; public repositories are open to everyone at <span class="sha">/org/repository</span>.</p>`;
}
