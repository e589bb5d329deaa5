// Applying suggestions on a change (issue 28; DECISIONS §5 "Reviews on changes").
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { applySuggestions } from "../../../services/changes/suggestions.ts";
import { SuggestionApplied, SuggestionApply } from "../../../services/changes/suggestion-schemas.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** A change number from the path; anything else is no change (404 from the service). */
function num(raw: string): number {
  return /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : 0;
}

/** Suggestion routes. */
export function suggestionRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo";
  return new Elysia({ name: "routes.changes.suggestions" }).post(
    `${base}/changes/:number/suggestions/apply`,
    async ({ request, params, body, set }) => {
      const out = await applySuggestions(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), num(params.number), body);
      set.status = 201;
      return out;
    },
    {
      body: SuggestionApply,
      response: { 201: SuggestionApplied, ...errors(400, 401, 402, 403, 404, 409, 422) },
      detail: {
        summary: "Apply suggestions: one commit on the change's branch",
        description:
          "Write access to the repository holding the branch (for a change from a fork: the fork; 403 otherwise). The commit is by the caller, with a Co-authored-by trailer per suggester. 422 for a comment that is not a published suggestion of this change on the new side, already applied, outdated, or overlapping another; 409 `{ error, current, comment_id, path }` when the commented lines changed since, and 409 `{ error, current }` when the branch moved (a push in between, or `head` given and stale).",
      },
    },
  );
}
