// Invitations: an admin invites an address with a role; the single-use `svcinv_` link lives seven
// days and, once accepted, creates the account if needed and the membership (SPEC §2.13, §3.2, §4.5, §5.7).
import { AppError, Conflict, Invalid, NotFound } from "../../errors.ts";
import type { Role, User } from "../../db/schema/index.ts";
import type { Queryable } from "../../db/database.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { deriveHandle, insertUser, namespaceAvailable } from "../people/accounts.ts";
import { decide, enforce, orgFacts, requireOrgFor, roleAtLeast } from "../access/access.ts";
import { hashPassword, startSession } from "../people/auth.ts";
import { now, type Ctx } from "../context.ts";
import { inviteMail } from "../mail/messages.ts";
import { checkNamespaceName } from "../names.ts";
import { deliverNow, enqueueMail } from "../mail/outbox.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { accountByAddress, checkAddress, checkPassword, checkPersonName } from "../people/signup.ts";
import { pageOf, parsePage } from "../paging.ts";
import { checkOrgRole } from "./orgs.ts";
import { insertMembership, membershipRole, setMembershipRole } from "./store.ts";
import * as store from "./store-invites.ts";
import type { InviteRow } from "./store-invites.ts";
import type { InviteCreate, InviteCreated, InviteList } from "./schemas.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

export const INVITE_TTL_MS = 7 * 24 * 3600_000;
const INVITE_RE = /^svcinv_[a-z2-7]{32}$/;

/** The pending, unexpired invitation behind a presented link, or null for every dead shape alike. */
async function findLiveInvite(q: Queryable, token: unknown): Promise<InviteRow | null> {
  if (typeof token !== "string" || !INVITE_RE.test(token)) return null;
  const row = await store.inviteBySecretHash(q, hashSecret(token));
  if (!row || row.acceptedAt !== null || row.expiresAt <= now()) return null;
  return row;
}

/** Whether the account holding `address` is already in the org. */
async function alreadyMember(q: Queryable, orgId: string, address: string): Promise<boolean> {
  const user = await accountByAddress(q, address);
  return !!user && (await membershipRole(q, orgId, user.id)) !== null;
}

/** A cursor position in the invitations list: [created_at, id]. */
function isInviteKey(key: unknown): key is [number, string] {
  return Array.isArray(key) && key.length === 2 && Number.isInteger(key[0]) && typeof key[1] === "string";
}

/**
 * POST /v1/orgs/{org}/invites: records the invitation and its mail in one transaction, then tries
 * the mail once (bounded) so the answer can say whether it went out. The link is always returned.
 */
