// How every posted form of the web pages is answered, with one refusal policy (issue 26):
// the caller is resolved and the post checked for CSRF first; then one service call, whose success
// is a 303 to a page (post/redirect/get) or a page shown once (a secret), and whose refusal is
// answered by its code, the same way on every page:
//
// - a CSRF failure (or a cross-site cookie the caller check refused): the 403 error page;
// - `unauthenticated`: the sign-in form (401), coming back to the page afterwards;
// - `not_found` (often the masked answer), any 5xx and anything unexpected: the page's own error
//   page, because a form must not tell apart "hidden" from "absent" where the page itself does not;
// - every other refusal (`invalid`, `payment_required`, `forbidden`, `conflict`, `too_large`,
//   `unprocessable`, `rate_limited` with its Retry-After, …): the form again with the service's
//   message, at the refusal's status.
//
// Three kinds of form read a refusal differently, declared by `FormSpec.kind` (see there).
import { AppError, RateLimited, type ErrorCode, Invalid, Unauthorized } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { viewerOf } from "../../../services/web/views.ts";
import { readBodyLimited } from "../../body.ts";
import { resolveCaller } from "../../principal.ts";
import { pathOf } from "../../path.ts";
import { FORM_LIMIT, checkForm, formToken } from "./csrf.ts";
import { movedPage } from "./moved.ts";
import { formOf } from "./draw.ts";
import { errorPage, layout, page, type Frame } from "./layout.ts";
import { loginPage, safeNext } from "./sign-in.ts";

/** What a form's action and its refusal get: the caller, the page frame and the form. */
export interface FormInput {
  actor: Principal;
  frame: Frame;
  form: URLSearchParams;
}

/** A posted form: how it is read, what it does, and how it is drawn again after a refusal. */
export interface FormSpec<V> {
  /** The values `act` and `again` use, from the form (trimmed fields). Without it, the form itself. */
  read?: (form: URLSearchParams) => V;
  /** The one service call: a path to go to (303, no-store) or a page to show now (a secret shown once, 201). */
  act: (i: FormInput, values: V) => Promise<string | Response>;
  /**
   * The form again with `refusal.message`, at `refusal.status`. Without it, refusals the form
   * would show are the error page (a button with no form to redraw). A refusal it throws itself
   * is answered by the error page (for example the masked 404 of a page the caller cannot see).
   */
  again?: (i: FormInput, refusal: AppError, values: V) => Promise<Response>;
  /** Where the sign-in form returns to (default: the page the form was posted from). */
  back?: string;
  /**
   * - `"session"`: signing in or out, where the caller is not resolved (nobody is signed in yet,
   *   or the session is ending): a 401 is a wrong password, drawn by `again` like any refusal.
   * - `"link"`: the page of a mailed link: a 401 (the account is disabled) is the error page,
   *   never the sign-in form, which could not help.
   * - `"lookup"`: a form that names other things by name (the token form's org and repository):
   *   their 404 is the form again, since the page itself is the person's own and hides nothing.
   */
  kind?: "session" | "link" | "lookup";
}

/** How a refusal of `kind`'s form is answered: the one policy, by code (a new code must be placed here). */
export function answerTo(code: ErrorCode, kind?: FormSpec<unknown>["kind"]): "again" | "sign-in" | "error-page" {
  switch (code) {
    case "unauthenticated":
      return kind === "session" ? "again" : kind === "link" ? "error-page" : "sign-in";
    case "not_found":
    case "gone":
      return kind === "lookup" ? "again" : "error-page";
    case "internal":
    case "upstream":
    case "unavailable":
      return "error-page";
    case "invalid":
    case "payment_required":
    case "forbidden":
    case "conflict":
    case "too_large":
    case "unsupported_media_type":
    case "unprocessable":
    case "rate_limited":
      return "again";
  }
}

/** A 303 to a path of this site (never stored); `headers` may add cookies. */
export function seeOther(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store", ...headers } });
}

