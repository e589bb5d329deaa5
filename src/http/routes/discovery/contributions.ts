// The contribution graph (SPEC §2.9, §4.2, §8).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { contributionGraphJson } from "../../../services/discovery/contributions.ts";
import { ContributionGraph, ContributionsQuery } from "../../../services/discovery/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { jsonBytesAnswer } from "../../responses.ts";

/** Contribution graph routes. */
export function contributionRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.contributions" }).get(
    "/v1/users/:handle/contributions",
    async ({ params, query }) => jsonBytesAnswer(await contributionGraphJson(ctx, params.handle, query)),
    {
      query: ContributionsQuery,
      response: { 200: ContributionGraph, ...errors(400, 404) },
      detail: { summary: "Commits per day (default the year ending today, at most 3653 days); the same answer for every reader" },
    },
  );
}
