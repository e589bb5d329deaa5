// Single-use links mailed to an address: confirmation (svcv_), reset (svcrs_) and address claim
// (svce_). Only a SHA-256 of the whole token is stored, bound to its purpose (SPEC §5.4).
import { Value } from "@sinclair/typebox/value";
import type { User } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { now, type Ctx, type MailMessage } from "../context.ts";
import { isEmail } from "../names.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { takeRateSlot } from "./rate-limit.ts";
import { EmailRequest, LinkRequest } from "./schemas.ts";
import * as store from "./store.ts";
import type { LinkPurpose, LinkRow } from "./store.ts";

export type { LinkPurpose };

const PREFIX: Readonly<Record<LinkPurpose, string>> = { verify: "svcv_", reset: "svcrs_", claim: "svce_" };
const SHAPE: Readonly<Record<LinkPurpose, RegExp>> = { verify: /^svcv_[a-z2-7]{32}$/, reset: /^svcrs_[a-z2-7]{32}$/, claim: /^svce_[a-z2-7]{32}$/ };

/** How long each kind of link lives (SPEC §8): confirmation one day, reset one hour, claim one day. */
export const LINK_TTL_MS: Readonly<Record<LinkPurpose, number>> = { verify: 24 * 3600_000, reset: 3600_000, claim: 24 * 3600_000 };

/** The `token` of a `{ token }` body, or null for any other body (a missing token is a dead link). */
export function linkTokenOf(input: unknown): string | null {
  return Value.Check(LinkRequest, input) ? input.token : null;
}

/** The trimmed `email` of an `{ email }` body, or null for any other body. */
export function requestedAddress(input: unknown): string | null {
  return Value.Check(EmailRequest, input) ? input.email.trim() : null;
}

/**
 * Issues a link for `purpose`, spending any earlier live link of the same purpose for the same
 * account and address (a newer link replaces the older). Call inside the write's transaction.
 */
export async function issueLink(tx: Tx, purpose: LinkPurpose, userId: string, address: string): Promise<string> {
  const t = now();
  await store.spendLinksFor(tx, userId, purpose, address, t);
  const token = `${PREFIX[purpose]}${newSecret()}`;
  await store.insertLink(tx, {
    id: newId(),
    userId,
    purpose,
    address,
    secretHash: hashSecret(token),
    expiresAt: t + LINK_TTL_MS[purpose],
    spentAt: null,
    createdAt: t,
  });
  return token;
}

/**
 * The live link row for a presented token, or null for every dead shape alike: absent, malformed,
 * another purpose's prefix, unknown, spent or expired.
 */
export async function findLiveLink(q: Queryable, purpose: LinkPurpose, token: string | null): Promise<LinkRow | null> {
  if (token === null || !SHAPE[purpose].test(token)) return null;
  // Why: the lookup is by digest, so the stored value never meets the presented one byte by byte.
  const row = await store.linkByHash(q, purpose, hashSecret(token));
  if (!row || row.spentAt !== null || row.expiresAt <= now()) return null;
  return row;
}

/** Spends a link; false when someone else spent it first (the caller's transaction must then fail). */
export function spendLink(tx: Tx, id: string): Promise<boolean> {
  return store.spendLink(tx, id, now());
}

/**
 * Mails a fresh `purpose` link to the account whose sign-in address is `address`, when the
 * account is `eligible` and the rate limits allow. Says nothing about what happened: the routes
 * that use it answer the same whatever the address (SPEC §7).
 */
export async function mailLinkToAccount(
  ctx: Ctx,
  purpose: LinkPurpose,
  address: string | null,
  eligible: (user: User) => boolean,
  build: (user: User, token: string) => MailMessage,
): Promise<void> {
  if (address === null || !isEmail(address)) return;
  await ctx.db.transaction(async (tx) => {
    const limits = { perAddress: ctx.config.signupLimitPerAddress, global: ctx.config.signupLimitGlobal };
    if (!(await takeRateSlot(tx, purpose, address, limits))) return false;
    const user = await store.userByEmail(tx, address);
    if (!user || !eligible(user)) return false;
    // issueLink spends the previous link of the same purpose.
    return (await enqueueMail(ctx, tx, build(user, await issueLink(tx, purpose, user.id, user.email)))) !== null;
  });
}

/** Records that a link reached `address`, which proves it: the address row, and the account when it is the sign-in address. */
export async function proveAddress(tx: Tx, user: User, address: string): Promise<User> {
  const t = now();
  await store.proveEmail(tx, user.id, address, t);
  if (user.emailVerifiedAt !== null || user.email.toLowerCase() !== address.toLowerCase()) return user;
  await store.confirmAccount(tx, user.id, t);
  return { ...user, emailVerifiedAt: t };
}
