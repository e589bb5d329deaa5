// Comments and threads on changes (DECISIONS §5 "Reviews on changes"; issue 28).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { deleteComment, listComments, patchComment, postComment } from "../../../services/changes/comments.ts";
import { Comment, CommentCreate, CommentList, CommentListQuery, CommentPatch } from "../../../services/changes/comment-schemas.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** A change number from the path; anything else is no change (404 from the service). */
function num(raw: string): number {
  return /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : 0;
}

/** Comment routes. */
export function commentRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo/changes/:number/comments";
  const target = (request: Request, params: { org: string; repo: string }) => openRepo(ctx, callerOf(request), params.org, params.repo);
  return new Elysia({ name: "routes.changes.comments" })
    .post(
      base,
      async ({ request, params, body, set }) => {
        const out = await postComment(ctx, await target(request, params), num(params.number), body);
        set.status = 201;
        return out;
      },
      {
        body: CommentCreate,
        response: { 201: Comment, ...errors(400, 401, 403, 404, 422) },
        detail: {
          summary: "Comment on a change",
          description:
            "A general comment, a comment on lines of one side of a patchset's diff (`path`, `line`, `start_line`, `side`, `patchset`), or a reply (`in_reply_to`); with `draft: true` a pending comment of the caller's next review (seen by the caller alone, no event or notification, published by POST …/reviews). Anyone with a role who can read the repository (or the change's author, e.g. from a fork), as a person, with a credential covering repo:write. 422 for a path not in the diff, lines outside the file or its hunks, a bad range, an empty or too long body, or a reply to a comment of another change.",
        },
      },
    )
    .get(base, async ({ request, params, query }) => listComments(ctx, await target(request, params), num(params.number), query), {
      query: CommentListQuery,
      response: { 200: CommentList, ...errors(400, 401, 404) },
      detail: { summary: "A change's comments, oldest first (?patchset=, ?path=; drafts are listed to their author only)" },
    })
    .patch(`${base}/:id`, async ({ request, params, body }) => patchComment(ctx, await target(request, params), num(params.number), params.id, body), {
      body: CommentPatch,
      response: { 200: Comment, ...errors(400, 401, 403, 404, 422) },
      detail: {
        summary: "Edit a comment, or resolve its thread",
        description:
          "`body`: the comment's author. `resolved`: writers or the change's author; it is the thread's flag (kept on its root), whichever comment of the thread is named; 422 on a pending (draft) comment.",
      },
    })
    .delete(
      `${base}/:id`,
      async ({ request, params, set }) => {
        await deleteComment(ctx, await target(request, params), num(params.number), params.id);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404) },
        detail: { summary: "Delete a comment (its author or a repository admin); a thread's root with replies stays as a tombstone with a null body" },
      },
    );
}
