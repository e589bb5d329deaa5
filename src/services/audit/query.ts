// GET /v1/orgs/{org}/audit (DECISIONS §3; SPEC §5.1 org:read): the org's append-only log, newest
// first, filtered by action and time, a page at a time.
import { Invalid } from "../../errors.ts";
import { requireOrgFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { pageOf, parsePage } from "../paging.ts";
import type { AuditList } from "./schemas.ts";
import { auditEventsOf } from "./store.ts";

function isPosition(k: unknown): k is [number, string] {
  return Array.isArray(k) && k.length === 2 && Number.isSafeInteger(k[0]) && typeof k[1] === "string";
}

/** An epoch-milliseconds query value, or null when absent; 400 otherwise. */
function millis(name: string, v: string | undefined): number | null {
  if (v === undefined || v === "") return null;
  if (!/^\d{1,16}$/.test(v)) throw Invalid(`${name} must be a time in epoch milliseconds`);
  return Number(v);
}

/** The org's audit events. */
export async function listAudit(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  q: { action?: string; from?: string; to?: string; limit?: unknown; cursor?: unknown },
): Promise<AuditList> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  const page = parsePage(q, isPosition);
  const from = millis("from", q.from);
  const to = millis("to", q.to);
  if (from !== null && to !== null && to < from) throw Invalid("the range ends before it starts: to is earlier than from");
  if (q.action !== undefined && q.action.length > 100) throw Invalid("action is longer than 100 characters");
  const rows = await auditEventsOf(ctx.db.read, org.id, { action: q.action || null, from, to, after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (r) => [r.createdAt, r.id]);
  return {
    events: items.map((r) => ({
      id: r.id,
      action: r.action,
      actor: { kind: r.actorKind, id: r.actorId, name: r.actorName },
      target: r.target,
      data: (r.data as Record<string, unknown> | null) ?? null,
      created_at: r.createdAt,
    })),
    next_cursor,
  };
}
