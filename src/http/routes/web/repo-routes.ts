// The repository pages: tree, file, raw, history.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { getBlob } from "../../../services/repos/content.ts";
import { fileView, historyView, repoFrame, treeView } from "../../../services/web/views.ts";
import { HIDE, orgParam, pageDrawer, repoParam, restOf } from "./draw.ts";
import { layout, page } from "./layout.ts";
import { filePage, historyPage, treePage } from "./pages-repo.ts";

export function repoWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return new Elysia({ name: "routes.web.repo" })
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

