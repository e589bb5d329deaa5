// Organizations, their members and their billing view (SPEC §4.4, §2.12, §2.13; DECISIONS §3).
import { Conflict, NotFound, Unprocessable } from "../../errors.ts";
import type { Org, Role } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { emptyOrg, namespaceAvailable } from "../people/accounts.ts";
import { allows, authorizeAccount, decide, enforce, orgFacts } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { findUserId } from "../access/lookup.ts";
import { pageOf, parsePage } from "../paging.ts";
import { checkNamespaceName } from "../names.ts";
import { personOf, type Principal } from "../access/principal.ts";
import * as store from "./store.ts";
import { auditActor, recordAudit } from "../audit/record.ts";
import { ORG_ROLES, type MemberList, type MemberRoleChange, type MemberUpdated, type OrgCreate, type OrgCreated } from "./schemas.ts";

/** The role named in a request, or 422 for a value outside the enumeration (SPEC §7). */
export function checkOrgRole(value: string): Role {
  if (!(ORG_ROLES as readonly string[]).includes(value)) throw Unprocessable(`role must be one of ${ORG_ROLES.join(", ")}`);
  return value as Role;
}

/** POST /v1/orgs: a confirmed person creates an org and becomes its owner. */
export async function createOrg(ctx: Ctx, actor: Principal, input: OrgCreate): Promise<OrgCreated> {
  authorizeAccount(actor, { kind: "account:create-org" });
  const person = personOf(actor)!;
  const name = checkNamespaceName(input.name);
  return ctx.db.transaction(async (tx) => {
    if (!(await namespaceAvailable(tx, name))) throw Conflict(`the name ${name} is taken or reserved`);
    const org: Org = { ...emptyOrg(), id: newId(), name, kind: "org", createdAt: now() };
    await store.insertOrg(tx, org);
    await store.insertMembership(tx, { orgId: org.id, userId: person.id, role: "owner", createdAt: org.createdAt });
    return {
      id: org.id,
      name: org.name,
      plan: "free" as const,
      billable_seats: 1,
      detail: ctx.config.billing
        ? "Created on the free plan; no card was requested. Subscribe from the billing page to add private repositories and people beyond the free allowance."
        : "Created on the free plan. This deployment sells nothing: every feature is available without a subscription.",
    };
  });
}

/** GET /v1/orgs/{org}/members: members by handle, a page at a time; addresses only for admins. */
export async function listMembers(ctx: Ctx, actor: Principal, orgName: string, q: { limit?: unknown; cursor?: unknown }): Promise<MemberList> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, "org:read"));
  const page = parsePage(q);
  const showEmail = allows(facts, "org:admin");
  const load = () => store.listMembers(ctx.db.read, org.id, { after: page.after, limit: page.limit + 1 });
  // Why the fact cache for a first page: the org page shows it on every view; any write drops it.
  const rows = page.after === null ? await ctx.facts.getPair("org-members", org.id, String(page.limit), load) : await load();
  const { items, next_cursor } = pageOf(rows, page, (m) => m.handle.toLowerCase());
  return { members: items.map(({ email, ...m }) => (showEmail ? { ...m, email } : m)), next_cursor };
}

/** PUT /v1/orgs/{org}/members/{user}: change a member's role; 409 when no owner would remain. */
export async function setMemberRole(ctx: Ctx, actor: Principal, orgName: string, userRef: string, input: MemberRoleChange): Promise<MemberUpdated> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, "org:admin"));
  const role = checkOrgRole(input.role);
  return ctx.db.transaction(async (tx) => {
    const userId = await findUserId(tx, userRef);
    const current = userId ? await store.member(tx, org.id, userId) : null;
    if (!current) throw NotFound("member not found");
    enforce(decide(facts, { kind: "member:set-role", from: current.role, to: role }));
    if (current.role === "owner" && role !== "owner" && (await store.ownerCount(tx, org.id)) <= 1) {
      throw Conflict("an organization must keep at least one owner");
    }
    await store.setMembershipRole(tx, org.id, current.user_id, role);
    await recordAudit(tx, {
      orgId: org.id,
      action: "member.role_changed",
      actor: auditActor(actor),
      target: current.handle,
      data: { user_id: current.user_id, from: current.role, to: role },
    });
    return { user_id: current.user_id, handle: current.handle, name: current.name, role };
  });
}

/** DELETE /v1/orgs/{org}/members/{user}: an admin removes someone, or a member leaves. */
export async function removeMember(ctx: Ctx, actor: Principal, orgName: string, userRef: string): Promise<void> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  const me = personOf(actor);
  const self = me !== null && (me.id === userRef || me.handle.toLowerCase() === userRef.toLowerCase());
  enforce(decide(facts, self ? "org:member" : "org:admin"));
  await ctx.db.transaction(async (tx) => {
    const userId = await findUserId(tx, userRef);
    const current = userId ? await store.member(tx, org.id, userId) : null;
    if (!current) throw NotFound("member not found");
    enforce(decide(facts, { kind: "member:remove", role: current.role, self }));
    if (current.role === "owner" && (await store.ownerCount(tx, org.id)) <= 1) throw Conflict("an organization must keep at least one owner");
    // Team membership requires org membership (SPEC §5.2): the store ends both.
    await store.deleteMembership(tx, org.id, current.user_id);
    await recordAudit(tx, {
      orgId: org.id,
      action: self ? "member.left" : "member.removed",
      actor: auditActor(actor),
      target: current.handle,
      data: { user_id: current.user_id, role: current.role },
    });
    await ctx.events.emit(tx, { kind: "membership.changed", orgId: org.id });
  });
}
