// Inbound webhooks that keep mirrors fresh (SPEC §6.2). Outside /v1: no caller is resolved; the
// signature over the raw body (which the application hands over unparsed) is the credential.
// Not in /v1/openapi.json (the control plane's document): docs/api.md "Inbound webhooks" has them.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { checkInboundHeaders, INBOUND_BODY_LIMITS, receiveApp, receiveGeneric } from "../../../services/mirrors/inbound.ts";
import { InboundAccepted } from "../../../services/mirrors/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { policy } from "../../policy.ts";

/** The raw body the application's parser kept for /webhooks/ paths. */
function rawBody(body: unknown): Uint8Array {
  return body instanceof Uint8Array ? body : new Uint8Array(0);
}

/** Inbound webhook routes. */
export function inboundRoutes(ctx: Ctx) {
  // The exact bytes within the size the sender documents, read only after the headers could be refused (issue 25 row 7).
  const signed = (limit: number) =>
    policy({ caller: "anonymous", body: { raw: limit, admit: (headers) => checkInboundHeaders(ctx, headers.get("x-hub-signature-256")) } });
  return new Elysia({ name: "routes.inbound-webhooks" })
    .post(
      "/webhooks/generic",
      async ({ request, body, set }) => {
        const out = await receiveGeneric(ctx, rawBody(body), request.headers.get("x-hub-signature-256"));
        set.status = 202;
        return out;
      },
      {
        response: { 202: InboundAccepted, ...errors(400, 401, 413) },
        detail: {
          hide: true,
          summary: "A push at an origin, `{ full_name: <origin URL> }`, signed with X-Hub-Signature-256: syncs its mirrors",
          ...signed(INBOUND_BODY_LIMITS.generic),
        },
      },
    )
    .post(
      "/webhooks/app",
      async ({ request, body, set }) => {
        const out = await receiveApp(ctx, rawBody(body), request.headers.get("x-hub-signature-256"), request.headers.get("x-github-event"));
        set.status = 202;
        return out;
      },
      {
        response: { 202: InboundAccepted, ...errors(400, 401, 413) },
        detail: {
          hide: true,
          summary: "An app-provider delivery (push events sync the mirrors of repository.full_name), signed with X-Hub-Signature-256",
          ...signed(INBOUND_BODY_LIMITS.app),
        },
      },
    );
}
