// The audit log query (DECISIONS §3; org:read).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { listAudit } from "../../../services/audit/query.ts";
import { AuditList, AuditQuery } from "../../../services/audit/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Audit routes. */
export function auditRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.audit" }).get("/v1/orgs/:org/audit", ({ request, params, query }) => listAudit(ctx, callerOf(request), params.org, query), {
    query: AuditQuery,
    response: { 200: AuditList, ...errors(400, 401, 403, 404) },
    detail: { summary: "The organization's audit log, newest first; filter by action and [from, to); paged" },
  });
}
