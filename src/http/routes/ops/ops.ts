// Operations: liveness, readiness and Prometheus metrics (DECISIONS §4).
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { readiness, scrapeMetrics } from "../../../services/ops/health.ts";
import { errors } from "../../../services/schemas.ts";

const Check = Type.Union([Type.Literal("ok"), Type.Literal("failing"), Type.Literal("timeout"), Type.Literal("pending migrations")]);
const Health = Type.Object({ status: Type.Literal("ok") }, { examples: [{ status: "ok" }] });
const Ready = Type.Object(
  {
    status: Type.Union([Type.Literal("ready"), Type.Literal("unavailable")]),
    checks: Type.Object({ database: Check, migrations: Check, object_store: Check }),
    draining: Type.Optional(Type.Literal(true, { description: "present while the node shuts down (SIGTERM, SVC_DRAIN_MS): 503 whatever the checks say" })),
  },
  { examples: [{ status: "ready", checks: { database: "ok", migrations: "ok", object_store: "ok" } }] },
);

const NO_STORE = { "cache-control": "no-store" } as const;

/** /healthz, /readyz and /metrics. */
export function opsRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ops" })
    .get(
      "/healthz",
      ({ set }) => {
        Object.assign(set.headers, NO_STORE);
        return { status: "ok" as const };
      },
      { response: { 200: Health }, detail: { summary: "Liveness: 200 while the process runs", tags: ["ops"] } },
    )
    .get(
      "/readyz",
      async ({ set }) => {
        const r = await readiness(ctx);
        Object.assign(set.headers, NO_STORE);
        set.status = r.ready ? 200 : 503;
        return { status: r.ready ? ("ready" as const) : ("unavailable" as const), checks: r.checks, ...(r.draining ? { draining: true as const } : {}) };
      },
      {
        response: { 200: Ready, 503: Ready },
        detail: { summary: "Readiness: 200 when the database answers with every migration applied and the object store answers; else 503", tags: ["ops"] },
      },
    )
    .get(
      "/metrics",
      async ({ request }) => {
        try {
          const text = await scrapeMetrics(ctx, request.headers.get("authorization"));
          return new Response(text, { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", ...NO_STORE } });
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          const headers: Record<string, string> = { "content-type": "application/json", ...NO_STORE };
          if (error.code === "unauthenticated") headers["www-authenticate"] = 'Bearer realm="svc metrics"';
          return new Response(JSON.stringify({ error: error.message }), { status: error.status, headers });
        }
      },
      {
        response: { 200: Type.String({ description: "Prometheus text exposition format 0.0.4" }), ...errors(401, 404) },
        detail: { summary: "Prometheus metrics (only when SVC_METRICS_TOKEN is set; Authorization: Bearer <token>)", tags: ["ops"] },
      },
    );
}
