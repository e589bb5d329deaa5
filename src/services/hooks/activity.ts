// Recent activity for a person's home page, read from the event log every push, landing and
// ejection already writes (events.ts): the newest events in the repositories the caller may read
// in the orgs they belong to. No new store: the log is what webhooks are delivered from.
import { callerFacts, readableScope } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { recentOrgEvents, type ActivityRow } from "./store-activity.ts";

/** How many events a feed shows at most. */
export const ACTIVITY_LIMIT = 30;

/** One entry of a feed. */
export interface Activity {
  kind: "push" | "change.landed" | "change.ejected" | "other";
  org: string;
  repo: string;
  /** Handle of the person behind it, when one is recorded. */
  actor: string | null;
  /** The branch named by the event, when it names one (commit API, landings). */
  branch: string | null;
  /** The change number of a landing or ejection. */
  change: number | null;
  /** How a push came in: git, ssh, api, lander, mirror. */
  via: string | null;
  created_at: number;
}

function entryOf(r: ActivityRow): Activity {
  const p = (r.payload && typeof r.payload === "object" ? r.payload : {}) as Record<string, unknown>;
  const kind = r.kind === "push" || r.kind === "change.landed" || r.kind === "change.ejected" ? r.kind : "other";
  return {
    kind,
    org: r.org,
    repo: r.repo,
    actor: r.actor,
    branch: typeof p.branch === "string" ? p.branch : null,
    change: typeof p.change === "number" ? p.change : null,
    via: typeof p.via === "string" ? p.via : null,
    created_at: r.createdAt,
  };
}

/**
 * The newest events the caller may read among the orgs `memberOrgIds` (the orgs they hold a role
 * in), newest first. Why `readableScope`: it is the set form of the repo:read decision (every org
 * role reads every repository of its org; a token stays in its org and its bound repository).
 */
export async function recentActivity(ctx: Ctx, actor: Principal, memberOrgIds: readonly string[], limit = ACTIVITY_LIMIT): Promise<Activity[]> {
  const scope = readableScope(callerFacts(actor), memberOrgIds);
  if (!scope) return [];
  const rows: ActivityRow[] = [];
  for (const orgId of scope.orgIds) rows.push(...(await recentOrgEvents(ctx.db.read, orgId, scope.repoId, limit)));
  rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  return rows.slice(0, limit).map(entryOf);
}
