// The branches and tags pages, deleting a branch from the branches page, and archive downloads at
// /{org}/{repo}/archive/{ref}.tar.gz|.zip (DECISIONS §5). Every read and the delete go through
// the services the API answers with (branches.ts, archive.ts, refs.ts deleteRef), so a page shows
// and does what the API would for the same caller; a hidden repository is the masked 404.
import { Elysia } from "elysia";
import { Invalid, NotFound } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { getArchive, splitArchiveName } from "../../../services/repos/archive.ts";
import { branchesOverview, deleteBranch, listTags } from "../../../services/repos/branches.ts";
import { openRepoPage, repoChrome } from "../../../services/web/views.ts";
import { archiveResponse } from "../../routes/repos/branches.ts";
import { HIDE, orgParam, pageDrawer, queryParam, repoParam, restOf } from "../kit/draw.ts";
import { field, postForm } from "../kit/forms.ts";
import { seg } from "../kit/html.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { branchesPage, tagsPage } from "./refs-pages.ts";

/** Branches one page lists. */
const PAGE_BRANCHES = "100";

/** The branches and tags pages, the delete-branch form and archive downloads. */
export function refsWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);

  /** The branches page for `actor`, with a refusal's reason and status when a delete was refused. */
  const branchesResponse = async (
    actor: Principal,
    frame: Frame,
    org: string,
    repo: string,
    cursor: string | undefined,
    error: { message: string; status: number } | null,
  ) => {
    const t = await openRepoPage(ctx, actor, org, repo);
    const [chrome, view] = await Promise.all([repoChrome(ctx, t), branchesOverview(ctx, t, { limit: PAGE_BRANCHES, cursor })]);
    return page(
      layout(frame, `Branches · ${chrome.repo.org}/${chrome.repo.name}`, branchesPage(frame, chrome, view, error?.message ?? null)),
      error?.status ?? 200,
    );
  };

  return new Elysia({ name: "routes.web.refs" })
    .get(
      "/:org/:repo/branches",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, (actor, frame) => branchesResponse(actor, frame, org, repoParam(params.repo), queryParam(query, "cursor"), null));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/branches/delete",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          read: (form) => ({ branch: field(form, "branch"), expected: field(form, "expected") }),
          act: async ({ actor }, v) => {
            if (!v.branch) throw Invalid("name the branch to delete");
            if (v.expected && !/^[0-9a-f]{40}$/.test(v.expected)) throw Invalid("expected must be a full commit id");
            const t = await openRepoPage(ctx, actor, org, repo);
            // The form names where the branch was when the page was drawn: a branch that moved since is not deleted (409).
            await deleteBranch(ctx, t, v.branch, v.expected || undefined);
            return `/${seg(t.named.org)}/${seg(t.repo.name)}/branches`;
          },
          again: ({ actor, frame }, refusal) => branchesResponse(actor, frame, org, repo, undefined, refusal),
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/tags",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor, frame) => {
          const t = await openRepoPage(ctx, actor, org, repoParam(params.repo));
          const [chrome, list] = await Promise.all([repoChrome(ctx, t), listTags(ctx, t, { limit: "100", cursor: queryParam(query, "cursor") })]);
          return page(layout(frame, `Tags · ${chrome.repo.org}/${chrome.repo.name}`, tagsPage(frame, chrome, list)));
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/archive/*",
      ({ request, params }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor) => {
          const named = splitArchiveName(restOf(params["*"]).join("/"));
          if (!named) throw NotFound("an archive is named {ref}.zip or {ref}.tar.gz");
          const t = await openRepoPage(ctx, actor, org, repoParam(params.repo));
          return archiveResponse(request, await getArchive(ctx, t, named.ref, named.format), named.format);
        });
      },
      HIDE,
    );
}
