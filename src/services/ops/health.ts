// Liveness and readiness for load balancers and service managers (DECISIONS §4): ready when the
// database answers with every migration applied and the object store answers a request.
import { knownMigrations } from "../../db/migrations.ts";
import { NotFound, Unauthorized } from "../../errors.ts";
import { hashSecret, secretMatches, storedDigest } from "../../util/secrets.ts";
import type { Ctx } from "../context.ts";
import * as store from "./store.ts";

/** How long one readiness check may take before it counts as failing. */
const CHECK_TIMEOUT_MS = 3000;

/** The outcome of one check: `ok`, or what went wrong in a few words (no internals). */
export type CheckResult = "ok" | "failing" | "timeout" | "pending migrations";

/** GET /readyz's answer. */
export interface Readiness {
  ready: boolean;
  /** The node is shutting down (SIGTERM, SVC_DRAIN_MS): not ready whatever the checks say. */
  draining: boolean;
  checks: { database: CheckResult; migrations: CheckResult; object_store: CheckResult };
}

async function bounded(ctx: Ctx, name: string, run: () => Promise<CheckResult>): Promise<CheckResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<CheckResult>((resolve) => (timer = setTimeout(() => resolve("timeout"), CHECK_TIMEOUT_MS)));
  try {
    const result = await Promise.race([
      run().catch((error: unknown) => {
        // Why: the reason goes to the log, not to an unauthenticated caller.
        ctx.log.warn("readiness check failed", { check: name, error: error instanceof Error ? error.message : String(error) });
        return "failing" as const;
      }),
      timeout,
    ]);
    if (result === "timeout") ctx.log.warn("readiness check timed out", { check: name, timeout_ms: CHECK_TIMEOUT_MS });
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the three readiness checks side by side. */
export async function readiness(ctx: Ctx): Promise<Readiness> {
  const [database, migrationState, objectStore] = await Promise.all([
    bounded(ctx, "database", async () => {
      await store.ping(ctx.db.read);
      return "ok";
    }),
    bounded(ctx, "migrations", async () => {
      // Applied ⊇ known: a tag this binary does not know was applied by a newer node (rolling
      // upgrade, issue 27; migrations are additive), so only a missing known tag fails.
      const applied = new Set(await store.appliedMigrations(ctx.db.read));
      return knownMigrations(ctx.db.dialect).every((m) => applied.has(m.tag)) ? "ok" : "pending migrations";
    }),
    bounded(ctx, "object_store", async () => {
      // A stat of a key that need not exist: one authenticated round trip, nothing written.
      await ctx.store.stat("health/ready-probe");
      return "ok";
    }),
  ]);
  const checks = { database, migrations: migrationState, object_store: objectStore };
  const draining = ctx.draining === true;
  return { ready: !draining && Object.values(checks).every((c) => c === "ok"), draining, checks };
}

/**
 * GET /metrics: the registry as Prometheus text. Off (404) unless SVC_METRICS_TOKEN is set; then
 * `Authorization: Bearer <token>` is required (401 otherwise).
 */
export async function scrapeMetrics(ctx: Ctx, authorization: string | null): Promise<string> {
  const expected = ctx.config.metricsToken;
  if (expected === null) throw NotFound("metrics are off: set SVC_METRICS_TOKEN to turn them on");
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  // Why: compare digests in constant time so timing does not reveal how much of the token matched.
  if (
    !m ||
    !secretMatches(
      m[1]!,
      ctx.telemetry.once("metrics-token-digest", () => storedDigest(hashSecret(expected))),
    )
  )
    throw Unauthorized("metrics need Authorization: Bearer <SVC_METRICS_TOKEN>");
  return ctx.telemetry.registry.render((id, error) =>
    ctx.log.warn("metrics collector failed", { collector: id, error: error instanceof Error ? error.message : String(error) }),
  );
}
