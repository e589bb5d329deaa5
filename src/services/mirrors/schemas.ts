// Request and response shapes of the mirrors domain (SPEC §6.2; DECISIONS §3).
import { Type, type Static } from "@sinclair/typebox";

export const SyncAccepted = Type.Object(
  { queued: Type.Boolean({ description: "false when a sync was already waiting to start and this request joined it" }) },
  { examples: [{ queued: true }] },
);
export type SyncAccepted = Static<typeof SyncAccepted>;

/** The answer of an inbound webhook (POST /webhooks/generic, /webhooks/app). */
export const InboundAccepted = Type.Object(
  { syncs: Type.Integer({ description: "mirrors of that origin whose sync was scheduled (or folded into one already waiting)" }) },
  { examples: [{ syncs: 2 }] },
);
export type InboundAccepted = Static<typeof InboundAccepted>;
