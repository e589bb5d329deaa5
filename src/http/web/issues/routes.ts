// The issue pages (issue 32): the list (/{org}/{repo}/issues), the new-issue form, an issue's page
// and its forms (comment, edit and delete a comment, edit the title and description, close with a
// reason, reopen, the label and assignee sets, delete), and the labels page. Every form is one call
// to the API's service through the one posted-form policy (kit/forms.ts: CSRF, then 303 or the page
// again with the service's reason at its status); a page the caller may not read is the masked 404.
import { Elysia, NotFoundError } from "elysia";
import { Forbidden, type AppError } from "../../../errors.ts";
import type { Principal } from "../../../services/access/principal.ts";
import type { Ctx } from "../../../services/context.ts";
import {
  commentFromForm,
  createLabelFromForm,
  deleteCommentFromForm,
  deleteIssueFromForm,
  deleteLabelFromForm,
  editCommentFromForm,
  editLabelFromForm,
  filtersOf,
  issueView,
  issuesListView,
  labelsView,
  newIssueView,
  openIssueFromForm,
  patchIssueFromForm,
} from "../../../services/web/issues.ts";
import { HIDE, orgParam, pageDrawer, queryParam, repoParam } from "../kit/draw.ts";
import { field, postForm, seeOther, signInRequired, type FormInput } from "../kit/forms.ts";
import { seg } from "../kit/html.ts";
import { layout, page, type Frame } from "../kit/layout.ts";
import { issuePage } from "./detail-page.ts";
import { labelsPage, type LabelValues } from "./labels-page.ts";
import { issuesListPage, newIssueForm, newIssuePage, type NewIssueValues } from "./list-page.ts";

/** A positive number from the path; anything else is 0 (no issue has it: the page is 404). */
function positive(raw: string | undefined): number {
  return raw !== undefined && /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : 0;
}

/** The checked boxes of a picker (`name` repeated), empty ones dropped, at most `max` read. */
function checked(form: URLSearchParams, name: string, max: number): string[] {
  return form
    .getAll(name)
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .slice(0, max + 1);
}

