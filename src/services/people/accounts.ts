// Accounts: the admin bootstrap (`svc user-create`) and personal namespaces.
import { and, eq, sql } from "drizzle-orm";
import { Conflict, Invalid } from "../../errors.ts";
import { emails, memberships, orgs, users, type Role, type User } from "../../db/schema/index.ts";
import type { DbOrTx } from "../../db/client.ts";
import { newId } from "../../util/ids.ts";
import { hashPassword } from "./auth.ts";
import { now, type Ctx } from "../context.ts";
import { RESERVED_NAMESPACES, checkNamespaceName, isEmail, isNamespaceName } from "../orgs/names.ts";

export const ROLES: readonly Role[] = ["viewer", "member", "admin", "owner"];
export const MIN_PASSWORD = 12;

/** Whether a namespace name is free (no org, personal namespace or reservation holds it). */
export function namespaceFree(db: DbOrTx, name: string): boolean {
  if (RESERVED_NAMESPACES.has(name.toLowerCase())) return false;
  return !db.select({ id: orgs.id }).from(orgs).where(sql`lower(${orgs.name}) = lower(${name})`).get();
}

/** A free handle derived from an address's local part (`ada.lovelace@x` → `ada-lovelace`). */
export function deriveHandle(db: DbOrTx, email: string, alsoTaken: string | null = null): string {
  let base = email.split("@")[0]!.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 32).replace(/-+$/, "");
  if (!base) base = "user";
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (isNamespaceName(candidate) && candidate !== alsoTaken && namespaceFree(db, candidate)) return candidate;
  }
}

/** Inserts a user with their personal namespace (they own it). Call inside a transaction. */
export function insertUser(
  tx: DbOrTx,
  input: { email: string; name: string; passwordHash: string; handle: string; confirmed: boolean },
): User {
  const t = now();
  const user: User = {
    id: newId(), handle: input.handle, email: input.email, name: input.name, displayName: null, bio: null, location: null,
    company: null, pronouns: null, links: [], kind: "human", contribPrivateOptin: false, profileRepo: null,
    passwordHash: input.passwordHash, emailVerifiedAt: input.confirmed ? t : null, disabledAt: null, createdAt: t,
  };
  tx.insert(users).values(user).run();
  tx.insert(emails).values({ id: newId(), userId: user.id, address: input.email, verifiedAt: user.emailVerifiedAt, primary: true, createdAt: t }).run();
  const personal = newId();
  tx.insert(orgs).values({ id: personal, name: input.handle, kind: "personal", ownerUserId: user.id, createdAt: t }).run();
  tx.insert(memberships).values({ orgId: personal, userId: user.id, role: "owner", createdAt: t }).run();
  return user;
}

/** `svc user-create`: a confirmed account, the org (created if missing) and the membership. */
export async function createUserWithOrg(
  ctx: Ctx,
  input: { org: string; email: string; name: string; password: string; role: string; handle?: string },
): Promise<User> {
  if (!isEmail(input.email)) throw Invalid("invalid email address");
  if (!input.name.trim() || input.name.length > 100) throw Invalid("invalid name: 1-100 characters");
  if (input.password.length < MIN_PASSWORD) throw Invalid(`password must be at least ${MIN_PASSWORD} characters`);
  if (!ROLES.includes(input.role as Role)) throw Invalid(`role must be one of ${ROLES.join(", ")}`);
  const orgName = checkNamespaceName(input.org);
  if (input.handle !== undefined) checkNamespaceName(input.handle);
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction(async (tx) => {
    if (tx.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = lower(${input.email})`).get()) {
      throw Conflict("an account with this email address already exists");
    }
    const handle = input.handle?.toLowerCase() ?? deriveHandle(tx, input.email, orgName);
    if (!namespaceFree(tx, handle)) throw Conflict(`handle ${handle} is taken or reserved`);
    if (handle === orgName) throw Conflict(`handle ${handle} would collide with the organization name`);
    const user = insertUser(tx, { email: input.email, name: input.name.trim(), passwordHash, handle, confirmed: true });
    let org = tx.select().from(orgs).where(sql`lower(${orgs.name}) = ${orgName}`).get();
    if (!org) {
      if (RESERVED_NAMESPACES.has(orgName)) throw Conflict(`organization name ${orgName} is reserved`);
      org = { ...emptyOrg(), id: newId(), name: orgName, kind: "org", createdAt: now() };
      tx.insert(orgs).values(org).run();
    } else if (org.kind !== "org") {
      throw Conflict(`${orgName} is a personal namespace, not an organization`);
    }
    const existing = tx.select().from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, user.id))).get();
    if (!existing) tx.insert(memberships).values({ orgId: org.id, userId: user.id, role: input.role as Role, createdAt: now() }).run();
    return user;
  });
}

/** Column defaults of an org row, for inserts that build the whole row. */
export function emptyOrg() {
  return {
    ownerUserId: null, displayName: null, description: null, location: null, website: null, contactEmail: null,
    plan: "free" as const, billingStatus: null, currentPeriodEnd: null, paidSeats: 0, providerCustomerId: null,
    providerSubscriptionId: null, ciSuspendedReason: null, ciSuspendedAt: null, runnerPolicy: null,
  };
}
