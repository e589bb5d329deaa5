// Shapes the git service answers in, shared by the APIs above it (a commit's diff, a change's diff).
import { Type, type Static } from "@sinclair/typebox";
import { NullableString } from "../schemas.ts";

/** One changed file of a diff (git/diff.ts `diffTreePair`). */
export const DiffFile = Type.Object({
  path: Type.String(),
  status: Type.String({ enum: ["added", "deleted", "modified", "type-changed"] }),
  old_mode: NullableString(),
  new_mode: NullableString(),
  old_oid: NullableString(),
  new_oid: NullableString(),
  binary: Type.Boolean(),
  additions: Type.Integer(),
  deletions: Type.Integer(),
  patch: NullableString({ description: "unified diff hunks; null for binary files and once the answer's patch budget is spent" }),
  patch_truncated: Type.Boolean({ description: "true when `patch` was left out for size (file too large or the answer's budget spent)" }),
});
export type DiffFile = Static<typeof DiffFile>;
