// How the account pages answer forms and sign-in requirements: a POST is checked for CSRF first,
// succeeds with a 303 (post/redirect/get), and a refusal the person can fix re-renders the form
// with the service's message and status; a page that needs a person asks them to sign in (401).
import { AppError, Unauthorized } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { viewerOf } from "../../../services/web/views.ts";
import { resolveCaller } from "../../principal.ts";
import { pathOf } from "../../path.ts";
import { checkForm, formToken } from "./csrf.ts";
import { formOf } from "./draw.ts";
import { errorPage, layout, page, type Frame } from "./layout.ts";
import { loginPage } from "../account/sign-in-page.ts";

/** A 303 to a path of this site; `headers` may add cookies. */
export function seeOther(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store", ...headers } });
}

/** The page asked for, as a `next` for the sign-in form: its path and query. */
export function hereOf(request: Request): string {
  const url = new URL(request.url);
  return pathOf(request.url) + url.search;
}

/** 401: the sign-in form, coming back to `next` (default: the page asked for) afterwards. */
export function signInRequired(request: Request, frame: Frame, next = hereOf(request)): Response {
  return page(layout(frame, "Sign in", loginPage({ next, csrf: frame.csrf, error: "Sign in to continue." })), 401);
}

/** What a form handler gets: the caller, the page frame and the form. */
export interface FormInput {
  actor: Principal;
  frame: Frame;
  form: URLSearchParams;
}

/**
 * Handles a form post: resolves the caller, refuses a cross-site post (403), then runs `body`.
 * A refusal goes to `retry` first (re-render the form for a status it knows, or null), else it
 * becomes the error page; a 401 becomes the sign-in form, coming back to the page `back`.
 */
export function formHandler(ctx: Ctx) {
  return async (
    request: Request,
    body: unknown,
    back: string,
    run: (input: FormInput) => Promise<Response>,
    retry?: (error: AppError, input: FormInput) => Promise<Response | null> | Response | null,
  ): Promise<Response> => {
    const form = formOf(body);
    let input: FormInput = { actor: { kind: "anonymous" }, frame: { viewer: null, csrf: formToken(request) }, form };
    try {
      const actor = await resolveCaller(ctx, request);
      input = { actor, frame: { viewer: viewerOf(actor), csrf: input.frame.csrf }, form };
      checkForm(ctx, request, form);
      return await run(input);
    } catch (error) {
      if (error instanceof AppError) {
        const again = await Promise.resolve(retry?.(error, input)).catch(() => null);
        if (again) return again;
        if (error.status === 401) return signInRequired(request, input.frame, back);
      }
      return errorPage(ctx, input.frame, error);
    }
  };
}

/** A trimmed form field ("" when absent). */
export function field(form: URLSearchParams, name: string): string {
  return (form.get(name) ?? "").trim();
}

/** The handle of the signed-in person posting the form; 401 (the sign-in form) for anyone else. */
export function me(input: FormInput): string {
  if (!input.frame.viewer) throw Unauthorized("sign in to continue");
  return input.frame.viewer.handle;
}
