// Invitations: an admin invites an address with a role; the single-use `svcinv_` link lives seven
// days and, once accepted, creates the account if needed and the membership (SPEC §2.13, §3.2, §4.5, §5.7).
import { and, eq, isNull, sql } from "drizzle-orm";
import { AppError, Conflict, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import { emails, invites, memberships, orgs, users, type Role, type User } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { ROLES, deriveHandle, insertUser, namespaceAvailable } from "../people/accounts.ts";
import { decide, enforce, orgFacts, requireOrgFor, roleAtLeast } from "../access/access.ts";
import { hashPassword, startSession } from "../people/auth.ts";
import { now, type Ctx } from "../context.ts";
import { inviteMail } from "../mail/messages.ts";
import { checkNamespaceName } from "./names.ts";
import { deliverNow, enqueueMail } from "../mail/outbox.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { accountByAddress, checkAddress, checkPassword, checkPersonName } from "../people/signup.ts";

export const INVITE_TTL_MS = 7 * 24 * 3600_000;
const INVITE_RE = /^svcinv_[a-z2-7]{32}$/;

type Invite = typeof invites.$inferSelect;

/** The pending, unexpired invitation behind a presented link, or null for every dead shape alike. */
function findLiveInvite(db: DbOrTx, token: unknown): Invite | null {
  if (typeof token !== "string" || !INVITE_RE.test(token)) return null;
  const row = db.select().from(invites).where(eq(invites.secretHash, hashSecret(token))).get();
  if (!row || row.acceptedAt !== null || row.expiresAt <= now()) return null;
  return row;
}

/** Whether the account holding `address` is already in the org. */
async function alreadyMember(db: DbOrTx, orgId: string, address: string): Promise<boolean> {
  const user = await accountByAddress(db, address);
  return !!user && !!db.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, orgId), eq(memberships.userId, user.id))).get();
}

/**
 * POST /v1/orgs/{org}/invites: records the invitation and its mail in one transaction, then tries
 * the mail once (bounded) so the answer can say whether it went out. The link is always returned.
 */
export async function createInvite(ctx: Ctx, actor: Principal, orgName: string, input: { email?: unknown; role?: unknown }) {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, "org:admin"));
  if (org.kind !== "org") throw Invalid("a personal namespace has no members to invite");
  const address = checkAddress(input.email);
  if (!ROLES.includes(input.role as Role)) throw Unprocessable(`role must be one of ${ROLES.join(", ")}`);
  const role = input.role as Role;
  enforce(decide(facts, { kind: "invite:create", role }));
  const inviter = personOf(actor)?.name ?? "An administrator";
  const token = `svcinv_${newSecret()}`;
  const t = now();
  const { invite, mailId } = await ctx.db.transaction(async (tx) => {
    if (await alreadyMember(tx, org.id, address)) throw Conflict(`${address} is already a member of ${org.name}`);
    // A newer invitation for the same address replaces a pending one.
    tx.delete(invites).where(and(eq(invites.orgId, org.id), sql`lower(${invites.email}) = lower(${address})`, isNull(invites.acceptedAt))).run();
    const invite: Invite = {
      id: newId(), orgId: org.id, email: address, role, secretHash: hashSecret(token), expiresAt: t + INVITE_TTL_MS, acceptedAt: null,
      createdBy: personOf(actor)?.id ?? null, createdAt: t,
    };
    tx.insert(invites).values(invite).run();
    const mailId = await enqueueMail(ctx, tx, inviteMail({ to: address, orgName: org.name, role, inviter, token, expiresAt: invite.expiresAt, baseUrl: ctx.baseUrl }));
    return { invite, mailId };
  });
  const mail = await deliverNow(ctx, mailId);
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role,
    expires_at: invite.expiresAt,
    invite_link: token,
    invite_url: `${ctx.baseUrl}/invite?token=${token}`,
    mail,
  };
}

/** GET /v1/orgs/{org}/invites: invitations not yet accepted, newest first. */
export async function listInvites(ctx: Ctx, actor: Principal, orgName: string) {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const t = now();
  const rows = ctx.db.read.select().from(invites).where(and(eq(invites.orgId, org.id), isNull(invites.acceptedAt))).orderBy(sql`${invites.createdAt} DESC`).all();
  return {
    invites: rows.map((r) => ({ id: r.id, email: r.email, role: r.role, expires_at: r.expiresAt, created_at: r.createdAt, state: r.expiresAt > t ? "pending" : "expired" })),
  };
}

