// Shapes of the metrics and usage summaries (SPEC §2.4; DECISIONS §3).
import { Type, type Static } from "@sinclair/typebox";

export const WindowQuery = Type.Object({
  from: Type.Optional(Type.String({ description: "epoch milliseconds, inclusive" })),
  to: Type.Optional(Type.String({ description: "epoch milliseconds, exclusive" })),
});

/** SPEC §2.4: operations of one kind in the window. */
export const KindSummary = Type.Object({
  count: Type.Integer({ description: "operations" }),
  bytes: Type.Integer({ description: "bytes moved" }),
  ms_sum: Type.Integer({ description: "summed duration, milliseconds" }),
  p50_ms: Type.Union([Type.Integer(), Type.Null()], { description: "median duration (within about 3%), null when count is 0" }),
  p99_ms: Type.Union([Type.Integer(), Type.Null()], { description: "99th percentile duration (within about 3%), null when count is 0" }),
});
export type KindSummary = Static<typeof KindSummary>;

export const Metrics = Type.Object(
  {
    from: Type.Integer(),
    to: Type.Integer(),
    kinds: Type.Record(Type.String(), KindSummary, {
      description: "every kind: git.clone, git.fetch, git.push, api.commit, api.read, mirror.sync, mirror.freshness, webhook.delivery",
    }),
  },
  {
    examples: [
      {
        from: 1795162715366,
        to: 1795249115366,
        kinds: {
          "git.clone": { count: 3, bytes: 482113, ms_sum: 61, p50_ms: 18, p99_ms: 25 },
          "api.read": { count: 120, bytes: 0, ms_sum: 240, p50_ms: 2, p99_ms: 9 },
          "mirror.sync": { count: 0, bytes: 0, ms_sum: 0, p50_ms: null, p99_ms: null },
        },
      },
    ],
  },
);
export type Metrics = Static<typeof Metrics>;

export const Usage = Type.Object(
  {
    from: Type.Integer(),
    to: Type.Integer(),
    storage_bytes: Type.Integer({
      description: "bytes stored now: live packs and their indexes, the Git LFS objects the org's repositories uploaded, and CI artifacts",
    }),
    repos: Type.Array(Type.Object({ name: Type.String(), bytes: Type.Integer() }), { description: "every repository, by name" }),
    transfer_bytes: Type.Integer({ description: "bytes moved by git clones, fetches and pushes in the window" }),
    ci_minutes_used: Type.Integer({ description: "minutes of hosted CI jobs that started in the window" }),
  },
  {
    examples: [
      {
        from: 1793577600000,
        to: 1795249115366,
        storage_bytes: 1048576,
        repos: [{ name: "widgets", bytes: 1048576 }],
        transfer_bytes: 5242880,
        ci_minutes_used: 42,
      },
    ],
  },
);
export type Usage = Static<typeof Usage>;
