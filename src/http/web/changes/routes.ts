// The change pages: list (filters, open-a-change form), a change's two tabs (conversation: timeline,
// status, stack, patchsets; files: the diff with line comment links), and its forms (land, title,
// close, reopen), each one call to the API's service.
import { Elysia, NotFoundError } from "elysia";
import type { CommentCreate } from "../../../services/changes/comment-schemas.ts";
import type { Ctx } from "../../../services/context.ts";
import {
  CHANGE_FILTERS,
  changeView,
  changesListView,
  editChangeFromForm,
  landFromForm,
  startRunsFromForm,
  openChangeFromForm,
  parseCommentAt,
  setChangeStateFromForm,
  commentFromForm,
  applyFromForm,
  patchCommentFromForm,
  deleteCommentFromForm,
  threadView,
  commentAtParam,
  reviewFromForm,
  dismissReviewFromForm,
  requestReviewersFromForm,
  removeReviewerFromForm,
  type ChangeFilter,
} from "../../../services/web/changes.ts";
import { HIDE, orgParam, pageDrawer, queryParam, repoParam } from "../kit/draw.ts";
import { AppError, NotFound } from "../../../errors.ts";
import { isIssue } from "../../../services/web/issues.ts";
import type { Principal } from "../../../services/access/principal.ts";
import { field, listField, postForm, seeOther, type FormInput } from "../kit/forms.ts";
import { html, seg, trusted, type Html } from "../kit/html.ts";
import { goneThread, threadBlock, type ThreadPlace } from "./threads.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { conversationPage, descriptionBase, filesFragment, filesPage } from "./detail-page.ts";
import { renderMarkdownOffloaded } from "../kit/markdown.ts";
import { changesListPage, openChangeForm, openChangePage } from "./list-page.ts";

/** A positive number from the path or query; anything else is null (the page then shows 404 or the default). */
function positive(raw: string | undefined): number | null {
  return raw !== undefined && /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : null;
}

/** A whole-number form field; anything else is 0 (the service refuses it with its own reason). */
function numberField(form: URLSearchParams, name: string): number {
  const raw = field(form, name);
  return /^[0-9]{1,9}$/.test(raw) ? Number(raw) : 0;
}