/** DELETE /v1/orgs/{org}/invites/{id}: revokes an invitation that has not been accepted. */
export async function revokeInvite(ctx: Ctx, actor: Principal, orgName: string, id: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const gone = await ctx.db.transaction((tx) => tx.delete(invites).where(and(eq(invites.id, id), eq(invites.orgId, org.id), isNull(invites.acceptedAt))).returning().all());
  if (!gone.length) throw NotFound("invitation not found");
}

/** POST /v1/auth/invite/preview: what the link offers, without spending it; 404 for every dead shape. */
export function previewInvite(ctx: Ctx, input: { invite?: unknown }) {
  const invite = findLiveInvite(ctx.db.read, input.invite);
  if (!invite) throw NotFound("this invitation is invalid, expired or already used");
  const org = ctx.db.read.select({ name: orgs.name }).from(orgs).where(eq(orgs.id, invite.orgId)).get();
  if (!org) throw NotFound("this invitation is invalid, expired or already used");
  return { org: org.name, role: invite.role, email: invite.email, expires_at: invite.expiresAt };
}

/**
 * POST /v1/auth/accept-invite: spends the link, creates the account if the address has none
 * (confirmed: the link proves the address), adds the membership and signs in. An existing account
 * must present its own password.
 */
export async function acceptInvite(ctx: Ctx, input: { invite?: unknown; name?: unknown; password?: unknown; handle?: unknown }): Promise<{ user: User; sessionSecret: string }> {
  const dead = () => Invalid("this invitation is invalid, expired or already used");
  const probe = findLiveInvite(ctx.db.read, input.invite);
  if (!probe) throw dead();
  const name = checkPersonName(input.name);
  const password = checkPassword(input.password);
  const handle = input.handle === undefined || input.handle === null ? null : checkNamespaceName(input.handle);
  const existing = await accountByAddress(ctx.db.read, probe.email);
  if (existing) {
    // Why: accepting joins an existing account to the org, so it takes that account's password.
    if (existing.disabledAt !== null || !(await Bun.password.verify(password, existing.passwordHash))) {
      throw Invalid("an account already uses this address; give its password to accept");
    }
  }
  const passwordHash = existing ? null : await hashPassword(password);
  return ctx.db.transaction(async (tx) => {
    const invite = findLiveInvite(tx, input.invite);
    if (!invite) throw dead();
    const spent = tx.update(invites).set({ acceptedAt: now() }).where(and(eq(invites.id, invite.id), isNull(invites.acceptedAt))).returning().all();
    if (!spent.length) throw dead();
    let user = await accountByAddress(tx, invite.email);
    if (!user) {
      if (!passwordHash) throw new AppError(409, "the account for this address changed meanwhile; try again");
      const chosen = handle ?? (await deriveHandle(tx, invite.email));
      if (!(await namespaceAvailable(tx, chosen))) throw Conflict(`the handle ${chosen} is taken or reserved`);
      user = await insertUser(tx, { email: invite.email, name, passwordHash, handle: chosen, confirmed: true });
    } else if (user.emailVerifiedAt === null && user.email.toLowerCase() === invite.email.toLowerCase()) {
      // The link arrived at the address, which proves it.
      user = { ...user, emailVerifiedAt: now() };
      tx.update(users).set({ emailVerifiedAt: user.emailVerifiedAt }).where(eq(users.id, user.id)).run();
      tx.update(emails).set({ verifiedAt: user.emailVerifiedAt }).where(and(eq(emails.userId, user.id), eq(emails.primary, true))).run();
    }
    const current = tx.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, invite.orgId), eq(memberships.userId, user.id))).get();
    if (!current) {
      tx.insert(memberships).values({ orgId: invite.orgId, userId: user.id, role: invite.role, createdAt: now() }).run();
    } else if (!roleAtLeast(current.role, invite.role)) {
      tx.update(memberships).set({ role: invite.role }).where(and(eq(memberships.orgId, invite.orgId), eq(memberships.userId, user.id))).run();
    }
    return { user, sessionSecret: await startSession(tx, user.id) };
  });
}
