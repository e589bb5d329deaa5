// The compare pages (issue 33; DECISIONS §5 web `/{org}/{repo}/compare/{base}...{head}`): the
// pickers' form, its GET answer (a redirect to the comparison's address), and the comparison.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { comparePickerView, compareView } from "../../../services/web/compare.ts";
import { openRepoPage } from "../../../services/web/views.ts";
import { HIDE, orgParam, pageDrawer, queryParam, repoParam, restOf } from "../kit/draw.ts";
import { seg } from "../kit/html.ts";
import { layout, page } from "../kit/layout.ts";
import { compareHref, comparePage, comparePickerPage } from "./compare-page.ts";

/** Longest spec a comparison's address takes (the API refuses longer ones too). */
const MAX_SPEC = 1024;

/** A redirect to another address of the same page (never stored: the refs it names may move). */
function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
}

/**
 * `base...head` split at its three dots; `base..head` (two dots) is taken as the same comparison
 * (the address is redirected to the three-dot one). A ref name never holds `..` (git
 * check-ref-format), so the first run of dots is the separator. Null: no separator.
 */
export function splitSpec(spec: string): { base: string; head: string; dots: 2 | 3 } | null {
  const three = spec.indexOf("...");
  if (three >= 0) return { base: spec.slice(0, three), head: spec.slice(three + 3), dots: 3 };
  const two = spec.indexOf("..");
  if (two >= 0) return { base: spec.slice(0, two), head: spec.slice(two + 2), dots: 2 };
  return null;
}

/** The compare pages. */
export function compareWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  return new Elysia({ name: "routes.web.compare" })
    .get(
      "/:org/:repo/compare",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        const base = (queryParam(query, "base") ?? "").trim();
        const head = (queryParam(query, "head") ?? "").trim();
        return draw(request, async (actor, frame) => {
          const t = await openRepoPage(ctx, actor, org, repoParam(params.repo));
          const v = await comparePickerView(ctx, t);
          const href = `/${seg(v.chrome.repo.org)}/${seg(v.chrome.repo.name)}`;
          // The pickers' form sent: the comparison's own address (a missing base is the default branch).
          if (head && base.length + head.length <= MAX_SPEC) return redirect(compareHref(href, base || v.chrome.repo.default_branch, head));
          const other = v.choices.find((c) => c.kind === "branch" && c.name !== v.chrome.repo.default_branch)?.name ?? "";
          return page(
            layout(
              frame,
              `Compare · ${v.chrome.repo.org}/${v.chrome.repo.name}`,
              comparePickerPage(frame, v, base || v.chrome.repo.default_branch, head || other),
            ),
          );
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/compare/*",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        const open = queryParam(query, "file") ?? null;
        return draw(request, async (actor, frame) => {
          const t = await openRepoPage(ctx, actor, org, repoParam(params.repo));
          const spec = restOf(params["*"]).join("/");
          const split = splitSpec(spec);
          const href = `/${seg(t.org.name)}/${seg(t.repo.name)}`;
          if (!spec) return redirect(`${href}/compare`);
          // `/compare/topic`: GitHub's short form, the default branch against topic.
          if (!split) return redirect(compareHref(href, t.repo.defaultBranch, spec));
          if (split.dots === 2) return redirect(compareHref(href, split.base, split.head));
          const v = await compareView(ctx, t, split.base, split.head);
          const title = `Compare ${split.base}...${split.head} · ${v.chrome.repo.org}/${v.chrome.repo.name}`;
          return page(layout(frame, title, await comparePage(frame, v, open, ctx.highlighter)), v.refusal?.status ?? 200);
        });
      },
      HIDE,
    );
}
