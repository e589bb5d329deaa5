// GET /v1/orgs/{org}/repos/{repo}/blame/{ref}?path= (DECISIONS §5): which commit last changed
// each line of a file.
import { Elysia } from "elysia";
import { Invalid } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { getBlame } from "../../../services/repos/blame.ts";
import { Blame, BlameQuery } from "../../../services/repos/blame-schemas.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { jsonAnswer } from "../../responses.ts";

/** The blame route. */
export function blameRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.blame" }).get(
    "/v1/orgs/:org/repos/:repo/blame/*",
    async ({ request, params, query }) => {
      let ref: string;
      try {
        ref = decodeURIComponent(params["*"]);
      } catch {
        throw Invalid("malformed percent-escape in the path");
      }
      const t = await openRepo(ctx, callerOf(request), params.org, params.repo);
      return jsonAnswer(await getBlame(ctx, t, ref, query.path));
    },
    {
      query: BlameQuery,
      response: { 200: Blame, ...errors(400, 401, 404, 413, 422, 503) },
      detail: {
        summary: "Which commit last changed each line of a file at a ref",
        description:
          "{ref} is a branch, tag, full ref name, HEAD or commit id; `path` names the file. Ranges of consecutive lines with the commit that last changed them, as `git blame` decides (renames are not followed: lines from before a rename are blamed on the renaming commit). 404 for a missing file, a directory or an unreadable repository; 422 for a binary file; 413 over 1 MiB; 503 when the server is busy or the blame takes too long. `truncated` when the walk stopped at its bound.",
      },
    },
  );
}