/** The change pages. */
export function changesWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  const changeUrl = (org: string, repo: string, n: number) => `/${seg(org)}/${seg(repo)}/changes/${n}`;
  /** The conversation tab, drawn for a GET or again after a refused form (with its reason, at its status). */
  const conversation = async (org: string, repo: string, n: number, actor: Principal, frame: Frame, refusal?: AppError): Promise<Response> => {
    const v = await changeView(ctx, actor, org, repo, n, "conversation");
    const linkBase = descriptionBase(v);
    // Why trusted: descriptionHtml and a review's body_html are the changes service's sanitize-html
    // output (markdown-it, html off) with `#N`, `org/repo#N` and `@handle` linked after.
    const description = v.descriptionHtml !== null ? trusted(v.descriptionHtml) : null;
    const rendered = new Map<string, Html>();
    for (const item of v.timeline) {
      if (item.kind !== "review" || !item.review.body) continue;
      rendered.set(
        item.review.id,
        item.review.body_html !== null ? trusted(item.review.body_html) : await renderMarkdownOffloaded(ctx.threads, item.review.body, linkBase),
      );
    }
    const title = `${v.change.title} · #${v.change.number} · ${v.repo.org}/${v.repo.name}`;
    return page(layout(frame, title, conversationPage(v, frame, description, rendered, refusal?.message)), refusal?.status);
  };
  /** The files tab, drawn for a GET or again after a refused comment (with its reason and the form at its line). */
  const filesTab = async (
    org: string,
    repo: string,
    n: number,
    actor: Principal,
    frame: Frame,
    shown: { ps: number | null; against: number | null; comment: string | undefined; file?: string | undefined; fragment?: boolean },
    refusal?: AppError,
  ): Promise<Response> => {
    const v = await changeView(ctx, actor, org, repo, n, "files", { patchset: shown.ps, against: shown.against });
    // "Load diff" with the script: that one file's section alone (same access, same drawing).
    if (shown.fragment && shown.file !== undefined) {
      const one = await filesFragment(v, frame.csrf, shown.file, ctx.highlighter);
      if (!one) throw NotFound("no such file in this diff");
      return page(one, 200, { vary: "Cookie, X-Svc-Fragment" });
    }
    const at = v.canComment && v.shown.against === null ? parseCommentAt(shown.comment) : null;
    const title = `Files · ${v.change.title} · #${v.change.number} · ${v.repo.org}/${v.repo.name}`;
    return page(layout(frame, title, await filesPage(v, frame, at, refusal?.message, shown.file ?? null, ctx.highlighter)), refusal?.status, {
      vary: "Cookie, X-Svc-Fragment",
    });
  };
  /** `?file=` naming a thread's file, so the files tab draws it in full (it may be collapsed otherwise). */
  const fileOfThread = async (actor: Principal, org: string, repo: string, n: number, thread: string): Promise<string> => {
    const path = (await threadView(ctx, actor, org, repo, n, thread)).thread?.root.path;
    return path ? `file=${seg(path)}` : "";
  };
  /**
   * A comment form's answers: `act` answers the thread's id. Sent by the script (`X-Svc-Fragment: 1`):
   * the thread drawn again (200), a refusal as its reason alone. Else 303 to the thread on the tab
   * the form was on; a refusal is that tab again with the reason (and, on the files tab, the form).
   */
  const commentForm = (request: Request, body: unknown, org: string, repo: string, n: number, act: (i: FormInput) => Promise<string>) => {
    const scripted = request.headers.get("x-svc-fragment") === "1";
    const placeOf = (form: URLSearchParams): ThreadPlace => (form.get("view") === "files" ? "files" : "conversation");
    return postForm(ctx, request, body, {
      act: async (i) => {
        const thread = await act(i);
        const place = placeOf(i.form);
        if (scripted) {
          const v = await threadView(ctx, i.actor, org, repo, n, thread);
          // The caller's pending count after this post: the script updates the review box and the form buttons.
          return page(v.thread ? threadBlock(v, v.thread, i.frame.csrf, place) : goneThread(thread), 200, { "x-svc-pending": String(v.pending) });
        }
        if (place === "conversation") return `${changeUrl(org, repo, n)}#t-${thread}`;
        const ps = positive(i.form.get("ps") ?? undefined);
        const query = [ps ? `ps=${ps}` : "", await fileOfThread(i.actor, org, repo, n, thread)].filter(Boolean).join("&");
        return `${changeUrl(org, repo, n)}/files${query ? `?${query}` : ""}#t-${thread}`;
      },
      again: async ({ actor, frame, form }, refusal) => {
        if (scripted) return page(html`<p class="error" role="alert">${refusal.message}</p>`, refusal.status);
        if (placeOf(form) === "conversation") return conversation(org, repo, n, actor, frame, refusal);
        const path = form.get("path");
        const line = positive(form.get("line") ?? undefined);
        const start = positive(form.get("start_line") ?? undefined);
        const side = form.get("side") === "old" ? "old" : "new";
        const comment = path && line ? commentAtParam({ path, side, line, startLine: start }) : undefined;
        return filesTab(org, repo, n, actor, frame, { ps: positive(form.get("ps") ?? undefined), against: null, comment }, refusal);
      },
    });
  };
  /** A change form's answers: 303 to `anchor` of the conversation; a refusal is the conversation again with the reason. */
  const changeForm = (request: Request, body: unknown, org: string, repo: string, n: number, act: (i: FormInput) => Promise<string>) =>
    postForm(ctx, request, body, {
      act: async (i) => `${changeUrl(org, repo, n)}${await act(i)}`,
      again: ({ actor, frame }, refusal) => conversation(org, repo, n, actor, frame, refusal),
    });
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
          return page(layout(frame, `Changes · ${v.repo.org}/${v.repo.name}`, changesListPage(frame, v, filter, v.list, form)));
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
                openChangePage(frame, v, openChangeForm(v.repo, v.branches, frame.csrf, values, error.message)),
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
        const n = positive(params.number) ?? 0;
        return draw(request, async (actor, frame) => {
          try {
            return await conversation(org, repo, n, actor, frame);
          } catch (e) {
            // Numbers are shared with issues: `/changes/N` of an issue is that issue's page.
            if (e instanceof AppError && e.code === "not_found" && (await isIssue(ctx, actor, org, repo, n)))
              return seeOther(`/${seg(org)}/${seg(repo)}/issues/${n}`);
            throw e;
          }
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/changes/:number/files",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const shown = {
          ps: positive(queryParam(query, "ps")),
          against: positive(queryParam(query, "against")),
          comment: queryParam(query, "comment"),
          file: queryParam(query, "file"),
          fragment: request.headers.get("x-svc-fragment") === "1",
        };
        return draw(request, (actor, frame) => filesTab(org, repo, positive(params.number) ?? 0, actor, frame, shown));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/comments",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return commentForm(request, body, org, repo, n, async ({ actor, form }) => {
          const reply = field(form, "in_reply_to");
          const path = form.get("path") ?? "";
          // "Start a review" / "Add review comment": a pending comment of the person's next review.
          const draft = field(form, "intent") === "review";
          const input: CommentCreate = reply
            ? { body: form.get("body") ?? "", in_reply_to: reply, draft }
            : path
              ? {
                  body: form.get("body") ?? "",
                  path,
                  side: form.get("side") === "old" ? "old" : "new",
                  line: numberField(form, "line"),
                  start_line: field(form, "start_line") === "" ? null : numberField(form, "start_line"),
                  patchset: field(form, "patchset") === "" ? null : numberField(form, "patchset"),
                  draft,
                }
              : { body: form.get("body") ?? "", draft };
          return (await commentFromForm(ctx, actor, org, repo, n, input)).thread_id;
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/comments/:id/:action",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        const { id, action } = params;
        if (!["edit", "delete", "resolve", "unresolve"].includes(action)) throw new NotFoundError();
        return commentForm(request, body, org, repo, n, async ({ actor, form }) => {
          if (action === "delete") {
            await deleteCommentFromForm(ctx, actor, org, repo, n, id);
            return field(form, "thread") || id;
          }
          const input = action === "edit" ? { body: form.get("body") ?? "" } : { resolved: action === "resolve" };
          return (await patchCommentFromForm(ctx, actor, org, repo, n, id, input)).thread_id;
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/suggestions/apply",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return postForm(ctx, request, body, {
          act: async ({ actor, form }) => {
            const ids = form.getAll("comment_ids").filter((x) => x !== "");
            await applyFromForm(ctx, actor, org, repo, n, ids, field(form, "head"));
            // A new patchset: the files tab shows it, at the (first) applied suggestion's thread (its file drawn in full).
            const file = await fileOfThread(actor, org, repo, n, ids[0]!);
            return `${changeUrl(org, repo, n)}/files${file ? `?${file}` : ""}#t-${ids[0]}`;
          },
          again: ({ actor, frame }, refusal) => filesTab(org, repo, n, actor, frame, { ps: null, against: null, comment: undefined }, refusal),
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/reviews",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return changeForm(request, body, org, repo, n, async ({ actor, form }) => {
          const r = await reviewFromForm(ctx, actor, org, repo, n, { verdict: field(form, "verdict") || "comment", body: form.get("body") ?? "" });
          return `#review-${r.id}`;
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/reviews/:id/dismiss",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return changeForm(request, body, org, repo, n, async ({ actor, form }) => {
          const r = await dismissReviewFromForm(ctx, actor, org, repo, n, params.id, field(form, "message"));
          return `#review-${r.id}`;
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/reviewers",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return changeForm(request, body, org, repo, n, async ({ actor, form }) => {
          await requestReviewersFromForm(ctx, actor, org, repo, n, listField(form, "handles", 20));
          return "#reviewers-h";
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/reviewers/:handle/remove",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number) ?? 0;
        return changeForm(request, body, org, repo, n, async ({ actor }) => {
          await removeReviewerFromForm(ctx, actor, org, repo, n, params.handle);
          return "#reviewers-h";
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
        return changeForm(request, body, org, repo, n, async ({ actor, form }) => {
          await editChangeFromForm(ctx, actor, org, repo, n, form.get("title") ?? "");
          return "";
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
        return changeForm(request, body, org, repo, n, async ({ actor }) => {
          await setChangeStateFromForm(ctx, actor, org, repo, n, "closed");
          return "";
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
        return changeForm(request, body, org, repo, n, async ({ actor }) => {
          await setChangeStateFromForm(ctx, actor, org, repo, n, "open");
          return "";
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/changes/:number/runs",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          act: async ({ actor }) => changeUrl(org, repo, (await startRunsFromForm(ctx, actor, org, repo, positive(params.number) ?? 0)).number),
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
