// The blame page: /{org}/{repo}/blame/{ref}/{path} (DECISIONS §4, §5). Read through the same
// service as the API (services/repos/blame.ts: repo:read, masked 404); the file's text through
// the content service, highlighted as on the file page. At a full commit id the page cannot
// change: it carries an immutable validator (kit/etag.ts), checked after the access check.
import { Elysia } from "elysia";
import { AppError } from "../../../errors.ts";
import type { RepoTarget } from "../../../services/access/target.ts";
import type { Ctx } from "../../../services/context.ts";
import { getBlame } from "../../../services/repos/blame.ts";
import { requireCommit, statBlob } from "../../../services/repos/content.ts";
import { INLINE_LINE_LIMIT, openRepoPage, repoFrame } from "../../../services/web/views.ts";
import { HIDE, orgParam, pageDrawer, restOf } from "../kit/draw.ts";
import { immutablePage, isFullSha, notModified } from "../kit/etag.ts";
import { layout, page } from "../kit/layout.ts";
import { blamePage, blameRefusedPage } from "./blame-page.ts";
import { fileLines } from "./file-page.ts";
import { highlightLines } from "./highlight.ts";
import { chromeKey } from "./repo-layout.ts";

/** The blame page's route. */
export function blameWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return new Elysia({ name: "routes.web.blame" }).get(
    "/:org/:repo/blame/*",
    ({ request, params }) => {
      const org = orgParam(params.org);
      return draw(request, async (actor, frame) => {
        const rest = restOf(params["*"]);
        const t: RepoTarget = await openRepoPage(ctx, actor, org, params.repo);
        const f = await repoFrame(ctx, t, rest);
        const title = `Blame ${f.path} · ${f.repo.org}/${f.repo.name}`;
        // A name reused after a deletion is another repository: its creation time is in the key; the
        // layout's counts and banners too (chromeKey), so a 304 never shows a stale one.
        const tag = isFullSha(f.ref.short)
          ? immutablePage(frame, ["blame", f.repo.org, f.repo.name, String(f.repo.created_at), f.ref.short, f.path, chromeKey(f)])
          : null;
        if (tag && notModified(request, tag)) {
          // Why before the 304: a commit no longer reachable is a 404, cached or not.
          if (f.ref.full === f.ref.short) await requireCommit(ctx, t, f.ref.short);
          return tag.notModified;
        }
        let blame: Awaited<ReturnType<typeof getBlame>>;
        try {
          blame = await getBlame(ctx, t, f.ref.full, f.path);
        } catch (e) {
          // A file blame does not read is a page saying so, with the links to what can be seen.
          if (e instanceof AppError && (e.code === "unprocessable" || e.code === "too_large") && f.path)
            return page(layout(frame, title, blameRefusedPage(frame, f, e.message)), e.status);
          throw e;
        }
        // A file of more lines than a page draws: the count and where the whole answer is, not a page of a million rows.
        if (blame.lines > INLINE_LINE_LIMIT)
          return page(
            layout(
              frame,
              title,
              blameRefusedPage(
                frame,
                f,
                `This file has ${blame.lines.toLocaleString("en")} lines, more than a page shows (${INLINE_LINE_LIMIT.toLocaleString("en")}). GET /v1/orgs/{org}/repos/{repo}/blame/{ref}?path= answers its blame, or run git blame on a clone.`,
              ),
            ),
            200,
            tag?.headers,
          );
        const blob = await statBlob(ctx, t, blame.commit, f.path);
        const text = new TextDecoder().decode(await blob.read());
        const shown = await highlightLines(ctx.highlighter, blob.oid, f.path, blame.lines ? fileLines(text) : [], { log: ctx.log });
        // Shown plain only for now (the highlighting thread was busy): no validator, so the next view draws it highlighted.
        return page(layout(frame, title, blamePage(frame, f, blame, shown)), 200, shown.settled === false ? undefined : tag?.headers);
      });
    },
    HIDE,
  );
}
