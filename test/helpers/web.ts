// HTTP helpers for the web pages' black-box tests: fetch a page, post a form as a browser would,
// read the form token out of a page, and the visible text of markup.
import type { RunningServer } from "./server.ts";

/** A page: status, headers and text (redirects not followed). */
export async function getPage(server: RunningServer, path: string, cookie?: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { headers: { ...(cookie ? { cookie } : {}), ...headers }, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Posts a form as a browser would: urlencoded, with our Origin unless told otherwise (null: none). */
export async function postForm(server: RunningServer, path: string, fields: Record<string, string>, o: { cookie?: string; origin?: string | null } = {}) {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (o.cookie) headers.cookie = o.cookie;
  if (o.origin !== null) headers.origin = o.origin ?? server.url;
  const res = await fetch(server.url + path, { method: "POST", headers, body: new URLSearchParams(fields).toString(), redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The hidden CSRF token in a page. */
export function csrfOf(page: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(page);
  if (!m) throw new Error("no csrf field in page");
  return m[1]!;
}

/** The text a person reads: tags dropped, the common entities decoded. */
export function textOf(markup: string): string {
  return markup
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&minus;/g, "−")
    .replace(/&amp;/g, "&");
}
