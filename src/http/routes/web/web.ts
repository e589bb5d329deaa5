// The web interface: server-rendered pages over the same services as the API (issue 19). Every
// page resolves its caller like the API does and reads through the services' own access checks,
// so a page shows exactly what the API would; refusals render as HTML with the API's status.
import { Elysia, NotFoundError } from "elysia";
import { RESERVED_NAMESPACES } from "../../../services/orgs/names.ts";
import { SESSION_COOKIE, login, logout } from "../../../services/people/auth.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { getBlob } from "../../../services/repos/content.ts";
import { fileView, historyView, homeView, orgView, repoFrame, treeView, viewerOf } from "../../../services/web/views.ts";
import { AppError } from "../../../errors.ts";
import { readBodyLimited } from "../../body.ts";
import { clearedSessionCookie, readCookie, resolveCaller, sessionCookie } from "../../principal.ts";
import { sourceOf } from "../../source.ts";
import { SCRIPT, STYLE, type Asset } from "./assets.ts";
import { FORM_LIMIT, checkForm, formToken } from "./csrf.ts";
import { errorPage, layout, page, type Frame } from "./layout.ts";
import { homePage, loginPage, safeNext, welcomePage } from "./pages-account.ts";
import { filePage, historyPage, orgPage, treePage } from "./pages-repo.ts";

/** Routes whose body is a form (read by `readForm` in the app's parse hook). */
export const FORM_ROUTES: ReadonlySet<string> = new Set(["/login", "/logout"]);

/** Reads an `application/x-www-form-urlencoded` body within FORM_LIMIT (413 beyond); anything else is an empty form. */
export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return new URLSearchParams();
  return new URLSearchParams(new TextDecoder().decode(await readBodyLimited(request, FORM_LIMIT)));
}

/** Whether a first path segment belongs to the API or another fixed route rather than an org. */
export function isReservedSegment(segment: string): boolean {
  return RESERVED_NAMESPACES.has(segment.toLowerCase());
}

const HIDE = { detail: { hide: true } } as const;

function asset(a: Asset): Response {
  return new Response(a.body, { headers: { "content-type": a.type, "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" } });
}

/** The path segments after a wildcard route's fixed part. */
function restOf(wild: string | undefined): string[] {
  return (wild ?? "").split("/").filter((s) => s !== "");
}