/** The page asked for, as a `next` for the sign-in form: its path and query. */
export function hereOf(request: Request): string {
  const url = new URL(request.url);
  return pathOf(request.url) + url.search;
}

/** The page a form was posted from (its same-site Referer), else `/`. */
function postedFrom(ctx: Ctx, request: Request): string {
  const referer = request.headers.get("referer");
  if (!referer?.startsWith(`${ctx.baseUrl}/`)) return "/";
  return safeNext(referer.slice(ctx.baseUrl.length));
}

/** 401: the sign-in form, coming back to `next` (default: the page asked for) afterwards. */
export function signInRequired(request: Request, frame: Frame, next = hereOf(request)): Response {
  return page(layout(frame, "Sign in", loginPage({ next, csrf: frame.csrf, error: "Sign in to continue." })), 401);
}

/** Reads an `application/x-www-form-urlencoded` body within FORM_LIMIT (413 beyond); anything else is an empty form. */
export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return new URLSearchParams();
  return new URLSearchParams(new TextDecoder().decode(await readBodyLimited(request, FORM_LIMIT)));
}

/** Answers a posted form by `spec` and the one refusal policy (top of this file). */
export async function postForm<V = URLSearchParams>(ctx: Ctx, request: Request, body: unknown, spec: FormSpec<V>): Promise<Response> {
  const form = formOf(body);
  let i: FormInput = { actor: { kind: "anonymous" }, frame: { viewer: null, csrf: formToken(request) }, form };
  const back = () => spec.back ?? postedFrom(ctx, request);
  // Admission: who posts, and whether the page that sent it is ours. Its refusals are never the form again.
  try {
    if (spec.kind !== "session") {
      const actor = await resolveCaller(ctx, request);
      i = { actor, frame: { viewer: viewerOf(actor), csrf: i.frame.csrf }, form };
    }
    checkForm(ctx, request, form);
  } catch (error) {
    if (error instanceof AppError && error.code === "unauthenticated" && spec.kind !== "link") return signInRequired(request, i.frame, back());
    return errorPage(ctx, i.frame, error);
  }
  let values: V | undefined;
  try {
    values = spec.read ? spec.read(form) : (form as V);
    const out = await spec.act(i, values);
    return typeof out === "string" ? seeOther(out) : out;
  } catch (error) {
    if (!(error instanceof AppError)) return errorPage(ctx, i.frame, error);
    const answer = answerTo(error.code, spec.kind);
    if (answer === "sign-in") return signInRequired(request, i.frame, back());
    // A form posted at a repository's old name (a page opened before a rename) goes on to the new one.
    if (answer === "error-page") {
      const moved = await movedPage(ctx, i.actor, request, error);
      if (moved) return moved;
    }
    if (answer === "error-page" || !spec.again || values === undefined) return errorPage(ctx, i.frame, error);
    let shown: Response;
    try {
      shown = await spec.again(i, error, values);
    } catch (refused) {
      return errorPage(ctx, i.frame, refused);
    }
    if (error instanceof RateLimited) shown.headers.set("retry-after", String(error.retryAfterSeconds));
    return shown;
  }
}

/** A trimmed form field ("" when absent). */
export function field(form: URLSearchParams, name: string): string {
  return (form.get(name) ?? "").trim();
}

/** A comma- or space-separated list field, empty items dropped; 400 beyond `max` items. */
export function listField(form: URLSearchParams, name: string, max = 100): string[] {
  const items = field(form, name)
    .split(/[\s,]+/)
    .filter((s) => s !== "");
  if (items.length > max) throw Invalid(`at most ${max} names at once`);
  return items;
}

/** The handle of the signed-in person posting the form; 401 (the sign-in form) for anyone else. */
export function me(i: FormInput): string {
  if (!i.frame.viewer) throw Unauthorized("sign in to continue");
  return i.frame.viewer.handle;
}
