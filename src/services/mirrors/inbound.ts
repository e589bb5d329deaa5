// Inbound webhooks that keep mirrors fresh (SPEC §6.2): POST /webhooks/app (the app provider's
// push deliveries) and POST /webhooks/generic (`{ full_name: <origin URL> }`). Each is signed
// with `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` under SVC_WEBHOOK_SECRET;
// anything unsigned or mis-signed is 401 before its body is even parsed. A verified push queues
// a sync of every mirror of that origin, folded into one already waiting (mirrors/queue.ts), and
// its receipt time is kept for the freshness metric (receipt to servable).
import { createHmac, timingSafeEqual } from "node:crypto";
import { Invalid, Unauthorized } from "../../errors.ts";
import { now, type Ctx } from "../context.ts";
import { appOriginKey, genericOriginKey } from "./origin.ts";
import { requestSync } from "./queue.ts";
import { mirrorsByKey } from "./store.ts";
import type { InboundAccepted } from "./schemas.ts";

/**
 * The largest body each inbound route reads (docs/api.md "Inbound webhooks"). The app provider
 * documents its own cap ("payloads are capped at 25 MB": GitHub's webhook documentation); the
 * generic body is ours, `{ full_name: <origin URL> }`, and a few KiB would do.
 */
export const INBOUND_BODY_LIMITS = { app: 25 * 1024 * 1024, generic: 64 * 1024 } as const;

const SIGNATURE_SHAPE = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * What can be refused from the headers alone, before a byte of the body is read (issue 25 row 7:
 * sixteen unsigned 24 MiB posts were read whole before each was refused): 401 when this server
 * verifies nothing (no secret) or the signature header is missing or not `sha256=<64 hex>`.
 */
export function checkInboundHeaders(ctx: Ctx, header: string | null): void {
  // Why: without a configured secret nothing can be verified, and an unverified delivery could make us fetch on anyone's behalf.
  if (!ctx.config.webhookSecret) throw Unauthorized("inbound webhooks are not configured on this server (SVC_WEBHOOK_SECRET)");
  if (!SIGNATURE_SHAPE.test(header?.trim() ?? "")) throw Unauthorized("missing or malformed X-Hub-Signature-256");
}

/** Refuses (401) a body whose signature header is missing or does not match. */
export function verifyInbound(ctx: Ctx, raw: Uint8Array, header: string | null): void {
  checkInboundHeaders(ctx, header);
  const m = SIGNATURE_SHAPE.exec(header!.trim())!;
  const expected = createHmac("sha256", ctx.config.webhookSecret!).update(raw).digest();
  // Why: constant time, so the signature cannot be learned byte by byte from response times.
  if (!timingSafeEqual(expected, Buffer.from(m[1]!, "hex"))) throw Unauthorized("signature does not match");
}

function parseJson(raw: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(raw));
  } catch {
    throw Invalid("invalid JSON body");
  }
}

/** Queues a sync of every mirror whose origin has `key`. */
async function fanOut(ctx: Ctx, key: string, receivedAt: number): Promise<InboundAccepted> {
  return ctx.db.transaction(async (tx) => {
    const ids = await mirrorsByKey(tx, key);
    for (const id of ids) await requestSync(ctx, tx, id, receivedAt);
    return { syncs: ids.length };
  });
}

/** POST /webhooks/generic: `{ full_name: <origin URL> }`. */
export async function receiveGeneric(ctx: Ctx, raw: Uint8Array, signature: string | null): Promise<InboundAccepted> {
  const receivedAt = now();
  verifyInbound(ctx, raw, signature);
  const body = parseJson(raw) as { full_name?: unknown } | null;
  const key = typeof body?.full_name === "string" ? genericOriginKey(body.full_name) : null;
  if (!key) throw Invalid("full_name must be the origin's http(s) URL");
  return fanOut(ctx, key, receivedAt);
}

/**
 * POST /webhooks/app: a delivery in the app provider's shape. `X-GitHub-Event` names the event
 * (anything but `push`, such as `ping`, is acknowledged and ignored); the repository is
 * `repository.full_name` (`owner/name`).
 */
export async function receiveApp(ctx: Ctx, raw: Uint8Array, signature: string | null, event: string | null): Promise<InboundAccepted> {
  const receivedAt = now();
  verifyInbound(ctx, raw, signature);
  const body = parseJson(raw) as { repository?: { full_name?: unknown } } | null;
  if (event !== null && event !== "push") return { syncs: 0 };
  const name = body?.repository?.full_name;
  if (typeof name !== "string" || !/^[^/\s]+\/[^/\s]+$/.test(name)) throw Invalid("a push delivery names repository.full_name as owner/name");
  return fanOut(ctx, appOriginKey(name), receivedAt);
}
