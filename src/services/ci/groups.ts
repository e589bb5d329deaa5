// Runner groups (SPEC §2.6, §3.2, §4.1): every org has a `default` group, created lazily the
// first time any group is needed; every machine is in exactly one group.
import { Conflict, NotFound, Unprocessable } from "../../errors.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import type { Org } from "../../db/schema/index.ts";
import { newId } from "../../util/ids.ts";
import { requireOrgFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { auditActor, recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { announceRouting } from "./claim.ts";
import { repoIdsFor } from "./policy.ts";
import type { RunnerGroup, RunnerGroupCreate, RunnerGroupPatch } from "./schemas.ts";
import * as store from "./store.ts";
import type { GroupRow } from "./store.ts";

const GROUP_NAME_RE = /^[A-Za-z0-9._ -]{1,64}$/;
const DEFAULT = "default";

function checkName(value: unknown): string {
  const name = typeof value === "string" ? value.trim() : "";
  if (!GROUP_NAME_RE.test(name)) throw Unprocessable("invalid group name: 1-64 letters, digits, spaces, dots, dashes or underscores");
  return name;
}

function checkAccess(value: unknown): "all" | "selected" {
  if (value !== "all" && value !== "selected") throw Unprocessable("repo_access must be all or selected");
  return value;
}

/** The org's default group, created now if it was never needed before (inside the caller's transaction). */
export async function ensureDefaultGroup(tx: Tx, orgId: string): Promise<GroupRow> {
  const found = await store.defaultGroup(tx, orgId);
  if (found) return found;
  const t = now();
  const row: GroupRow = { id: newId(), orgId, name: DEFAULT, repoAccess: "all", allowPublic: false, isDefault: true, createdAt: t, updatedAt: t };
  await store.insertGroup(tx, row);
  return row;
}

/** Creates the default group if the org has none yet (its own short transaction). */
async function defaultExists(ctx: Ctx, orgId: string): Promise<void> {
  if (!(await store.defaultGroup(ctx.db.read, orgId))) await ctx.db.transaction((tx) => ensureDefaultGroup(tx, orgId));
}

async function groupBodies(q: Queryable, rows: (GroupRow & { runnerCount?: number })[]): Promise<RunnerGroup[]> {
  const names = await store.groupRepoNames(
    q,
    rows.filter((g) => g.repoAccess === "selected").map((g) => g.id),
  );
  const out: RunnerGroup[] = [];
  for (const g of rows) {
    out.push({
      id: g.id,
      name: g.name,
      repo_access: g.repoAccess,
      allow_public: g.allowPublic,
      is_default: g.isDefault,
      repos: g.repoAccess === "selected" ? (names.get(g.id) ?? []) : [],
      runners: g.runnerCount ?? (await store.groupRunnerCount(q, g.id)),
      created_at: g.createdAt,
      updated_at: g.updatedAt,
    });
  }
  return out;
}

async function requireGroup(q: Queryable, org: Org, id: string): Promise<GroupRow> {
  const g = await store.groupById(q, org.id, id);
  if (!g) throw NotFound("runner group not found");
  return g;
}

/** GET /v1/orgs/{org}/runner-groups: never empty (the default group always shows). */
export async function listGroups(ctx: Ctx, actor: Principal, orgName: string): Promise<{ groups: RunnerGroup[] }> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  await defaultExists(ctx, org.id);
  return { groups: await groupBodies(ctx.db.read, await store.groupsOfOrg(ctx.db.read, org.id)) };
}

/** POST /v1/orgs/{org}/runner-groups. */
export async function createGroup(ctx: Ctx, actor: Principal, orgName: string, input: RunnerGroupCreate): Promise<RunnerGroup> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  const name = checkName(input.name);
  const repoAccess = input.repo_access === undefined ? "all" : checkAccess(input.repo_access);
  return ctx.db.transaction(async (tx) => {
    await ensureDefaultGroup(tx, org.id);
    const repoIds = await repoIdsFor(tx, org.id, org.name, input.repos ?? []);
    if (await store.groupByName(tx, org.id, name)) throw Conflict(`a runner group named ${name} already exists in ${org.name}`);
    const t = now();
    const row: GroupRow = {
      id: newId(),
      orgId: org.id,
      name,
      repoAccess,
      allowPublic: input.allow_public ?? false,
      isDefault: false,
      createdAt: t,
      updatedAt: t,
    };
    await store.insertGroup(tx, row);
    if (repoAccess === "selected") await store.replaceGroupRepos(tx, row.id, repoIds);
    const [body] = await groupBodies(tx, [{ ...row, runnerCount: 0 }]);
    await recordAudit(tx, {
      orgId: org.id,
      action: "runner_group.created",
      actor: auditActor(actor),
      target: name,
      data: { id: row.id, repo_access: repoAccess, allow_public: row.allowPublic, repos: body!.repos },
    });
    return body!;
  });
}

/** PATCH /v1/orgs/{org}/runner-groups/{id}: any subset; repos replaced wholesale; the default group keeps its name. */
export async function patchGroup(ctx: Ctx, actor: Principal, orgName: string, id: string, input: RunnerGroupPatch): Promise<RunnerGroup> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  const name = input.name === undefined ? undefined : checkName(input.name);
  const repoAccess = input.repo_access === undefined ? undefined : checkAccess(input.repo_access);
  const out = await ctx.db.transaction(async (tx) => {
    const g = await requireGroup(tx, org, id);
    if (name !== undefined && name !== g.name) {
      if (g.isDefault) throw Unprocessable("the default group cannot be renamed");
      const clash = await store.groupByName(tx, org.id, name);
      if (clash && clash.id !== g.id) throw Conflict(`a runner group named ${name} already exists in ${org.name}`);
    }
    const repoIds = input.repos === undefined ? undefined : await repoIdsFor(tx, org.id, org.name, input.repos);
    const next: GroupRow = {
      ...g,
      name: name ?? g.name,
      repoAccess: repoAccess ?? g.repoAccess,
      allowPublic: input.allow_public ?? g.allowPublic,
      updatedAt: now(),
    };
    await store.updateGroup(tx, g.id, { name: next.name, repoAccess: next.repoAccess, allowPublic: next.allowPublic, updatedAt: next.updatedAt });
    if (next.repoAccess === "all") await store.replaceGroupRepos(tx, g.id, []);
    else if (repoIds !== undefined) await store.replaceGroupRepos(tx, g.id, repoIds);
    const [body] = await groupBodies(tx, [next]);
    await recordAudit(tx, {
      orgId: org.id,
      action: "runner_group.updated",
      actor: auditActor(actor),
      target: next.name,
      data: { id: g.id, changed: Object.keys(input) },
    });
    return body!;
  });
  announceRouting(ctx, org.id);
  return out;
}

/** DELETE /v1/orgs/{org}/runner-groups/{id}: machines move to the default group; its registration tokens die. */
export async function deleteGroup(ctx: Ctx, actor: Principal, orgName: string, id: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  await ctx.db.transaction(async (tx) => {
    const g = await requireGroup(tx, org, id);
    if (g.isDefault) throw Unprocessable("the default group cannot be deleted");
    const fallback = await ensureDefaultGroup(tx, org.id);
    await store.moveRunners(tx, g.id, fallback.id);
    await store.deleteGroup(tx, g.id);
    await recordAudit(tx, { orgId: org.id, action: "runner_group.deleted", actor: auditActor(actor), target: g.name, data: { id: g.id } });
  });
  announceRouting(ctx, org.id);
}
