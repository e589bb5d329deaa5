// Request and response shapes of applying suggestions (issue 28; DECISIONS §5 "Reviews on changes").
import { Type, type Static } from "@sinclair/typebox";

/** How many suggestions one apply takes. */
export const MAX_APPLY_COMMENTS = 50;
/** The longest commit message a caller may give. */
export const MAX_APPLY_MESSAGE = 10_000;

const Sha = (options: Record<string, unknown> = {}) => Type.String({ pattern: "^[0-9a-f]{40}$", ...options });

/** POST …/changes/{n}/suggestions/apply */
export const SuggestionApply = Type.Object(
  {
    comment_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: MAX_APPLY_COMMENTS,
      description: "the suggestion comments to apply, one commit for all",
    }),
    head: Type.Optional(Sha({ description: "the change's head the caller saw: 409 with `current` when it moved since" })),
    message: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_APPLY_MESSAGE,
        description: "default `Apply suggestion from @handle` (one) or `Apply suggestions from code review`; Co-authored-by trailers are added",
      }),
    ),
  },
  { examples: [{ comment_ids: ["01JD3Z8X5Q2V7K9M4N6P8R0T2W"] }] },
);
export type SuggestionApply = Static<typeof SuggestionApply>;

/** The commit that applied them. */
export const SuggestionApplied = Type.Object(
  {
    commit: Sha(),
    branch: Type.String({ description: "the change's branch (in the fork for a change from a fork)" }),
    applied: Type.Array(Type.String(), { description: "the comment ids applied, as asked" }),
  },
  { examples: [{ commit: "9fceb02d0ae598e95dc970b74767f19372d61af8", branch: "fix-typo", applied: ["01JD3Z8X5Q2V7K9M4N6P8R0T2W"] }] },
);
export type SuggestionApplied = Static<typeof SuggestionApplied>;
