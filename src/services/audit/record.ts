// Audit events (SPEC §6.3): append-only rows written in the same transaction as the change they
// record, so a recorded event always names something that happened. The query route reads them
// (DECISIONS §3 audit: `{ id, action, actor: { kind, id, name }, target, data, created_at }`).
import type { Tx } from "../../db/database.ts";
import type { Principal } from "../access/principal.ts";
import { now } from "../context.ts";
import { newId } from "../../util/ids.ts";
import { insertAuditEvent } from "./store.ts";

/** Who did it, as the audit record names them. */
export interface AuditActor {
  kind: "user" | "token" | "runner" | "registration_token" | "system";
  id: string | null;
  name: string | null;
}

/** The audit actor behind a principal. */
export function auditActor(p: Principal): AuditActor {
  switch (p.kind) {
    case "session":
      return { kind: "user", id: p.user.id, name: p.user.handle };
    case "token":
      return p.user ? { kind: "user", id: p.user.id, name: p.user.handle } : { kind: "token", id: p.token.id, name: p.token.label };
    case "runner":
      return { kind: "runner", id: p.runner.id, name: p.runner.name };
    case "runner-registration":
      return { kind: "registration_token", id: p.registration.id, name: null };
    case "anonymous":
      return { kind: "system", id: null, name: null };
  }
}

/** Appends one audit event to the org's log, inside the caller's transaction. */
export async function recordAudit(
  tx: Tx,
  e: { orgId: string; action: string; actor: AuditActor; target: string | null; data?: Record<string, unknown> | null },
): Promise<void> {
  await insertAuditEvent(tx, {
    id: newId(),
    orgId: e.orgId,
    action: e.action,
    actorKind: e.actor.kind,
    actorId: e.actor.id,
    actorName: e.actor.name,
    target: e.target,
    data: e.data ?? null,
    createdAt: now(),
  });
}