export async function createInvite(ctx: Ctx, actor: Principal, orgName: string, input: InviteCreate): Promise<InviteCreated> {
  const { org, facts } = await orgFacts(ctx, actor, orgName, { quota: true });
  enforce(decide(facts, "org:admin"));
  if (org.kind !== "org") throw Invalid("a personal namespace has no members to invite");
  const address = checkAddress(input.email);
  const role = checkOrgRole(input.role);
  enforce(decide(facts, { kind: "invite:create", role }));
  // Billing: on the free plan, members plus pending invitations stay within the free seats (402 `quota:`).
  enforce(decide(facts, { kind: "quota", what: "people" }));
  const inviter = personOf(actor)?.name ?? "An administrator";
  const token = `svcinv_${newSecret()}`;
  const t = now();
  const { invite, mailId } = await ctx.db.transaction(async (tx) => {
    if (await alreadyMember(tx, org.id, address)) throw Conflict(`${address} is already a member of ${org.name}`);
    // A newer invitation for the same address replaces a pending one.
    await store.deletePendingInvitesTo(tx, org.id, address);
    const invite: InviteRow = {
      id: newId(),
      orgId: org.id,
      email: address,
      role,
      secretHash: hashSecret(token),
      expiresAt: t + INVITE_TTL_MS,
      acceptedAt: null,
      createdBy: personOf(actor)?.id ?? null,
      createdAt: t,
    };
    await store.insertInvite(tx, invite);
    await recordAudit(tx, { orgId: org.id, action: "invite.created", actor: auditActor(actor), target: address, data: { invite_id: invite.id, role } });
    const mailId = await enqueueMail(
      ctx,
      tx,
      inviteMail({ to: address, orgName: org.name, role, inviter, token, expiresAt: invite.expiresAt, baseUrl: ctx.baseUrl }),
    );
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

/** GET /v1/orgs/{org}/invites: invitations not yet accepted, newest first, a page at a time. */
export async function listInvites(ctx: Ctx, actor: Principal, orgName: string, q: { limit?: unknown; cursor?: unknown }): Promise<InviteList> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const page = parsePage(q, isInviteKey);
  const rows = await store.listPendingInvites(ctx.db.read, org.id, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (r) => [r.createdAt, r.id]);
  const t = now();
  return {
    invites: items.map((r) => ({
      id: r.id,
      email: r.email,
      role: r.role,
      expires_at: r.expiresAt,
      created_at: r.createdAt,
      state: r.expiresAt > t ? ("pending" as const) : ("expired" as const),
    })),
    next_cursor,
  };
}

/** DELETE /v1/orgs/{org}/invites/{id}: revokes an invitation that has not been accepted. */
export async function revokeInvite(ctx: Ctx, actor: Principal, orgName: string, id: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const gone = await ctx.db.transaction(async (tx) => {
    const deleted = await store.deletePendingInvite(tx, org.id, id);
    if (deleted) await recordAudit(tx, { orgId: org.id, action: "invite.revoked", actor: auditActor(actor), target: null, data: { invite_id: id } });
    return deleted;
  });
  if (!gone) throw NotFound("invitation not found");
}

/** POST /v1/auth/invite/preview: what the link offers, without spending it; 404 for every dead shape. */
export async function previewInvite(ctx: Ctx, input: { invite?: unknown }): Promise<{ org: string; role: Role; email: string; expires_at: number }> {
  const invite = await findLiveInvite(ctx.db.read, input.invite);
  const org = invite && (await store.orgNameById(ctx.db.read, invite.orgId));
  if (!invite || !org) throw NotFound("this invitation is invalid, expired or already used");
  return { org, role: invite.role, email: invite.email, expires_at: invite.expiresAt };
}

/**
 * POST /v1/auth/accept-invite: spends the link, creates the account if the address has none
 * (confirmed: the link proves the address), adds the membership and signs in. An existing account
 * must present its own password.
 */
export async function acceptInvite(
  ctx: Ctx,
  input: { invite?: unknown; name?: unknown; password?: unknown; handle?: unknown },
): Promise<{ user: User; sessionSecret: string }> {
  const dead = () => Invalid("this invitation is invalid, expired or already used");
  const probe = await findLiveInvite(ctx.db.read, input.invite);
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
    const invite = await findLiveInvite(tx, input.invite);
    if (!invite || !(await store.spendInvite(tx, invite.id, now()))) throw dead();
    let user = await accountByAddress(tx, invite.email);
    if (!user) {
      if (!passwordHash) throw new AppError("conflict", "the account for this address changed meanwhile; try again");
      const chosen = handle ?? (await deriveHandle(tx, invite.email));
      if (!(await namespaceAvailable(tx, chosen))) throw Conflict(`the handle ${chosen} is taken or reserved`);
      user = await insertUser(tx, { email: invite.email, name, passwordHash, handle: chosen, confirmed: true });
    } else if (user.emailVerifiedAt === null && user.email.toLowerCase() === invite.email.toLowerCase()) {
      // The link arrived at the address, which proves it.
      user = { ...user, emailVerifiedAt: now() };
      await store.confirmPrimaryAddress(tx, user.id, user.emailVerifiedAt!);
    }
    const current = await membershipRole(tx, invite.orgId, user.id);
    if (!current) {
      await insertMembership(tx, { orgId: invite.orgId, userId: user.id, role: invite.role, createdAt: now() });
      await ctx.events.emit(tx, { kind: "membership.changed", orgId: invite.orgId });
    } else if (!roleAtLeast(current, invite.role)) {
      await setMembershipRole(tx, invite.orgId, user.id, invite.role);
    }
    return { user, sessionSecret: await startSession(tx, user.id) };
  });
}