/** The issue pages. */
export function issuesWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  const repoUrl = (org: string, repo: string) => `/${seg(org)}/${seg(repo)}`;
  const issueUrl = (org: string, repo: string, n: number) => `${repoUrl(org, repo)}/issues/${n}`;

  /** The issue page, drawn for a GET or again after a refused form (with its reason, at its status). */
  const issueResponse = async (org: string, repo: string, n: number, actor: Principal, frame: Frame, refusal?: AppError, typed?: string): Promise<Response> => {
    const found = await issueView(ctx, actor, org, repo, n);
    // Numbers are shared with changes: `/issues/N` of a change is that change's page.
    if (found.kind === "change") return seeOther(`${repoUrl(org, repo)}/changes/${found.number}`);
    const v = found.view;
    const title = `${v.issue.title} · Issue #${v.issue.number} · ${v.repo.org}/${v.repo.name}`;
    return page(layout(frame, title, issuePage(v, frame, refusal?.message, typed)), refusal?.status);
  };

  /**
   * An issue form's answers: 303 to `anchor` of the issue page; a refusal is the page again with
   * the reason (the comment box keeps what was typed when `comment` says the form was the comment box).
   */
  const issueForm = (request: Request, body: unknown, org: string, repo: string, n: number, act: (i: FormInput) => Promise<string>, comment = false) =>
    postForm(ctx, request, body, {
      act: async (i) => `${issueUrl(org, repo, n)}${await act(i)}`,
      again: ({ actor, frame, form }, refusal) => issueResponse(org, repo, n, actor, frame, refusal, comment ? (form.get("body") ?? undefined) : undefined),
    });

  /** The new-issue page, empty or again after a refusal. */
  const newIssueResponse = async (
    org: string,
    repo: string,
    actor: Principal,
    frame: Frame,
    request: Request,
    values: NewIssueValues = {},
    refusal?: AppError,
  ) => {
    // The repository is resolved first: a hidden one stays the masked 404, even to someone signed out.
    const v = await newIssueView(ctx, actor, org, repo);
    if (!v.canOpen && !refusal) {
      if (!frame.viewer) return signInRequired(request, frame);
      throw Forbidden(`opening issues on ${v.repo.org}/${v.repo.name} needs a role in its organization`);
    }
    const form = newIssueForm(v.repo, v.labels, v.assignable, frame.csrf, values, refusal?.message);
    return page(layout(frame, `New issue · ${v.repo.org}/${v.repo.name}`, newIssuePage(frame, v, form)), refusal?.status);
  };

  /** The labels page, or again after a refused label form (`label`: the label whose edit form was refused; null: the new-label form). */
  const labelsResponse = async (
    org: string,
    repo: string,
    actor: Principal,
    frame: Frame,
    refused?: { label: string | null; values: LabelValues; error: AppError },
  ) => {
    const v = await labelsView(ctx, actor, org, repo);
    const body = labelsPage(frame, v, v.labels, v.canEdit, refused && { label: refused.label, values: refused.values, error: refused.error.message });
    return page(layout(frame, `Labels · ${v.repo.org}/${v.repo.name}`, body), refused?.error.status);
  };

  const labelValues = (form: URLSearchParams): LabelValues => ({
    name: field(form, "name"),
    color: field(form, "color"),
    description: field(form, "description"),
  });

  const app = new Elysia({ name: "routes.web.issues" })
    .get(
      "/:org/:repo/issues",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const f = filtersOf((name) => queryParam(query, name));
        return draw(request, async (actor, frame) => {
          const v = await issuesListView(ctx, actor, org, repo, f);
          return page(layout(frame, `Issues · ${v.repo.org}/${v.repo.name}`, issuesListPage(frame, v, f)));
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/issues/new",
      ({ request, params }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return draw(request, (actor, frame) => newIssueResponse(org, repo, actor, frame, request));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/issues",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          read: (form) => ({
            title: form.get("title") ?? "",
            body: form.get("body") ?? "",
            labels: checked(form, "labels", 50),
            assignees: checked(form, "assignees", 10),
          }),
          act: async ({ actor }, values) => issueUrl(org, repo, (await openIssueFromForm(ctx, actor, org, repo, values)).number),
          again: ({ actor, frame }, refusal, values) => newIssueResponse(org, repo, actor, frame, request, values, refusal),
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/issues/:number",
      ({ request, params }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return draw(request, (actor, frame) => issueResponse(org, repo, positive(params.number), actor, frame));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/issues/:number/comments",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number);
        return issueForm(
          request,
          body,
          org,
          repo,
          n,
          async ({ actor, form }) => {
            const c = await commentFromForm(ctx, actor, org, repo, n, form.get("body") ?? "");
            return `#comment-${c.id}`;
          },
          true,
        );
      },
      HIDE,
    )
    .post(
      "/:org/:repo/issues/:number/comments/:id/:action",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number);
        const { id, action } = params;
        if (action !== "edit" && action !== "delete") throw new NotFoundError();
        return issueForm(request, body, org, repo, n, async ({ actor, form }) => {
          if (action === "delete") {
            await deleteCommentFromForm(ctx, actor, org, repo, n, id);
            return "#timeline";
          }
          const c = await editCommentFromForm(ctx, actor, org, repo, n, id, form.get("body") ?? "");
          return `#comment-${c.id}`;
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/issues/:number/delete",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number);
        return postForm(ctx, request, body, {
          act: async ({ actor }) => {
            await deleteIssueFromForm(ctx, actor, org, repo, n);
            return `${repoUrl(org, repo)}/issues`;
          },
          again: ({ actor, frame }, refusal) => issueResponse(org, repo, n, actor, frame, refusal),
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/labels",
      ({ request, params }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return draw(request, (actor, frame) => labelsResponse(org, repo, actor, frame));
      },
      HIDE,
    )
    .post(
      "/:org/:repo/labels",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        return postForm(ctx, request, body, {
          read: labelValues,
          act: async ({ actor }, values) => {
            const l = await createLabelFromForm(ctx, actor, org, repo, {
              name: values.name ?? "",
              color: values.color ?? "",
              description: values.description ?? "",
            });
            return `${repoUrl(org, repo)}/labels#label-${seg(l.name)}`;
          },
          again: ({ actor, frame }, error, values) => labelsResponse(org, repo, actor, frame, { label: null, values, error }),
        });
      },
      HIDE,
    )
    .post(
      "/:org/:repo/labels/:name/:action",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const { name, action } = params;
        if (action !== "edit" && action !== "delete") throw new NotFoundError();
        return postForm(ctx, request, body, {
          read: labelValues,
          act: async ({ actor }, values) => {
            if (action === "delete") {
              await deleteLabelFromForm(ctx, actor, org, repo, name);
              return `${repoUrl(org, repo)}/labels`;
            }
            const l = await editLabelFromForm(ctx, actor, org, repo, name, {
              name: values.name ?? "",
              color: values.color ?? "",
              description: values.description ?? "",
            });
            return `${repoUrl(org, repo)}/labels#label-${seg(l.name)}`;
          },
          again: ({ actor, frame }, error, values) => labelsResponse(org, repo, actor, frame, { label: name, values, error }),
        });
      },
      HIDE,
    );

  // The issue's own forms: each a PATCH of the API with what the form says.
  const patches: Record<string, (form: URLSearchParams) => Parameters<typeof patchIssueFromForm>[5]> = {
    edit: (form) => ({
      ...(form.has("title") ? { title: form.get("title") ?? "" } : {}),
      ...(form.has("body") ? { body: form.get("body") ?? "" } : {}),
    }),
    close: (form) => ({ state: "closed", close_reason: field(form, "reason") === "not_planned" ? "not_planned" : "completed" }),
    reopen: () => ({ state: "open" }),
    labels: (form) => ({ labels: checked(form, "labels", 50) }),
    assignees: (form) => ({ assignees: checked(form, "assignees", 10) }),
  };
  for (const [action, patchOf] of Object.entries(patches)) {
    app.post(
      `/:org/:repo/issues/:number/${action}`,
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        const repo = repoParam(params.repo);
        const n = positive(params.number);
        return issueForm(request, body, org, repo, n, async ({ actor, form }) => {
          await patchIssueFromForm(ctx, actor, org, repo, n, patchOf(form));
          return action === "labels" ? "#labels-h" : action === "assignees" ? "#assignees-h" : "";
        });
      },
      HIDE,
    );
  }
  return app;
}
