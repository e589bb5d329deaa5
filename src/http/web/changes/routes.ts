// The change pages: list (filters, open-a-change form), a change's two tabs (conversation: timeline,
// status, stack, patchsets; files: the diff with line comment links), and its forms (land, title,
// close, reopen), each one call to the API's service.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import {
  CHANGE_FILTERS,
  changeView,
  changesListView,
  editChangeFromForm,
  landFromForm,
  openChangeFromForm,
  parseCommentAt,
  setChangeStateFromForm,
  type ChangeFilter,
} from "../../../services/web/changes.ts";
import { HIDE, orgParam, pageDrawer, queryParam, repoParam } from "../kit/draw.ts";
import { postForm } from "../kit/forms.ts";
import { seg } from "../kit/html.ts";
import { layout, page } from "../kit/layout.ts";
import { conversationPage, descriptionBase, filesPage } from "./detail-page.ts";
import { renderMarkdownOffloaded } from "../kit/markdown.ts";
import { changesListPage, openChangeForm, openChangePage } from "./list-page.ts";

/** A positive number from the path or query; anything else is null (the page then shows 404 or the default). */
function positive(raw: string | undefined): number | null {
  return raw !== undefined && /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : null;
}

/** The change pages. */
export function changesWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  const changeUrl = (org: string, repo: string, n: number) => `/${seg(org)}/${seg(repo)}/changes/${n}`;
  return new Elysia({ name: "routes.web.changes" })
    .get(
      "/:org/:repo/changes",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const asked = queryParam(query, "state");
        const filter: ChangeFilter = (CHANGE_FILTERS as readonly string[]).includes(asked ?? "") ? (asked as ChangeFilter) : "open";
        return draw(request, async (actor, frame) => {
          const v = await changesListView(ctx, actor, org, repo, filter, queryParam(query, "cursor"));
          const form = v.repo.viewer_write && v.branches.length > 1 ? openChangeForm(v.repo, v.branches, frame.csrf) : null;
          return page(layout(frame, `Changes · ${v.repo.org}/${v.repo.name}`, changesListPage(v.repo, filter, v.list, form)));
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          read: (form) => ({
            title: form.get("title") ?? "",
            branch: form.get("branch") ?? "",
            target: form.get("target") ?? "",
            description: form.get("description") ?? "",
          }),
          act: async ({ actor }, values) => changeUrl(org, repo, (await openChangeFromForm(ctx, actor, org, repo, values)).number),
          again: async ({ actor, frame }, error, values) => {
            const v = await changesListView(ctx, actor, org, repo, "open", undefined);
            return page(
              layout(
                frame,
                `Open a change · ${v.repo.org}/${v.repo.name}`,
                openChangePage(v.repo, openChangeForm(v.repo, v.branches, frame.csrf, values, error.message)),
              ),
              error.status,
            );
          },
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/changes/:number",
      ({ request, params }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return draw(request, async (actor, frame) => {
          const v = await changeView(ctx, actor, org, repo, positive(params.number) ?? 0, "conversation");
          const description = v.change.description ? await renderMarkdownOffloaded(ctx.threads, v.change.description, descriptionBase(v)) : null;
          return page(layout(frame, `${v.change.title} · #${v.change.number} · ${v.repo.org}/${v.repo.name}`, conversationPage(v, frame.csrf, description)));
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/changes/:number/files",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return draw(request, async (actor, frame) => {
          const v = await changeView(ctx, actor, org, repo, positive(params.number) ?? 0, "files", {
            patchset: positive(queryParam(query, "ps")),
            against: positive(queryParam(query, "against")),
          });
          const at = v.canComment && v.shown.against === null ? parseCommentAt(queryParam(query, "comment")) : null;
          return page(layout(frame, `Files · ${v.change.title} · #${v.change.number} · ${v.repo.org}/${v.repo.name}`, filesPage(v, frame.csrf, at)));
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/edit",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => changeUrl(org, repo, (await editChangeFromForm(ctx, actor, org, repo, n, form.get("title") ?? "")).number),
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/close",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return postForm(ctx, request, body, {
          act: async ({ actor }) => changeUrl(org, repo, (await setChangeStateFromForm(ctx, actor, org, repo, n, "closed")).number),
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/reopen",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return postForm(ctx, request, body, {
          act: async ({ actor }) => changeUrl(org, repo, (await setChangeStateFromForm(ctx, actor, org, repo, n, "open")).number),
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/land",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) =>
            changeUrl(org, repo, (await landFromForm(ctx, actor, org, repo, positive(params.number) ?? 0, form.get("head"))).number),
        });
      },
      HIDE,
    );
}
