// Operation metrics and usage of an organization (SPEC §2.4; DECISIONS §3; org:read).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { Metrics, Usage, WindowQuery } from "../../../services/metrics/schemas.ts";
import { getMetrics, getUsage } from "../../../services/metrics/summary.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Metrics and usage routes. */
export function metricsRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.metrics" })
    .get("/v1/orgs/:org/metrics", ({ request, params, query }) => getMetrics(ctx, callerOf(request), params.org, query), {
      query: WindowQuery,
      response: { 200: Metrics, ...errors(400, 401, 403, 404) },
      detail: { summary: "Per-kind operation summaries over [from, to) (default the last 24 hours): count, bytes, summed duration, p50/p99" },
    })
    .get("/v1/orgs/:org/usage", ({ request, params, query }) => getUsage(ctx, callerOf(request), params.org, query), {
      query: WindowQuery,
      response: { 200: Usage, ...errors(400, 401, 403, 404) },
      detail: { summary: "Stored bytes per repository now; transfer bytes and CI minutes over [from, to) (default this calendar month)" },
    });
}
