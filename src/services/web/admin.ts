// What the org and repository administration pages show, gathered from the same service calls
// as the API (so each page refuses exactly as its API route does: 401, 403 or the masked 404),
// plus which controls to offer, decided by `access` like the writes they lead to.
import { NotFound } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { allows, orgFacts, requireOrgFor } from "../access/access.ts";
import { may, need, type RepoTarget } from "../access/target.ts";
import type { Principal } from "../access/principal.ts";
import { getOrgProfile } from "../discovery/profiles.ts";
import type { OrgProfile } from "../discovery/schemas.ts";
import { listMembers } from "../orgs/orgs.ts";
import { listInvites } from "../orgs/invites.ts";
import { listTeamMembers, listTeams, requireTeam } from "../orgs/teams.ts";
import { listGrants, repoAccess } from "../orgs/grants.ts";
import type { GrantList, InviteList, MemberList, RepoAccess, Team } from "../orgs/schemas.ts";
import { listGroups } from "../ci/groups.ts";
import { listRunners } from "../ci/runners.ts";
import type { Runner, RunnerGroup } from "../ci/schemas.ts";
import { getBilling } from "../billing/billing.ts";
import type { Billing } from "../billing/schemas.ts";
import { listAudit } from "../audit/query.ts";
import type { AuditList } from "../audit/schemas.ts";
import { listDeliveries, listWebhooks } from "../hooks/webhooks.ts";
import type { DeliveryList, Webhook } from "../hooks/schemas.ts";
import { listRepos, openRepo } from "../repos/repos.ts";
import { repoChrome, type RepoChrome } from "./views.ts";

/** Who is looking at an org's settings: what the navigation offers them. */
export interface OrgAdminFrame {
  org: string;
  personal: boolean;
  /** May administer (people, credentials, billing): forms are shown. */
  admin: boolean;
}

/** The frame of the org settings pages for `actor` (404 when there is no such org). */
export async function orgAdminFrame(ctx: Ctx, actor: Principal, orgName: string): Promise<OrgAdminFrame> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  return { org: org.name, personal: org.kind !== "org", admin: allows(facts, "org:admin") };
}

/** Profile edit: org admins only (the PATCH's own check), with the public profile. */
export async function profileView(ctx: Ctx, actor: Principal, orgName: string): Promise<{ frame: OrgAdminFrame; profile: OrgProfile }> {
  await requireOrgFor(ctx, actor, orgName, "org:admin");
  return { frame: await orgAdminFrame(ctx, actor, orgName), profile: await getOrgProfile(ctx, orgName) };
}

/** Members, a page at a time (org:read; addresses for admins). */
export async function membersView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  cursor: string | undefined,
): Promise<{ frame: OrgAdminFrame; members: MemberList }> {
  const members = await listMembers(ctx, actor, orgName, { cursor });
  return { frame: await orgAdminFrame(ctx, actor, orgName), members };
}

/** Teams, a page at a time (org:read). */
export async function teamsView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  cursor: string | undefined,
): Promise<{ frame: OrgAdminFrame; teams: Team[]; next: string | null }> {
  const list = await listTeams(ctx, actor, orgName, { cursor });
  return { frame: await orgAdminFrame(ctx, actor, orgName), teams: list.teams, next: list.next_cursor };
}

/** One team: its members (org:read) and, for the grant form, the repositories the viewer sees. */
export async function teamView(ctx: Ctx, actor: Principal, orgName: string, teamRef: string, cursor: string | undefined) {
  const members = await listTeamMembers(ctx, actor, orgName, teamRef, { cursor });
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  const team = await requireTeam(ctx.db.read, org, teamRef);
  const frame = await orgAdminFrame(ctx, actor, orgName);
  const repos = frame.admin ? (await listRepos(ctx, actor, orgName, { limit: 100 })).repos.map((r) => r.name) : [];
  return { frame, team: { id: team.id, name: team.name, description: team.description }, members: members.members, next: members.next_cursor, repos };
}

/** Pending invitations (org admins only). */
export async function invitesView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  cursor: string | undefined,
): Promise<{ frame: OrgAdminFrame; invites: InviteList }> {
  const invites = await listInvites(ctx, actor, orgName, { cursor });
  return { frame: await orgAdminFrame(ctx, actor, orgName), invites };
}

