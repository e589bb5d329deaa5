// GET /v1/orgs/{org}/repos/{repo}/blame/{ref}?path= (DECISIONS §5): which commit last changed
// each line of a file. Read under the same rule as the content reads (repo:read; a repository the
// caller may not read is the 404 of a missing one); the work is services/git/blame.ts.
import { Invalid, NotFound, TooLarge, Unprocessable } from "../../errors.ts";
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { blameOf, BLAME_LIMITS } from "../git/blame.ts";
import { snapshotOf } from "../git/snapshot.ts";
import type { Blame } from "./blame-schemas.ts";
import { splitPath } from "./commits.ts";
import { resolveRevision, revisionOptions } from "./content.ts";

/** The blame of `path` at `ref` (a branch, tag, full ref name, HEAD or commit id), as the API answers it. */
export async function getBlame(ctx: Ctx, t: RepoTarget, ref: string, path: string | undefined): Promise<Blame> {
  need(t, "repo:read");
  if (path === undefined || path.replace(/^\/+|\/+$/g, "") === "") throw Invalid("path is required: the file to blame");
  const parts = splitPath(path.replace(/^\/+|\/+$/g, ""));
  const snapshot = await snapshotOf(ctx, t);
  const { oid } = await resolveRevision(snapshot, ref, revisionOptions(t.actor));
  const outcome = await blameOf(ctx, t.repo.id, snapshot, oid, parts);
  const shown = parts.join("/");
  switch (outcome.kind) {
    case "missing":
      throw NotFound(`no file ${JSON.stringify(shown)} at ${ref}`);
    case "not_file":
      throw NotFound(`${JSON.stringify(shown)} is not a file at ${ref} (a directory or a submodule)`);
    case "binary":
      throw Unprocessable(`${JSON.stringify(shown)} is a binary file; blame reads text`);
    case "too_large":
      throw TooLarge(
        `${JSON.stringify(shown)} is ${outcome.size} bytes; blame reads files of at most ${BLAME_LIMITS.maxBytes / 1024 / 1024} MiB (use git blame on a clone)`,
      );
  }
  return {
    ref,
    commit: oid,
    path: shown,
    lines: outcome.lines,
    truncated: outcome.truncated,
    ranges: outcome.ranges.map((r) => ({ start: r.start, count: r.count, commit: outcome.commits[r.commit]! })),
  };
}
