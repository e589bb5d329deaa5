// Issues, their comments and timeline events, and the repository's labels (DECISIONS §5 "Issues"; issue 32).
import { Elysia } from "elysia";
import { Invalid } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { deleteIssueComment, listIssueComments, listIssueEvents, patchIssueComment, postIssueComment } from "../../../services/issues/comments.ts";
import { createIssue, deleteIssue, getIssue, listIssues, patchIssue } from "../../../services/issues/issues.ts";
import { createLabel, deleteLabel, listLabels, patchLabel } from "../../../services/issues/labels.ts";
import {
  Issue,
  IssueComment,
  IssueCommentCreate,
  IssueCommentList,
  IssueCreate,
  IssueEventList,
  IssueList,
  IssueListQuery,
  IssuePatch,
  Label,
  LabelCreate,
  LabelList,
  LabelPatch,
  PageOnly,
} from "../../../services/issues/schemas.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** An issue number from the path; anything else is no issue (404 from the service). */
function num(raw: string): number {
  return /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : 0;
}

function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw Invalid("malformed percent-escape in the path");
  }
}

/** Issue, comment, event and label routes. */
export function issueRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo";
  const target = (request: Request, params: { org: string; repo: string }) => openRepo(ctx, callerOf(request), params.org, params.repo);
  return new Elysia({ name: "routes.issues" })
    .post(
      `${base}/issues`,
      async ({ request, params, body, set }) => {
        const out = await createIssue(ctx, await target(request, params), body);
        set.status = 201;
        return out;
      },
      {
        body: IssueCreate,
        response: { 201: Issue, ...errors(400, 401, 403, 404, 422, 429) },
        detail: {
          summary: "Open an issue",
          description:
            "Anyone with a role who can read the repository, and on a public repository any signed-in person, as a person (not a service token) with a credential covering repo:write. `labels` and `assignees` need write access; unknown labels, unknown people and people who cannot write answer 422. The number is shared with changes. At most SVC_ISSUE_RATE_LIMIT issues and comments per person an hour (429 with Retry-After).",
        },
      },
    )
    .get(`${base}/issues`, async ({ request, params, query }) => listIssues(ctx, await target(request, params), query), {
      query: IssueListQuery,
      response: { 200: IssueList, ...errors(400, 401, 404, 422) },
      detail: {
        summary: "List and search issues",
        description:
          "Filters: state (open by default, closed, all), label (comma-separated: all of them), assignee (a handle, or none), author, q (words in the title or body, prefix match). Sort: created (default), updated, comments; direction desc (default) or asc. Each issue appears exactly once across pages, even when issues are updated between pages (issues opened since do not join). `counts` are per state for the other filters.",
      },
    })
    .get(`${base}/issues/:number`, async ({ request, params }) => getIssue(ctx, await target(request, params), num(params.number)), {
      response: { 200: Issue, ...errors(401, 404) },
      detail: { summary: "One issue" },
    })
    .patch(`${base}/issues/:number`, async ({ request, params, body }) => patchIssue(ctx, await target(request, params), num(params.number), body), {
      body: IssuePatch,
      response: { 200: Issue, ...errors(400, 401, 403, 404, 422) },
      detail: {
        summary: "Edit, label, assign, close or reopen an issue",
        description:
          "title, body, state and close_reason: writers, or the issue's author (who may close and reopen their own issue, as on GitHub). labels and assignees (whole sets): writers. Each difference is a timeline event.",
      },
    })
    .delete(
      `${base}/issues/:number`,
      async ({ request, params, set }) => {
        await deleteIssue(ctx, await target(request, params), num(params.number));
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404) },
        detail: { summary: "Delete an issue (repository admins); its number is not given again" },
      },
    )
    .post(
      `${base}/issues/:number/comments`,
      async ({ request, params, body, set }) => {
        const out = await postIssueComment(ctx, await target(request, params), num(params.number), body);
        set.status = 201;
        return out;
      },
      {
        body: IssueCommentCreate,
        response: { 201: IssueComment, ...errors(400, 401, 403, 404, 422, 429) },
        detail: { summary: "Comment on an issue", description: "Who may open an issue may comment; rate limited with issue creation (429 with Retry-After)." },
      },
    )
    .get(
      `${base}/issues/:number/comments`,
      async ({ request, params, query }) => listIssueComments(ctx, await target(request, params), num(params.number), query),
      {
        query: PageOnly,
        response: { 200: IssueCommentList, ...errors(400, 401, 404) },
        detail: { summary: "An issue's comments, oldest first" },
      },
    )
    .patch(
      `${base}/issues/:number/comments/:id`,
      async ({ request, params, body }) => patchIssueComment(ctx, await target(request, params), num(params.number), params.id, body),
      {
        body: IssueCommentCreate,
        response: { 200: IssueComment, ...errors(400, 401, 403, 404, 422) },
        detail: { summary: "Edit a comment (its author)" },
      },
    )
    .delete(
      `${base}/issues/:number/comments/:id`,
      async ({ request, params, set }) => {
        await deleteIssueComment(ctx, await target(request, params), num(params.number), params.id);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404) },
        detail: { summary: "Delete a comment (its author or a repository admin)" },
      },
    )
    .get(
      `${base}/issues/:number/events`,
      async ({ request, params, query }) => listIssueEvents(ctx, await target(request, params), num(params.number), query),
      {
        query: PageOnly,
        response: { 200: IssueEventList, ...errors(400, 401, 404) },
        detail: {
          summary: "An issue's timeline events, oldest first",
          description:
            "labeled, unlabeled, assigned, unassigned, closed (by a person, a change or a commit), reopened, renamed, edited, referenced (from a commit or a change).",
        },
      },
    )
    .get(`${base}/labels`, async ({ request, params }) => listLabels(ctx, await target(request, params)), {
      response: { 200: LabelList, ...errors(401, 404) },
      detail: { summary: "The repository's labels, by name" },
    })
    .post(
      `${base}/labels`,
      async ({ request, params, body, set }) => {
        const out = await createLabel(ctx, await target(request, params), body);
        set.status = 201;
        return out;
      },
      {
        body: LabelCreate,
        response: { 201: Label, ...errors(400, 401, 403, 404, 409, 422) },
        detail: { summary: "Create a label (writers); 409 when the name is taken, 422 for a bad name or color" },
      },
    )
    .patch(`${base}/labels/:name`, async ({ request, params, body }) => patchLabel(ctx, await target(request, params), decodeParam(params.name), body), {
      body: LabelPatch,
      response: { 200: Label, ...errors(400, 401, 403, 404, 409, 422) },
      detail: { summary: "Edit a label (writers)" },
    })
    .delete(
      `${base}/labels/:name`,
      async ({ request, params, set }) => {
        await deleteLabel(ctx, await target(request, params), decodeParam(params.name));
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404) },
        detail: { summary: "Delete a label (writers); issues lose it" },
      },
    );
}
