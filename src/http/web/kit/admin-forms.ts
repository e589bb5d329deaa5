// How every administration form is answered: CSRF first, then one service call; success is a 303
// to a page (post/redirect/get) or a page shown once (a secret), a refusal the form again with the
// service's message and status. Refusals that hide the page itself (401, the masked 404) and
// CSRF failures are error pages.
import { AppError, Invalid } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { checkForm } from "./csrf.ts";
import { formOf, pageDrawer } from "./draw.ts";
import type { Frame } from "./layout.ts";

/** What a handled form leads to: a path to go to (303) or a page to show now. */
export type Outcome = string | Response;

/** Draws the form's page again with a refusal. */
export type Redraw = (actor: Principal, frame: Frame, error: AppError, form: URLSearchParams) => Promise<Response>;

/** A 303 to `location` (a path of ours). */
export function seeOther(location: string): Response {
  return new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
}

/** The handler of posted forms for `ctx`. */
export function formPoster(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return (request: Request, body: unknown, act: (actor: Principal, form: URLSearchParams, frame: Frame) => Promise<Outcome>, redraw: Redraw): Promise<Response> =>
    draw(request, async (actor, frame) => {
      const form = formOf(body);
      checkForm(ctx, request, form);
      try {
        const out = await act(actor, form, frame);
        return typeof out === "string" ? seeOther(out) : out;
      } catch (error) {
        // Why not redrawn: a 401 or masked 404 must look exactly like the page refusing itself.
        if (!(error instanceof AppError) || error.status === 401 || error.status === 404 || error.status >= 500) throw error;
        return redraw(actor, frame, error, form);
      }
    });
}

/** A trimmed form field ("" when absent). */
export function field(form: URLSearchParams, name: string): string {
  return (form.get(name) ?? "").trim();
}

/** A comma- or space-separated list field, empty items dropped; 400 beyond `max` items. */
export function listField(form: URLSearchParams, name: string, max = 100): string[] {
  const items = field(form, name).split(/[\s,]+/).filter((s) => s !== "");
  if (items.length > max) throw Invalid(`at most ${max} names at once`);
  return items;
}
