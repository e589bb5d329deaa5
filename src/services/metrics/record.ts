// Per-operation metric rows (git.clone, git.fetch, git.push, api.commit, …).
import type { Tx } from "../../db/database.ts";
import { now, type Ctx } from "../context.ts";
import { insertMetric } from "./store.ts";

/** The metric kinds DECISIONS §3 names. */
export type MetricKind = "git.clone" | "git.fetch" | "git.push" | "api.commit" | "api.read" | "mirror.sync" | "mirror.freshness" | "webhook.delivery";

/** One measured operation. */
export interface MetricSample {
  orgId: string;
  repoId: string | null;
  kind: MetricKind;
  bytes: number;
  durationMs: number;
}

/** Appends one metric row inside an open transaction. */
export async function recordMetricIn(tx: Tx, m: MetricSample): Promise<void> {
  await insertMetric(tx, { orgId: m.orgId, repoId: m.repoId, kind: m.kind, bytes: Math.round(m.bytes), durationMs: Math.round(m.durationMs), createdAt: now() });
}

/** Appends one metric row in its own transaction. */
export function recordMetric(ctx: Ctx, m: MetricSample): Promise<void> {
  return ctx.db.transaction((tx) => recordMetricIn(tx, m));
}
