// The organization's runner policy (SPEC §2.5, §4.1; DECISIONS §3 default policy).
import { Unprocessable } from "../../errors.ts";
import type { Queryable } from "../../db/database.ts";
import { requireOrgFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { auditActor, recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { announceRouting } from "./claim.ts";
import { failJob, hostedDisabledMessage } from "./finish.ts";
import type { RunnerPolicy, RunnerPolicyPatch } from "./schemas.ts";
import * as store from "./store.ts";
import * as runsStore from "./store-runs.ts";

const HOSTED = ["allowed", "disabled"] as const;
const SELF_HOSTED = ["all", "selected", "disabled"] as const;
/** At most this many names in self_hosted_repos or a group's repos. */
export const MAX_REPO_NAMES = 1000;

/** The org's policy (the default when none was stored). */
export async function loadPolicy(q: Queryable, orgId: string): Promise<{ hosted: "allowed" | "disabled"; selfHosted: "all" | "selected" | "disabled" }> {
  const row = await store.policyRow(q, orgId);
  return row ? { hosted: row.hosted, selfHosted: row.selfHosted } : { hosted: "allowed", selfHosted: "all" };
}

async function policyBody(q: Queryable, orgId: string): Promise<RunnerPolicy> {
  const p = await loadPolicy(q, orgId);
  return { hosted: p.hosted, self_hosted: p.selfHosted, self_hosted_repos: await store.policyRepoNames(q, orgId) };
}

/** Resolves repository names of the org to ids; 422 naming the first unknown one. */
export async function repoIdsFor(q: Queryable, orgId: string, orgName: string, names: unknown[]): Promise<string[]> {
  if (names.length > MAX_REPO_NAMES) throw Unprocessable(`at most ${MAX_REPO_NAMES} repositories`);
  for (const n of names) if (typeof n !== "string") throw Unprocessable("repository names must be strings");
  const found = await store.reposByNames(q, orgId, names as string[]);
  const ids = new Set<string>();
  for (const n of names as string[]) {
    const r = found.get(n.toLowerCase());
    if (!r) throw Unprocessable(`no repository named ${JSON.stringify(n)} in ${orgName}`);
    ids.add(r.id);
  }
  return [...ids];
}

/** GET /v1/orgs/{org}/runner-policy. */
export async function getRunnerPolicy(ctx: Ctx, actor: Principal, orgName: string): Promise<RunnerPolicy> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  return policyBody(ctx.db.read, org.id);
}

/** PATCH /v1/orgs/{org}/runner-policy: absent keys untouched, self_hosted_repos replaced wholesale. */
export async function patchRunnerPolicy(ctx: Ctx, actor: Principal, orgName: string, input: RunnerPolicyPatch): Promise<RunnerPolicy> {
  // Why masked: SPEC §4.1 answers 404 to a non-admin, so the policy's existence is not disclosed.
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  if (input.hosted !== undefined && !HOSTED.includes(input.hosted as never)) throw Unprocessable(`hosted must be one of ${HOSTED.join(", ")}`);
  if (input.self_hosted !== undefined && !SELF_HOSTED.includes(input.self_hosted as never))
    throw Unprocessable(`self_hosted must be one of ${SELF_HOSTED.join(", ")}`);
  const out = await ctx.db.transaction(async (tx) => {
    const t = now();
    const current = await loadPolicy(tx, org.id);
    const next = {
      orgId: org.id,
      hosted: (input.hosted ?? current.hosted) as "allowed" | "disabled",
      selfHosted: (input.self_hosted ?? current.selfHosted) as "all" | "selected" | "disabled",
      updatedAt: t,
    };
    await store.upsertPolicy(tx, next);
    if (input.self_hosted_repos !== undefined) await store.replacePolicyRepos(tx, org.id, await repoIdsFor(tx, org.id, org.name, input.self_hosted_repos));
    // Hosted jobs already queued would never be taken now (claim rule 5): they fail with its message.
    if (next.hosted === "disabled" && current.hosted !== "disabled") {
      for (const job of await runsStore.queuedHostedJobsOfOrg(tx, org.id)) await failJob(ctx, tx, job, "failure", hostedDisabledMessage(org.name), t);
    }
    const body = await policyBody(tx, org.id);
    await recordAudit(tx, { orgId: org.id, action: "runner_policy.updated", actor: auditActor(actor), target: org.name, data: body });
    return body;
  });
  // Routing changed: waiting machines look again.
  announceRouting(ctx, org.id);
  return out;
}
