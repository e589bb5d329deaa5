// Reviews and requested reviewers of a change (issue 28; DECISIONS §5 "Reviews on changes").
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { dismissReview, listReviews, postReview } from "../../../services/changes/reviews.ts";
import { listReviewers, removeReviewer, requestReviewers } from "../../../services/changes/reviewers.ts";
import { Review, ReviewCreate, ReviewDismiss, ReviewList, ReviewerList, ReviewersRequest } from "../../../services/changes/schemas.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** A change number from the path; anything else is no change (404 from the service). */
function num(raw: string): number {
  return /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : 0;
}

/** Review routes. */
export function reviewRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo/changes/:number";
  const target = (request: Request, params: { org: string; repo: string }) => openRepo(ctx, callerOf(request), params.org, params.repo);
  return new Elysia({ name: "routes.reviews" })
    .post(
      `${base}/reviews`,
      async ({ request, params, body, set }) => {
        const out = await postReview(ctx, await target(request, params), num(params.number), body);
        set.status = 201;
        return out;
      },
      {
        body: ReviewCreate,
        response: { 201: Review, ...errors(400, 401, 402, 403, 404, 409, 422) },
        detail: {
          summary: "Review a change",
          description:
            "A person with a role here (or the change's author, e.g. from a fork) who can read the repository, with a credential covering repo:write. `verdict` approve, request_changes or comment; up to 100 `comments` posted with it in one transaction. 422 approving (or requesting changes on) one's own change, a comment review with neither body nor comments, a bad comment (`index` names it); 409 a verdict on a landed or closed change.",
        },
      },
    )
    .get(`${base}/reviews`, async ({ request, params }) => listReviews(ctx, await target(request, params), num(params.number)), {
      response: { 200: ReviewList, ...errors(401, 404) },
      detail: { summary: "A change's reviews, oldest first" },
    })
    .post(
      `${base}/reviews/:id/dismiss`,
      async ({ request, params, body }) => dismissReview(ctx, await target(request, params), num(params.number), params.id, body ?? {}),
      {
        body: ReviewDismiss,
        response: { 200: Review, ...errors(400, 401, 403, 404, 409, 422) },
        detail: { summary: "Dismiss a review (repository admins): it no longer approves or blocks. 409 when already dismissed" },
      },
    )
    .get(`${base}/reviewers`, async ({ request, params }) => listReviewers(ctx, await target(request, params), num(params.number)), {
      response: { 200: ReviewerList, ...errors(401, 404) },
      detail: { summary: "A change's reviewers: the people asked and the people who reviewed, with their state" },
    })
    .post(`${base}/reviewers`, async ({ request, params, body }) => requestReviewers(ctx, await target(request, params), num(params.number), body), {
      body: ReviewersRequest,
      response: { 200: ReviewerList, ...errors(400, 401, 402, 403, 404, 422) },
      detail: {
        summary: "Ask people to review a change",
        description:
          "Writers or the change's author. 422 for an unknown handle or one who cannot review there (no role in the org; the same message), the author, or more than 20 requested reviewers.",
      },
    })
    .delete(
      `${base}/reviewers/:handle`,
      async ({ request, params, set }) => {
        await removeReviewer(ctx, await target(request, params), num(params.number), params.handle);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 402, 403, 404) },
        detail: { summary: "Withdraw a review request (writers or the author); their reviews stay" },
      },
    );
}