/** Runner groups and machines (org:read). */
export async function runnersView(ctx: Ctx, actor: Principal, orgName: string): Promise<{ frame: OrgAdminFrame; groups: RunnerGroup[]; runners: Runner[] }> {
  const { groups } = await listGroups(ctx, actor, orgName);
  const { runners } = await listRunners(ctx, actor, orgName);
  return { frame: await orgAdminFrame(ctx, actor, orgName), groups, runners };
}

/** The billing view (org admins; 404 for everyone else, as the API). */
export async function billingView(ctx: Ctx, actor: Principal, orgName: string): Promise<{ frame: OrgAdminFrame; billing: Billing; forSale: boolean }> {
  const billing = await getBilling(ctx, actor, orgName);
  const frame = await orgAdminFrame(ctx, actor, orgName);
  return { frame, billing, forSale: ctx.config.billing !== null && !frame.personal };
}

/** The audit log filters as the page's form sends them. */
export interface AuditFilter {
  action?: string;
  from?: string;
  to?: string;
  cursor?: string;
}

/** The audit log (org:read), filtered, a page at a time. */
export async function auditView(ctx: Ctx, actor: Principal, orgName: string, q: AuditFilter): Promise<{ frame: OrgAdminFrame; audit: AuditList }> {
  const audit = await listAudit(ctx, actor, orgName, q);
  return { frame: await orgAdminFrame(ctx, actor, orgName), audit };
}

/** Who is looking at a repository's settings: the tabs they may open. */
export interface RepoAdminFrame {
  org: string;
  repo: string;
  /** Grants need org:admin. */
  orgAdmin: boolean;
  /** Webhooks and secrets need repo admin. */
  repoAdmin: boolean;
  /** Variables are readable by writers. */
  repoWrite: boolean;
  /** What the one repository layout draws above the settings (heading, banner, nav). */
  chrome: RepoChrome;
}

/** The frame of the repository settings pages (the repository's own read check first). */
export async function repoAdminFrame(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<RepoAdminFrame> {
  return repoAdminFrameOf(ctx, await openRepo(ctx, actor, orgName, repoName));
}

/** The frame of the repository settings pages for a target already opened. */
export async function repoAdminFrameOf(ctx: Ctx, t: RepoTarget): Promise<RepoAdminFrame> {
  need(t, "repo:read");
  return {
    org: t.org.name,
    repo: t.repo.name,
    orgAdmin: may(t, "org:admin"),
    repoAdmin: may(t, "repo:admin"),
    repoWrite: may(t, "repo:write"),
    chrome: await repoChrome(ctx, t),
  };
}

/** Grants and effective access of a repository (org admins), with the org's teams for the form. */
export async function accessView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
): Promise<{ frame: RepoAdminFrame; grants: GrantList; access: RepoAccess; teams: Team[] }> {
  const grants = await listGrants(ctx, actor, orgName, repoName);
  const access = await repoAccess(ctx, actor, orgName, repoName);
  const teams = (await listTeams(ctx, actor, orgName, { limit: 100 })).teams;
  return { frame: await repoAdminFrame(ctx, actor, orgName, repoName), grants, access, teams };
}

/** A repository's webhooks with their latest attempts (repo admins). */
export async function webhooksView(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<{ frame: RepoAdminFrame; webhooks: Webhook[] }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const { webhooks } = await listWebhooks(ctx, t);
  return { frame: await repoAdminFrameOf(ctx, t), webhooks };
}

/** One webhook and its delivery attempts, newest first (repo admins). */
export async function webhookView(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  id: string,
  cursor: string | undefined,
): Promise<{ frame: RepoAdminFrame; webhook: Webhook; deliveries: DeliveryList }> {
  const t = await openRepo(ctx, actor, orgName, repoName);
  const deliveries = await listDeliveries(ctx, t, id, { cursor });
  const webhook = (await listWebhooks(ctx, t)).webhooks.find((w) => w.id === id);
  if (!webhook) throw NotFound("webhook not found");
  return { frame: await repoAdminFrameOf(ctx, t), webhook, deliveries };
}
