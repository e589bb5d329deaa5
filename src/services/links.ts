// Single-use links mailed to an address: confirmation (svcv_), reset (svcrs_) and address claim
// (svce_). Only a SHA-256 of the whole token is stored, bound to its purpose (SPEC §5.4).
import { and, eq, isNull } from "drizzle-orm";
import { emailTokens } from "../db/schema.ts";
import type { DbOrTx } from "../db/client.ts";
import { newId, newSecret } from "../util/ids.ts";
import { hashSecret } from "../util/secrets.ts";
import { now } from "./context.ts";

export type LinkPurpose = "verify" | "reset" | "claim";

const PREFIX: Record<LinkPurpose, string> = { verify: "svcv_", reset: "svcrs_", claim: "svce_" };

/** How long each kind of link lives (SPEC §8): confirmation one day, reset one hour, claim one day. */
export const LINK_TTL_MS: Record<LinkPurpose, number> = { verify: 24 * 3600_000, reset: 3600_000, claim: 24 * 3600_000 };

type LinkRow = typeof emailTokens.$inferSelect;

/**
 * Issues a link for `purpose`, spending any earlier live link of the same purpose for the same
 * account and address (a newer link replaces the older). Call inside the write's transaction.
 */
export function issueLink(tx: DbOrTx, purpose: LinkPurpose, userId: string, address: string): string {
  const t = now();
  tx.update(emailTokens)
    .set({ spentAt: t })
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose), eq(emailTokens.address, address), isNull(emailTokens.spentAt)))
    .run();
  const token = `${PREFIX[purpose]}${newSecret()}`;
  tx.insert(emailTokens).values({ id: newId(), userId, purpose, address, secretHash: hashSecret(token), expiresAt: t + LINK_TTL_MS[purpose], createdAt: t }).run();
  return token;
}

/**
 * The live link row for a presented token, or null for every dead shape alike: malformed, another
 * purpose's prefix, unknown, spent or expired.
 */
export function findLiveLink(db: DbOrTx, purpose: LinkPurpose, token: unknown): LinkRow | null {
  if (typeof token !== "string" || !new RegExp(`^${PREFIX[purpose]}[a-z2-7]{32}$`).test(token)) return null;
  // Why: the lookup is by digest, so the stored value never meets the presented one byte by byte.
  const row = db.select().from(emailTokens).where(and(eq(emailTokens.secretHash, hashSecret(token)), eq(emailTokens.purpose, purpose))).get();
  if (!row || row.spentAt !== null || row.expiresAt <= now()) return null;
  return row;
}

/** Spends a link; false when someone else spent it first (the caller's transaction must then fail). */
export function spendLink(tx: DbOrTx, id: string): boolean {
  return tx.update(emailTokens).set({ spentAt: now() }).where(and(eq(emailTokens.id, id), isNull(emailTokens.spentAt))).returning({ id: emailTokens.id }).all().length === 1;
}
