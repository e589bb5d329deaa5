// The pages mailed links open: invitation, address confirmation, password reset and address
// claim. Each is one small HTML form that posts the link's token to its /v1 route, so a person
// with only a browser can finish what the mail started. Nothing is spent by opening a page (mail
// scanners follow links); only the button spends the link.
import { Elysia } from "elysia";

interface Page {
  title: string;
  intro: string;
  /** Form fields (name, label, type). */
  fields: [string, string, string][];
  button: string;
  /** Script body: builds `{ url, body }` from `token` and the form values `v`. */
  request: string;
  /** Optional script run on load to describe the link (e.g. invitation preview). */
  preview?: string;
}

const PAGES: Record<string, Page> = {
  "/invite": {
    title: "Accept invitation",
    intro: "You were invited to join an organization.",
    fields: [["name", "Your name", "text"], ["password", "Password (at least 12 characters; your current one if you already have an account)", "password"], ["handle", "Handle (optional)", "text"]],
    button: "Accept invitation",
    request: `({ url: "/v1/auth/accept-invite", body: { invite: token, name: v.name, password: v.password, handle: v.handle || undefined } })`,
    preview: `fetch("/v1/auth/invite/preview", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ invite: token }) })
      .then((r) => r.json().then((b) => { intro.textContent = r.ok ? "Join " + b.org + " as " + b.role + " (invitation for " + b.email + ")." : b.error; }));`,
  },
  "/verify": {
    title: "Confirm your address",
    intro: "Confirm the address of your new account.",
    fields: [],
    button: "Confirm my address",
    request: `({ url: "/v1/auth/verify", body: { token } })`,
  },
  "/reset-password": {
    title: "Choose a new password",
    intro: "Choose a new password. Every other session of your account will be signed out.",
    fields: [["new_password", "New password (at least 12 characters)", "password"]],
    button: "Set password",
    request: `({ url: "/v1/auth/reset-password", body: { token, new_password: v.new_password } })`,
  },
  "/settings/emails/verify": {
    title: "Confirm an address",
    intro: "Confirm this address for your account. You need to be signed in.",
    fields: [],
    button: "Confirm address",
    request: `fetch("/v1/auth/me").then((r) => r.json()).then((me) => ({ url: "/v1/users/" + encodeURIComponent(me.handle || "-") + "/emails/verify", body: { token } }))`,
  },
};

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function render(page: Page): string {
  const fields = page.fields
    .map(([name, label, type]) => `<label>${escape(label)}<br><input name="${name}" type="${type}"${type === "password" ? ' autocomplete="new-password"' : ""}></label><br>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escape(page.title)} · svc</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}input{width:100%;padding:.4rem;margin:.3rem 0 .8rem}button{padding:.5rem 1rem}</style>
</head><body>
<h1>${escape(page.title)}</h1>
<p id="intro">${escape(page.intro)}</p>
<form id="form">
${fields}
<button type="submit">${escape(page.button)}</button>
</form>
<p id="result" role="status"></p>
<script>
const token = new URLSearchParams(location.search).get("token") || "";
const intro = document.getElementById("intro");
const result = document.getElementById("result");
${page.preview ?? ""}
document.getElementById("form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const v = Object.fromEntries(new FormData(e.target));
  const req = await ${page.request};
  const r = await fetch(req.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(req.body) });
  const b = await r.json().catch(() => ({}));
  result.textContent = r.ok ? "Done." : (b.error || "Something went wrong (" + r.status + ").");
  if (r.ok) e.target.remove();
});
</script>
</body></html>
`;
}

/** Security headers: the token sits in the URL, so it must never leak through a referrer. */
const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'",
  "cache-control": "no-store",
};

/** The link landing pages. */
export function pageRoutes() {
  let app = new Elysia({ name: "routes.pages" });
  for (const [path, page] of Object.entries(PAGES)) {
    const html = render(page);
    app = app.get(path, () => new Response(html, { headers: HEADERS }), { detail: { hide: true } });
  }
  return app;
}
