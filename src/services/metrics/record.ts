// Per-operation metric rows (git.clone, git.fetch, git.push, api.commit, …).
import { metrics } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { now } from "../context.ts";

/** The metric kinds DECISIONS §3 names. */
export type MetricKind = "git.clone" | "git.fetch" | "git.push" | "api.commit" | "api.read" | "mirror.sync" | "mirror.freshness" | "webhook.delivery";

/** Appends one metric row. */
export function recordMetric(db: DbOrTx, m: { orgId: string; repoId: string | null; kind: MetricKind; bytes: number; durationMs: number }): void {
  db.insert(metrics).values({ orgId: m.orgId, repoId: m.repoId, kind: m.kind, bytes: Math.round(m.bytes), durationMs: Math.round(m.durationMs), createdAt: now() }).run();
}
