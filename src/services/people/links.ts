// Single-use links mailed to an address: confirmation (svcv_), reset (svcrs_) and address claim
// (svce_). Only a SHA-256 of the whole token is stored, bound to its purpose (SPEC §5.4).
import { and, eq, isNull, sql } from "drizzle-orm";
import { emailTokens, emails, users, type User } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { now, type Ctx, type MailMessage } from "../context.ts";
import { isEmail } from "../orgs/names.ts";
import { enqueueMail, notifyMail } from "../mail/outbox.ts";
import { takeRateSlot } from "../rate-limit.ts";

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

/**
 * Mails a fresh `purpose` link to the account whose sign-in address is `address`, when the
 * account is `eligible` and the rate limits allow. Says nothing about what happened: the routes
 * that use it answer the same whatever the address (SPEC §7).
 */
export async function mailLinkToAccount(
  ctx: Ctx,
  purpose: LinkPurpose,
  address: unknown,
  eligible: (user: User) => boolean,
  build: (user: User, token: string) => MailMessage,
): Promise<void> {
  const clean = typeof address === "string" ? address.trim() : "";
  if (!isEmail(clean)) return;
  const queued = await ctx.db.transaction(async (tx) => {
    const limits = { perAddress: ctx.config.signupLimitPerAddress, global: ctx.config.signupLimitGlobal };
    if (!takeRateSlot(tx, purpose, clean, limits)) return false;
    const user = tx.select().from(users).where(sql`lower(${users.email}) = lower(${clean})`).get();
    if (!user || !eligible(user)) return false;
    // issueLink spends the previous link of the same purpose.
    return enqueueMail(ctx, tx, build(user, issueLink(tx, purpose, user.id, user.email))) !== null;
  });
  if (queued) notifyMail();
}

/** Records that a link reached `address`, which proves it: the address row, and the account when it is the sign-in address. */
export function proveAddress(tx: DbOrTx, user: User, address: string): User {
  const t = now();
  tx.update(emails).set({ verifiedAt: t }).where(and(eq(emails.userId, user.id), sql`lower(${emails.address}) = lower(${address})`, isNull(emails.verifiedAt))).run();
  if (user.emailVerifiedAt !== null || user.email.toLowerCase() !== address.toLowerCase()) return user;
  tx.update(users).set({ emailVerifiedAt: t }).where(eq(users.id, user.id)).run();
  return { ...user, emailVerifiedAt: t };
}
