// The web interface: server-rendered pages over the same services as the API (issue 19). Every
// page resolves its caller like the API does and reads through the services' own access checks,
// so a page shows exactly what the API would; refusals render as HTML with the API's status.
import { Elysia } from "elysia";
import { SESSION_COOKIE, login, logout } from "../../services/people/auth.ts";
import type { Ctx } from "../../services/context.ts";
import { orgView } from "../../services/web/views.ts";
import { AppError } from "../../errors.ts";
import { readBodyLimited } from "../body.ts";
import { clearedSessionCookie, readCookie, sessionCookie } from "../principal.ts";
import { sourceOf } from "../source.ts";
import { SCRIPT, STYLE, type Asset } from "./kit/assets.ts";
import { FORM_LIMIT, checkForm, formToken } from "./kit/csrf.ts";
import { HIDE, formOf, orgParam, pageDrawer, queryParam } from "./kit/draw.ts";
import { errorPage, layout, page, type Frame } from "./kit/layout.ts";
import { loginPage, safeNext } from "./account/sign-in-page.ts";
import { homeResponse, userResponse } from "./account/home.ts";
import { accountWebRoutes } from "./account/routes.ts";
import { orgPage } from "./repos/tree-page.ts";
import { repoWebRoutes } from "./repos/routes.ts";
import { adminWebRoutes } from "./admin/orgs-routes.ts";
import { ciWebRoutes } from "./ci/routes.ts";
import { changesWebRoutes } from "./changes/routes.ts";
import { newRepoForm } from "./repos/new-page.ts";

/** Reads an `application/x-www-form-urlencoded` body within FORM_LIMIT (413 beyond); anything else is an empty form. */
export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return new URLSearchParams();
  return new URLSearchParams(new TextDecoder().decode(await readBodyLimited(request, FORM_LIMIT)));
}

function asset(a: Asset): Response {
  return new Response(a.body, { headers: { "content-type": a.type, "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" } });
}

/** The web pages. */
export function webRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return new Elysia({ name: "routes.web" })
    .get(STYLE.url, () => asset(STYLE), HIDE)
    .get(SCRIPT.url, () => asset(SCRIPT), HIDE)
    .get("/", ({ request }) =>
      draw(request, (actor, frame) => homeResponse(ctx, actor, frame)), HIDE)
    .get("/login", ({ request, query }) =>
      draw(request, async (_actor, frame) => {
        const next = safeNext(queryParam(query, "next"));
        if (frame.viewer) return Response.redirect(new URL(next, ctx.baseUrl).toString(), 303);
        return page(layout(frame, "Sign in", loginPage({ next, csrf: frame.csrf })));
      }), HIDE)
    .post("/login", async ({ request, body }) => {
      const form = formOf(body);
      const frame: Frame = { viewer: null, csrf: formToken(request) };
      const next = safeNext(form.get("next"));
      try {
        checkForm(ctx, request, form);
        const { sessionSecret } = await login(ctx, { email: form.get("email") ?? "", password: form.get("password") ?? "" }, sourceOf(request));
        return new Response(null, { status: 303, headers: { location: next, "set-cookie": sessionCookie(ctx, sessionSecret), "cache-control": "no-store" } });
      } catch (error) {
        if (!(error instanceof AppError) || (error.status !== 401 && error.status !== 429)) return errorPage(ctx, frame, error);
        const headers: Record<string, string> = error.status === 429 && "retryAfterSeconds" in error ? { "retry-after": String(error.retryAfterSeconds) } : {};
        return page(layout(frame, "Sign in", loginPage({ next, email: form.get("email") ?? "", error: error.status === 401 ? "Wrong email or password." : error.message, csrf: frame.csrf })), error.status, headers);
      }
    }, HIDE)
    .post("/logout", async ({ request, body }) => {
      const form = formOf(body);
      const frame: Frame = { viewer: null, csrf: formToken(request) };
      try {
        checkForm(ctx, request, form);
      } catch (error) {
        return errorPage(ctx, frame, error);
      }
      await logout(ctx, readCookie(request, SESSION_COOKIE));
      return new Response(null, { status: 303, headers: { location: "/", "set-cookie": clearedSessionCookie(ctx), "cache-control": "no-store" } });
    }, HIDE)
    .get("/:org", ({ request, params, query }) => {
      const org = orgParam(params.org);
      return draw(request, async (actor, frame) => {
        const person = await userResponse(ctx, actor, frame, org, query);
        if (person) return person;
        const view = await orgView(ctx, actor, org, queryParam(query, "cursor"));
        return page(layout(frame, view.profile.display_name ?? view.profile.org, orgPage(view.profile, view.repos, view.next, frame.viewer !== null, view.canCreateRepo ? newRepoForm(view.profile.org, frame.csrf) : null)));
      });
    }, HIDE)
    .use(repoWebRoutes(ctx))
    .use(accountWebRoutes(ctx))
    .use(adminWebRoutes(ctx))
    .use(ciWebRoutes(ctx))
    .use(changesWebRoutes(ctx));
}
