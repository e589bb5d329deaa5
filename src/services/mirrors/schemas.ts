// Request and response shapes of the mirrors domain (SPEC §6.2; DECISIONS §3).
import { Type, type Static } from "@sinclair/typebox";

export const SyncAccepted = Type.Object(
  { queued: Type.Boolean({ description: "false when a sync was already waiting to start and this request joined it" }) },
  { examples: [{ queued: true }] },
);
export type SyncAccepted = Static<typeof SyncAccepted>;
