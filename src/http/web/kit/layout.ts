// The page frame (header, navigation, sign-out form), the response headers every page carries
// (CSP without inline scripts), and the HTML error page.
import { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { WebViewer } from "../../../services/web/views.ts";
import { CSRF_FIELD } from "./csrf.ts";
import { html, seg, type Html } from "./html.ts";
import { ICON } from "./icon.ts";
import { avatar, avatarVersion } from "./avatar.ts";
import { SCRIPT, STYLE } from "./assets.ts";

/**
 * Why this policy: scripts and styles only from our own files (no inline script can run, so an
 * escaping mistake cannot become script execution); images also from https (README badges);
 * forms post only to us; no framing (clickjacking); no <base> rewriting of our links.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers of every HTML page. */
export function pageHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": PAGE_CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    // Why: private paths must not reach other sites through links in a README.
    "referrer-policy": "same-origin",
    // Pages depend on who asks: never stored by a shared cache.
    "cache-control": "private, no-cache",
    vary: "Cookie",
    ...extra,
  };
}

/** What the frame needs: the viewer (signed in or not) and the session's form token. */
export interface Frame {
  viewer: WebViewer | null;
  csrf: string | null;
  /** The signed-in person's unread notifications (the header bell); null or absent: no bell. */
  unread?: number | null;
  /** `org/name` of the repository the page is of: the header search then searches its issues (issue 33). */
  searchScope?: string;
}

/** The header's search box (a plain GET form: works without a script) and the Explore link. */
function search(scope: string | undefined): Html {
  return html`<form class="top-search" method="get" action="/search" role="search" aria-label="Site"><label class="sr" for="top-q">${scope ? `Search ${scope}` : "Search"}</label><input id="top-q" type="search" name="q" maxlength="200" placeholder="${scope ? "Search this repository" : "Search"}">${scope ? html`<input type="hidden" name="repo" value="${scope}">` : ""}</form><a href="/explore">Explore</a>`;
}

/** The header's notification bell: a link to the inbox with the unread count ("99+" beyond 99). */
function bell(unread: number): Html {
  const shown = unread > 99 ? "99+" : String(unread);
  const label = unread === 0 ? "Notifications, none unread" : `Notifications, ${unread} unread`;
  return html`<a class="bell" href="/notifications" aria-label="${label}">Inbox${unread > 0 ? html` <span class="count">${shown}</span>` : ""}</a> `;
}

/** A whole page. */
export function layout(frame: Frame, title: string, body: Html): Html {
  const who = frame.viewer
    ? html`${typeof frame.unread === "number" ? bell(frame.unread) : ""}<a class="me" href="/${seg(frame.viewer.handle)}">${avatar(frame.viewer.handle, 20, { alt: "", version: avatarVersion(frame.viewer.avatar) })}${frame.viewer.handle}</a> <a href="/settings/profile">Settings</a>
<form class="inline" method="post" action="/logout"><input type="hidden" name="${CSRF_FIELD}" value="${frame.csrf ?? ""}"><button class="link" type="submit">Sign out</button></form>`
    : html`<a href="/login">Sign in</a>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title} · svc</title>
<link rel="stylesheet" href="${STYLE.url}">
<link rel="icon" href="${ICON.url}" type="image/svg+xml">
<script src="${SCRIPT.url}" defer></script>
</head><body>
<header class="top"><a class="brand" href="/">svc</a>${search(frame.searchScope)}<nav aria-label="Account">${who}</nav></header>
<main id="main">
${body}
</main>
</body></html>
`;
}

/** An HTML response. */
export function page(markup: Html, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(markup.value, { status, headers: pageHeaders(headers) });
}

/** The error page for a refusal: the service's own message (it is what the API says too). */
export function errorPage(ctx: Ctx, frame: Frame, error: unknown): Response {
  if (!(error instanceof AppError)) {
    ctx.log.error("web page failed", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    return page(
      layout(frame, "Something went wrong", html`<h1>Something went wrong</h1><p>The server could not show this page. Try again in a moment.</p>`),
      500,
    );
  }
  const title =
    error.code === "not_found"
      ? "Not found"
      : error.code === "forbidden"
        ? "Not allowed"
        : error.code === "unauthenticated"
          ? "Sign in required"
          : "Cannot show this page";
  const signIn =
    error.code === "unauthenticated" || (error.code === "not_found" && !frame.viewer) ? html`<p><a href="/login">Sign in</a> if this is yours.</p>` : "";
  return page(layout(frame, title, html`<h1>${title}</h1><p class="error">${error.message}</p>${signIn}`), error.status);
}
