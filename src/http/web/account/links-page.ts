// Signing up and the pages mailed links open: confirm an account, reset a password, accept an
// invitation, confirm an added address. Opening a link's page spends nothing (mail scanners follow
// links); only its button does, by posting the token back to the same address.
import type { InvitePreview } from "../../../services/people/schemas.ts";
import { html, type Html } from "../kit/html.ts";
import { alertOf, csrfField } from "../kit/sign-in.ts";

/** What a form keeps after a refusal. */
export interface Kept {
  error?: string;
  values?: Record<string, string>;
}

const PASSWORD_HINT = "At least 12 characters.";

/** The sign-up form. */
export function signupPage(csrf: string | null, k: Kept = {}): Html {
  const v = k.values ?? {};
  return html`<h1>Create your account</h1>
${alertOf(k.error)}
<form class="stack" method="post" action="/signup">${csrfField(csrf)}
<label>Email <input type="email" name="email" autocomplete="email" required value="${v.email ?? ""}"></label>
<label>Name <input type="text" name="name" autocomplete="name" required maxlength="100" value="${v.name ?? ""}"></label>
<label>Handle <input type="text" name="handle" autocomplete="username" required maxlength="39" aria-describedby="handle-hint" value="${v.handle ?? ""}"></label>
<p id="handle-hint" class="hint muted">Your address on svc (/handle) and your personal namespace: letters, digits and single hyphens.</p>
<label>Password <input type="password" name="password" autocomplete="new-password" required minlength="12" aria-describedby="pw-hint"></label>
<p id="pw-hint" class="hint muted">${PASSWORD_HINT}</p>
<div><button class="primary" type="submit">Create account</button></div>
</form>
<p class="muted">Already have an account? <a href="/login">Sign in</a></p>`;
}

/** After signing up (or asking again): the uniform answer, and a form to ask for another link. */
export function signupSentPage(csrf: string | null, detail: string): Html {
  return html`<h1>Check your email</h1>
<p role="status">${detail}</p>
<h2>No mail?</h2>
<form class="stack" method="post" action="/signup/resend">${csrfField(csrf)}
<label>Email <input type="email" name="email" autocomplete="email" required></label>
<div><button type="submit">Send a new link</button></div>
</form>`;
}

/** The account confirmation link's page. */
export function verifyPage(csrf: string | null, token: string): Html {
  return html`<h1>Confirm your address</h1>
<p>Confirm the address of your new account; you will be signed in.</p>
<form method="post" action="/verify">${csrfField(csrf)}<input type="hidden" name="token" value="${token}">
<button class="primary" type="submit">Confirm my address</button></form>`;
}

/** "Forgot your password?" */
export function forgotPage(csrf: string | null, sent: string | null): Html {
  return html`<h1>Reset your password</h1>
${sent ? html`<p role="status">${sent}</p>` : html`<p>Give the address you sign in with; a link to choose a new password will be mailed to it.</p>`}
<form class="stack" method="post" action="/login/forgot">${csrfField(csrf)}
<label>Email <input type="email" name="email" autocomplete="username" required></label>
<div><button class="primary" type="submit">Mail me a link</button></div>
</form>`;
}

/** The reset link's page. */
export function resetPage(csrf: string | null, token: string, error?: string): Html {
  return html`<h1>Choose a new password</h1>
<p>Every other session of your account will be signed out.</p>
${alertOf(error)}
<form class="stack" method="post" action="/reset-password">${csrfField(csrf)}<input type="hidden" name="token" value="${token}">
<label>New password <input type="password" name="new_password" autocomplete="new-password" required minlength="12" aria-describedby="pw-hint"></label>
<p id="pw-hint" class="hint muted">${PASSWORD_HINT}</p>
<div><button class="primary" type="submit">Set password</button></div>
</form>`;
}

/** The invitation link's page: what it offers, and the form that accepts it. */
export function invitePage(csrf: string | null, token: string, preview: InvitePreview, k: Kept = {}): Html {
  const v = k.values ?? {};
  return html`<h1>Join ${preview.org}</h1>
<p>You are invited to join <strong>${preview.org}</strong> as ${preview.role} (invitation for ${preview.email}).</p>
${alertOf(k.error)}
<form class="stack" method="post" action="/invite">${csrfField(csrf)}<input type="hidden" name="token" value="${token}">
<label>Your name <input type="text" name="name" autocomplete="name" required maxlength="100" value="${v.name ?? ""}"></label>
<label>Password <input type="password" name="password" autocomplete="new-password" required aria-describedby="inv-pw-hint"></label>
<p id="inv-pw-hint" class="hint muted">At least 12 characters; your current password if ${preview.email} already has an account.</p>
<label>Handle (optional) <input type="text" name="handle" autocomplete="username" maxlength="39" value="${v.handle ?? ""}"></label>
<div><button class="primary" type="submit">Accept invitation</button></div>
</form>`;
}

/** The page of a link to an added address (signed in). */
export function claimPage(csrf: string | null, token: string, handle: string): Html {
  return html`<h1>Confirm an address</h1>
<p>Confirm this address for your account <strong>${handle}</strong>.</p>
<form method="post" action="/settings/emails/verify">${csrfField(csrf)}<input type="hidden" name="token" value="${token}">
<button class="primary" type="submit">Confirm address</button></form>`;
}
