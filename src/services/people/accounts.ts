// Accounts: the admin bootstrap (`svc user-create`) and personal namespaces.
import { Conflict, Invalid, Unprocessable } from "../../errors.ts";
import type { Org, Role, User } from "../../db/schema/index.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { hashPassword } from "./auth.ts";
import { now, type Ctx } from "../context.ts";
import { RESERVED_NAMESPACES, checkNamespaceName, isEmail, isNamespaceName } from "../names.ts";
import * as store from "./store.ts";

export const ROLES: readonly Role[] = ["viewer", "member", "admin", "owner"];
export const MIN_PASSWORD = 12;

/** Whether a namespace name can be taken: no org or personal namespace holds it and it is not reserved. */
export async function namespaceAvailable(q: Queryable, name: string): Promise<boolean> {
  if (RESERVED_NAMESPACES.has(name.toLowerCase())) return false;
  return !(await store.namespaceTaken(q, name));
}

/** A free handle derived from an address's local part (`ada.lovelace@x` → `ada-lovelace`). */
export async function deriveHandle(q: Queryable, email: string, alsoTaken: string | null = null): Promise<string> {
  let base = email
    .split("@")[0]!
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 32)
    .replace(/-+$/, "");
  if (!base) base = "user";
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (isNamespaceName(candidate) && candidate !== alsoTaken && (await namespaceAvailable(q, candidate))) return candidate;
  }
}

/** Inserts a user with their sign-in address and personal namespace (they own it). Call inside a transaction. */
export async function insertUser(tx: Tx, input: { email: string; name: string; passwordHash: string; handle: string; confirmed: boolean }): Promise<User> {
  const t = now();
  const user: User = {
    id: newId(),
    handle: input.handle,
    email: input.email,
    name: input.name,
    displayName: null,
    bio: null,
    location: null,
    company: null,
    pronouns: null,
    links: [],
    kind: "human",
    contribPrivateOptin: false,
    profileRepo: null,
    avatar: null,
    passwordHash: input.passwordHash,
    emailVerifiedAt: input.confirmed ? t : null,
    disabledAt: null,
    createdAt: t,
  };
  const address = { id: newId(), userId: user.id, address: input.email, verifiedAt: user.emailVerifiedAt, private: true, primary: true, createdAt: t };
  const personal: Org = { ...emptyOrg(), id: newId(), name: input.handle, kind: "personal", ownerUserId: user.id, createdAt: t };
  await store.insertAccount(tx, user, address, personal);
  return user;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Validates a person's name: 1–100 characters, no control characters, no `<` or `>`. Why the
 * brackets: the name is the author of the person's API commits, and git's ident format
 * (`Name <email> time zone`) has no way to hold them (fsck `badName`); a name accepted here
 * made every later commit of that person a 400 (issue 25 row 14). Names stored before this
 * rule are made safe when a commit is written (repos/commits.ts gitIdentName).
 */
export function checkPersonName(value: unknown): string {
  const name = typeof value === "string" ? value.trim() : "";
  if (!name || name.length > 100 || CONTROL.test(name) || /[<>]/.test(name)) throw Invalid("invalid name: 1-100 characters, no control characters, no < or >");
  return name;
}

/** `svc user-create`: a confirmed account, the org (created if missing) and the membership. */
export async function createUserWithOrg(
  ctx: Ctx,
  input: { org: string; email: string; name: string; password: string; role: string; handle?: string },
): Promise<User> {
  if (!isEmail(input.email)) throw Invalid("invalid email address");
  checkPersonName(input.name);
  if (input.password.length < MIN_PASSWORD) throw Invalid(`password must be at least ${MIN_PASSWORD} characters`);
  if (!ROLES.includes(input.role as Role)) throw Unprocessable(`role must be one of ${ROLES.join(", ")}`);
  const orgName = checkNamespaceName(input.org);
  if (input.handle !== undefined) checkNamespaceName(input.handle);
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction(async (tx) => {
    if (await store.userByEmail(tx, input.email)) throw Conflict("an account with this email address already exists");
    const handle = input.handle?.toLowerCase() ?? (await deriveHandle(tx, input.email, orgName));
    if (!(await namespaceAvailable(tx, handle))) throw Conflict(`handle ${handle} is taken or reserved`);
    if (handle === orgName) throw Conflict(`handle ${handle} would collide with the organization name`);
    const user = await insertUser(tx, { email: input.email, name: input.name.trim(), passwordHash, handle, confirmed: true });
    let org = await store.namespaceByName(tx, orgName);
    if (!org) {
      if (RESERVED_NAMESPACES.has(orgName)) throw Conflict(`organization name ${orgName} is reserved`);
      org = { ...emptyOrg(), id: newId(), name: orgName, kind: "org", createdAt: now() };
      await store.insertOrg(tx, org);
    } else if (org.kind !== "org") {
      throw Conflict(`${orgName} is a personal namespace, not an organization`);
    }
    await store.addMembership(tx, org.id, user.id, input.role as Role, now());
    await ctx.events.emit(tx, { kind: "membership.changed", orgId: org.id });
    return user;
  });
}

/** Column defaults of an org row, for inserts that build the whole row. */
export function emptyOrg() {
  return {
    ownerUserId: null,
    displayName: null,
    description: null,
    location: null,
    website: null,
    contactEmail: null,
    plan: "free" as const,
    billingStatus: null,
    currentPeriodEnd: null,
    paidSeats: 0,
    providerCustomerId: null,
    providerSubscriptionId: null,
    billingEventAt: null,
    ciSuspendedReason: null,
    ciSuspendedAt: null,
    runnerPolicy: null,
  };
}
