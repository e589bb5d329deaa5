// Shapes of the blame read (DECISIONS §5 "Repositories"): GET …/blame/{ref}?path=.
import { Type, type Static } from "@sinclair/typebox";

const EXAMPLE_SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8";
const EXAMPLE_OLDER = "a11bef06a3f659402fe7563abf99ad00de2209e6";

export const BlameQuery = Type.Object({
  path: Type.Optional(Type.String({ description: "the file's path from the root (required)", maxLength: 4096, examples: ["src/main.ts"] })),
});

export const BlameCommit = Type.Object({
  sha: Type.String({ pattern: "^[0-9a-f]{40}$", examples: [EXAMPLE_SHA] }),
  author: Type.Object({ name: Type.String(), email: Type.String() }),
  summary: Type.String({ description: "the first line of the commit message" }),
  authored_at: Type.Integer({ description: "author time, epoch milliseconds" }),
});

export const BlameRange = Type.Object({
  start: Type.Integer({ minimum: 1, description: "the first line of the range, from 1" }),
  count: Type.Integer({ minimum: 1 }),
  commit: BlameCommit,
});

export const Blame = Type.Object(
  {
    ref: Type.String(),
    commit: Type.String({ pattern: "^[0-9a-f]{40}$", description: "the commit the ref resolved to" }),
    path: Type.String(),
    lines: Type.Integer({ description: "lines of the file" }),
    truncated: Type.Boolean({
      description:
        "a bound stopped the walk through history (20,000 commits, 1 GiB of versions read): lines still pending are blamed on the oldest commit reached",
    }),
    ranges: Type.Array(BlameRange, { description: "consecutive lines last changed by one commit, in file order; together they cover every line" }),
  },
  {
    description: "which commit last changed each line of a file, as `git blame` decides it (renames are not followed)",
    examples: [
      {
        ref: "main",
        commit: EXAMPLE_SHA,
        path: "src/main.ts",
        lines: 12,
        truncated: false,
        ranges: [
          {
            start: 1,
            count: 10,
            commit: { sha: EXAMPLE_OLDER, author: { name: "Ada", email: "ada@example.com" }, summary: "Start", authored_at: 1700000000000 },
          },
          {
            start: 11,
            count: 2,
            commit: { sha: EXAMPLE_SHA, author: { name: "Bo", email: "bo@example.com" }, summary: "Log the port", authored_at: 1700086400000 },
          },
        ],
      },
    ],
  },
);
export type Blame = Static<typeof Blame>;