/** The web pages. */
export function webRoutes(ctx: Ctx) {
  /** Resolves the caller and draws a page; refusals become HTML error pages. */
  const draw = async (request: Request, body: (actor: Principal, frame: Frame) => Promise<Response>): Promise<Response> => {
    const actor = await resolveCaller(ctx, request);
    const frame: Frame = { viewer: viewerOf(actor), csrf: formToken(request) };
    try {
      return await body(actor, frame);
    } catch (error) {
      return errorPage(ctx, frame, error);
    }
  };
  /** Refuses names that are not orgs (the API, fixed routes) exactly as an unrouted path. */
  const orgParam = (org: string): string => {
    if (isReservedSegment(org)) throw new NotFoundError();
    return org;
  };
  /** `widgets.git` (a clone URL pasted in a browser) shows the repository page. */
  const repoParam = (repo: string): string => (repo.toLowerCase().endsWith(".git") ? repo.slice(0, -4) : repo);

  return new Elysia({ name: "routes.web" })
    .get(STYLE.url, () => asset(STYLE), HIDE)
    .get(SCRIPT.url, () => asset(SCRIPT), HIDE)
    .get("/", ({ request }) =>
      draw(request, async (actor, frame) => {
        if (!frame.viewer) return page(layout(frame, "Welcome", welcomePage()));
        const view = await homeView(ctx, actor);
        return page(layout(frame, "Home", homePage(frame.viewer.name, view.orgs)));
      }), HIDE)
    .get("/login", ({ request, query }) =>
      draw(request, async (_actor, frame) => {
        const next = safeNext((query as Record<string, string | undefined>).next);
        if (frame.viewer) return Response.redirect(new URL(next, ctx.baseUrl).toString(), 303);
        return page(layout(frame, "Sign in", loginPage({ next, csrf: frame.csrf })));
      }), HIDE)
    .post("/login", async ({ request, body }) => {
      const form = body instanceof URLSearchParams ? body : new URLSearchParams();
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
      const form = body instanceof URLSearchParams ? body : new URLSearchParams();
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
        const view = await orgView(ctx, actor, org, (query as Record<string, string | undefined>).cursor);
        return page(layout(frame, view.profile.display_name ?? view.profile.org, orgPage(view.profile, view.repos, view.next)));
      });
    }, HIDE)
    .get("/:org/:repo", ({ request, params }) => {
      const org = orgParam(params.org);
      return draw(request, async (actor, frame) => {
        const f = await repoFrame(ctx, actor, org, repoParam(params.repo), []);
        const { tree, readme } = await treeView(ctx, actor, org, f.repo.name, f);
        return page(layout(frame, `${f.repo.org}/${f.repo.name}`, treePage(f, tree, readme)));
      });
    }, HIDE)
    .get("/:org/:repo/tree/*", ({ request, params }) => {
      const org = orgParam(params.org);
      return draw(request, async (actor, frame) => {
        const f = await repoFrame(ctx, actor, org, params.repo, restOf(params["*"]));
        const { tree, readme } = await treeView(ctx, actor, org, f.repo.name, f);
        return page(layout(frame, `${f.path || f.ref.short} · ${f.repo.org}/${f.repo.name}`, treePage(f, tree, readme)));
      });
    }, HIDE)
    .get("/:org/:repo/blob/*", ({ request, params }) => {
      const org = orgParam(params.org);
      return draw(request, async (actor, frame) => {
        const f = await repoFrame(ctx, actor, org, params.repo, restOf(params["*"]));
        const file = await fileView(ctx, actor, org, f.repo.name, f);
        return page(layout(frame, `${f.path} · ${f.repo.org}/${f.repo.name}`, filePage(f, file)));
      });
    }, HIDE)
    .get("/:org/:repo/raw/*", ({ request, params }) => {
      const org = orgParam(params.org);
      return draw(request, async (actor) => {
        const f = await repoFrame(ctx, actor, org, params.repo, restOf(params["*"]));
        const blob = await getBlob(ctx, actor, org, f.repo.name, f.ref.full, f.path);
        const etag = `"${blob.oid}"`;
        // Why: a file at a commit id never changes; at a branch it may, so it is revalidated.
        const cache = /^[0-9a-f]{40}$/.test(f.ref.short) ? "private, max-age=31536000, immutable" : "private, no-cache";
        // Why sandbox: a stored file is someone else's content; even if a browser sniffed it as a
        // page it could run nothing on our origin.
        const headers = { etag, "cache-control": cache, "content-security-policy": "default-src 'none'; sandbox", "x-content-type-options": "nosniff", vary: "Cookie" };
        if (request.headers.get("if-none-match")?.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) return new Response(null, { status: 304, headers });
        return new Response(blob.data as Uint8Array<ArrayBuffer>, { headers: { ...headers, "content-type": blob.contentType } });
      });
    }, HIDE)
    .get("/:org/:repo/commits", ({ request, params, query }) => history(request, orgParam(params.org), params.repo, [], (query as Record<string, string | undefined>).cursor), HIDE)
    .get("/:org/:repo/commits/*", ({ request, params, query }) => history(request, orgParam(params.org), params.repo, restOf(params["*"]), (query as Record<string, string | undefined>).cursor), HIDE);

  function history(request: Request, org: string, repo: string, rest: string[], cursor: string | undefined): Promise<Response> {
    return draw(request, async (actor, frame) => {
      const f = await repoFrame(ctx, actor, org, repo, rest);
      const list = await historyView(ctx, actor, org, f.repo.name, f, cursor);
      return page(layout(frame, `History · ${f.repo.org}/${f.repo.name}`, historyPage(f, list)));
    });
  }
}

