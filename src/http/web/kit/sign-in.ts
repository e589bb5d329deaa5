// The sign-in form and what goes with every form: the hidden CSRF field, a refusal shown above
// a form, and where signing in returns to. In the kit because a refusal of any page's form can be
// the sign-in form (forms.ts).
import { CSRF_FIELD } from "./csrf.ts";
import { html, type Html } from "./html.ts";

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
