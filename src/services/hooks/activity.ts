// Recent activity for a person's home page, read from the event log every push, landing, review
// and issue already writes (events.ts): the newest events in the repositories the caller may read
// in the orgs they belong to. No new store: the log is what webhooks are delivered from.
//
// One entry per thing that happened (issue 33). A landing writes the lander's push and a
// `change.landed` per change it lands (the top and those beneath it, landed by inclusion), all in
// one transaction: they become ONE entry, the landing, carrying the push's commits and the numbers
// of every change landed together. Pushes say what they brought (activity-summary.ts): per
// branch or tag created, deleted or moved, the count of new commits and the newest first lines.
import { callerFacts, readableScope } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import type { PushedRef } from "./activity-summary.ts";
import { recentOrgEvents, type ActivityRow } from "./store-activity.ts";

/** How many entries a feed shows at most. */
export const ACTIVITY_LIMIT = 30;

/** The kinds of entry a feed shows. */
export type ActivityKind =
  | "push"
  | "landing"
  | "change.ejected"
  | "change.opened"
  | "change.reviewed"
  | "change.commented"
  | "issue.opened"
  | "issue.closed"
  | "issue.commented";

/** One entry of a feed. */
export interface Activity {
  kind: ActivityKind;
  org: string;
  repo: string;
  /** Handle of the person behind it, when one is recorded. */
  actor: string | null;
  /** The branch named by the event (a landing's target, an API commit's branch). */
  branch: string | null;
  /** The change or issue number. */
  number: number | null;
  /** Its title, when the event carries one. */
  title: string | null;
  /** A landing: every change it landed, the top one first. */
  landed: number[];
  /** A review's verdict. */
  verdict: string | null;
  /** How a push came in: git, ssh, api, lander, mirror. */
  via: string | null;
  /** What a push moved; null while it is being worked out (just after the push). */
  refs: PushedRef[] | null;
  /** How many refs the push moved in all (`refs` holds the first few). */
  refsTotal: number;
  created_at: number;
}

type Payload = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);
const obj = (v: unknown): Payload => (v && typeof v === "object" && !Array.isArray(v) ? (v as Payload) : {});

/** The stored summary's refs, shape-checked (the payload is data, not code). */
function refsOf(p: Payload): PushedRef[] | null {
  if (!Array.isArray(p.refs)) return null;
  return p.refs.flatMap((r): PushedRef[] => {
    const x = obj(r);
    const ref = str(x.ref);
    const sha = str(x.sha);
    const action = x.action === "created" || x.action === "deleted" || x.action === "updated" ? x.action : null;
    if (!ref || !sha || !action) return [];
    const head = (Array.isArray(x.head) ? x.head : []).flatMap((c) => {
      const h = obj(c);
      return typeof h.sha === "string" && typeof h.subject === "string" ? [{ sha: h.sha, subject: h.subject }] : [];
    });
    return [{ ref, sha, action, commits: num(x.commits) ?? 0, more: x.more === true, head }];
  });
}

function entryOf(r: ActivityRow, kind: ActivityKind, p: Payload): Activity {
  const subject = obj(p.issue);
  return {
    kind,
    org: r.org,
    repo: r.repo,
    actor: r.actor,
    branch: str(p.branch) ?? str(p.target),
    number: num(p.change) ?? num(subject.number),
    title: str(p.title) ?? str(subject.title),
    landed: [],
    verdict: str(obj(p.review).verdict),
    via: str(p.via),
    refs: refsOf(p),
    refsTotal: num(p.refs_total) ?? 0,
    created_at: r.createdAt,
  };
}

const SHOWN: ReadonlySet<string> = new Set<ActivityKind>([
  "push",
  "change.ejected",
  "change.opened",
  "change.reviewed",
  "change.commented",
  "issue.opened",
  "issue.closed",
  "issue.commented",
]);

/**
 * The rows as entries, newest first: a landing's push and its `change.landed` rows folded into one
 * `landing` entry (matched by repository and landed commit); a landing that moved nothing (its
 * commit was already there) is one entry from its `change.landed` rows alone.
 */
export function entriesOf(rows: readonly ActivityRow[]): Activity[] {
  const landings = new Map<string, Activity>();
  const out: Activity[] = [];
  const landingOf = (r: ActivityRow, commit: string | null, p: Payload): Activity => {
    const key = `${r.org}/${r.repo}@${commit ?? r.id}`;
    let entry = landings.get(key);
    if (!entry) {
      entry = { ...entryOf(r, "landing", p), number: null, title: null, refs: null };
      landings.set(key, entry);
      out.push(entry);
    }
    return entry;
  };
  for (const r of rows) {
    const p = obj(r.payload);
    if (r.kind === "push" && p.via === "lander") {
      const entry = landingOf(r, str(p.commit), p);
      entry.refs = refsOf(p);
      entry.refsTotal = num(p.refs_total) ?? 0;
      entry.branch ??= str(p.branch);
      const top = num(p.change);
      if (top !== null && !entry.landed.includes(top)) entry.landed.unshift(top);
    } else if (r.kind === "change.landed") {
      const entry = landingOf(r, str(p.commit), p);
      const n = num(p.change);
      entry.branch ??= str(p.branch);
      // The top change (no included_in) first, the stack beneath it after.
      if (n !== null && !entry.landed.includes(n)) {
        if (p.included_in === undefined) entry.landed.unshift(n);
        else entry.landed.push(n);
      }
    } else if (SHOWN.has(r.kind)) out.push(entryOf(r, r.kind as ActivityKind, p));
  }
  // The stack beneath the top in number order.
  for (const e of landings.values()) if (e.landed.length > 2) e.landed = [e.landed[0]!, ...e.landed.slice(1).sort((a, b) => a - b)];
  return out;
}

/**
 * The newest entries the caller may read among the orgs `memberOrgIds` (the orgs they hold a role
 * in), newest first. Why `readableScope`: it is the set form of the repo:read decision (every org
 * role reads every repository of its org; a token stays in its org and its bound repository).
 */
export async function recentActivity(ctx: Ctx, actor: Principal, memberOrgIds: readonly string[], limit = ACTIVITY_LIMIT): Promise<Activity[]> {
  const scope = readableScope(callerFacts(actor), memberOrgIds);
  if (!scope) return [];
  // A few rows beyond `limit`: a landing is two rows or more (its push and change.landed rows).
  const fetch = limit + 10;
  const rows: ActivityRow[] = [];
  for (const orgId of scope.orgIds) rows.push(...(await recentOrgEvents(ctx.db.read, orgId, scope.repoId, fetch)));
  rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  return entriesOf(rows.slice(0, fetch)).slice(0, limit);
}
