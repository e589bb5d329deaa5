// Machines (SPEC §2.7, §3.1, §3.2, §4.1): registration tokens, registration, listing with the
// derived state, removal. Instance (hosted) machines register with a token from
// `svc runner-token --hosted` (DECISIONS §4) and take hosted jobs of every org.
import { NotFound, Unauthorized, Unprocessable } from "../../errors.ts";
import type { RunnerRow } from "../../db/schema/index.ts";
import { callerFacts, decide, enforce, requireOrgFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { auditActor, recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { mintCredential, pendingSeen } from "./credentials.ts";
import { failJob, RUNNER_REMOVED } from "./finish.ts";
import { ensureDefaultGroup } from "./groups.ts";
import type { RegistrationToken, Runner, RunnerRegister, RunnerRegistered } from "./schemas.ts";
import * as store from "./store.ts";
import * as runs from "./store-runs.ts";
import type { Tx } from "../../db/database.ts";
import { announceRouting } from "./claim.ts";

/** Refuses (401) a caller that is not the credential a runner route needs, before its body is read. */
export function requireRunnerCaller(actor: Principal, action: "runner:register" | "runner:claim"): void {
  enforce(decide({ caller: callerFacts(actor), orgRole: null }, { kind: action }));
}

/** SPEC §4.1: a registration token lives one hour. */
export const REGISTRATION_TTL_MS = 3600 * 1000;
/** SPEC §3.1, §8: a machine is online this long after its last call. */
export const ONLINE_WINDOW_MS = 60 * 1000;

const NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;
const OS = ["linux", "macos", "windows"] as const;
const ARCH = ["x64", "arm64"] as const;
const MAX_LABELS = 32;

/** The full registration command line a registration token is used with. */
function registerCommand(baseUrl: string, token: string): string {
  return `svc runner register --url ${baseUrl} --token ${token}`;
}

/** POST /v1/orgs/{org}/runners/registration-token: `{ group? }` (default `default`). */
export async function createRegistrationToken(ctx: Ctx, actor: Principal, orgName: string, input: { group?: string }): Promise<RegistrationToken> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  const groupName = input.group ?? "default";
  return ctx.db.transaction(async (tx) => {
    await ensureDefaultGroup(tx, org.id);
    const group = typeof groupName === "string" ? await store.groupByName(tx, org.id, groupName) : null;
    if (!group) throw Unprocessable(`no runner group named ${JSON.stringify(groupName)} in ${org.name}`);
    const t = now();
    const cred = mintCredential("svcg");
    await store.insertRegistration(tx, {
      id: cred.id,
      orgId: org.id,
      groupId: group.id,
      hosted: false,
      secretHash: cred.hash,
      expiresAt: t + REGISTRATION_TTL_MS,
      spentAt: null,
      createdAt: t,
    });
    await recordAudit(tx, {
      orgId: org.id,
      action: "runner.registration_token.created",
      actor: auditActor(actor),
      target: group.name,
      data: { group: group.name, expires_at: t + REGISTRATION_TTL_MS },
    });
    return { token: cred.plaintext, expires_at: t + REGISTRATION_TTL_MS, group: group.name, command: registerCommand(ctx.baseUrl, cred.plaintext) };
  });
}

/** `svc runner-token --hosted`: a registration token for an instance runner (site administrators, on the server's own machine). */
export async function createHostedRegistrationToken(ctx: Ctx): Promise<RegistrationToken> {
  return ctx.db.transaction(async (tx) => {
    const t = now();
    const cred = mintCredential("svcg");
    await store.insertRegistration(tx, {
      id: cred.id,
      orgId: null,
      groupId: null,
      hosted: true,
      secretHash: cred.hash,
      expiresAt: t + REGISTRATION_TTL_MS,
      spentAt: null,
      createdAt: t,
    });
    return { token: cred.plaintext, expires_at: t + REGISTRATION_TTL_MS, group: null, command: registerCommand(ctx.baseUrl, cred.plaintext) };
  });
}

function checkRegistration(
  input: RunnerRegister,
  hosted: boolean,
): { name: string; os: RunnerRow["os"]; arch: string; labels: string[]; version: string; ephemeral: boolean } {
  if (typeof input.name !== "string" || !NAME_RE.test(input.name)) throw Unprocessable("name must be 1-64 letters, digits, dots, dashes or underscores");
  if (typeof input.os !== "string" || !OS.includes(input.os as never)) throw Unprocessable(`os must be one of ${OS.join(", ")}`);
  if (typeof input.arch !== "string" || !ARCH.includes(input.arch as never)) throw Unprocessable(`arch must be one of ${ARCH.join(", ")}`);
  const offered = input.labels ?? [];
  if (!Array.isArray(offered) || offered.length > MAX_LABELS) throw Unprocessable(`labels must be a list of at most ${MAX_LABELS} custom labels`);
  const reserved = new Set<string>(["self-hosted", ...OS, ...ARCH]);
  const custom: string[] = [];
  for (const l of offered) {
    if (typeof l !== "string" || !NAME_RE.test(l))
      throw Unprocessable(`label ${JSON.stringify(l)} is not allowed: 1-64 letters, digits, dots, dashes or underscores`);
    // Why: the server adds these itself from what the machine is (SPEC §2.7), so a machine cannot claim to be what it is not.
    if (reserved.has(l.toLowerCase())) throw Unprocessable(`label ${JSON.stringify(l)} is added by the server; offer custom labels only`);
    if (!custom.includes(l.toLowerCase())) custom.push(l.toLowerCase());
  }
  if (input.version !== undefined && (typeof input.version !== "string" || input.version.length > 64))
    throw Unprocessable("version must be a string of at most 64 characters");
  if (input.ephemeral !== undefined && typeof input.ephemeral !== "boolean") throw Unprocessable("ephemeral must be a boolean");
  const labels = [...(hosted ? [] : ["self-hosted"]), input.os, input.arch, ...custom];
  return {
    name: input.name,
    os: input.os,
    arch: input.arch,
    labels,
    version: (input.version as string | undefined) ?? "",
    ephemeral: (input.ephemeral as boolean | undefined) ?? false,
  };
}

/** Tombstones a machine and fails the job it was running (not reassigned), inside `tx`. */
async function retireRunner(ctx: Ctx, tx: Tx, runner: RunnerRow, t: number): Promise<void> {
  await store.tombstoneRunner(tx, runner.id, t);
  // This node refuses the credential at its next call (other nodes: at their next epoch read).
  ctx.db.afterCommit(tx, () => ctx.facts.dropWithin());
  const job = await runs.runningJobOf(tx, runner.id);
  if (job) await failJob(ctx, tx, job, "failure", RUNNER_REMOVED, t);
}

/**
 * POST /v1/runners/register (bearer = registration token): spends the token and creates the
 * machine and its credential; a live machine of the same name is replaced (tombstoned) at once.
 */
export async function registerRunner(ctx: Ctx, actor: Principal, input: RunnerRegister): Promise<RunnerRegistered> {
  enforce(decide({ caller: callerFacts(actor), orgRole: null }, { kind: "runner:register" }));
  const reg = (actor as Extract<Principal, { kind: "runner-registration" }>).registration;
  const body = checkRegistration(input, reg.hosted);
  const orgName = reg.orgId ? await store.orgNameById(ctx.db.read, reg.orgId) : null;
  const out = await ctx.db.transaction(async (tx) => {
    const t = now();
    // Why a compare-and-set: two registrations racing with one token get one machine; the loser's
    // answer is the same 401 as any other bad token.
    if (!(await store.spendRegistration(tx, reg.id, t))) throw Unauthorized("invalid or revoked token");
    const group = reg.hosted ? null : reg.groupId ? await store.groupById(tx, reg.orgId!, reg.groupId) : null;
    if (!reg.hosted && !group) throw Unauthorized("invalid or revoked token");
    const existing = await store.liveRunnerByName(tx, reg.orgId, body.name);
    if (existing) await retireRunner(ctx, tx, existing, t);
    const cred = mintCredential("svcr");
    const row: RunnerRow = {
      id: cred.id,
      orgId: reg.orgId,
      groupId: group?.id ?? null,
      hosted: reg.hosted,
      name: body.name,
      labels: body.labels,
      os: body.os,
      arch: body.arch,
      version: body.version,
      ephemeral: body.ephemeral,
      credentialHash: cred.hash,
      lastSeenAt: t,
      removedAt: null,
      createdAt: t,
    };
    await store.insertRunner(tx, row);
    if (reg.orgId) {
      await recordAudit(tx, {
        orgId: reg.orgId,
        action: "runner.registered",
        actor: auditActor(actor),
        target: body.name,
        data: { runner_id: row.id, group: group!.name, labels: body.labels, ephemeral: body.ephemeral, replaced: existing?.id ?? null },
      });
    } else ctx.log.info("instance runner registered", { runner_id: row.id, name: body.name, labels: body.labels });
    return { runner_id: row.id, credential: cred.plaintext, org: orgName, group: group?.name ?? null, labels: body.labels };
  });
  return out;
}

/** The derived state of a machine (SPEC §3.1). */
export function runnerState(busy: boolean, lastSeenAt: number, t: number): "busy" | "online" | "offline" {
  if (busy) return "busy";
  return t - lastSeenAt <= ONLINE_WINDOW_MS ? "online" : "offline";
}

/** GET /v1/orgs/{org}/runners: live machines only, by name. */
export async function listRunners(ctx: Ctx, actor: Principal, orgName: string): Promise<{ runners: Runner[] }> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:read");
  const t = now();
  const rows = await store.liveRunnersOfOrg(ctx.db.read, org.id);
  return {
    runners: rows.map(({ runner: r, groupName, jobId, runId, jobKey, repoName }) => {
      const lastSeen = Math.max(r.lastSeenAt, pendingSeen(ctx, r.id) ?? 0);
      return {
        id: r.id,
        name: r.name,
        labels: r.labels,
        os: r.os,
        arch: r.arch,
        version: r.version,
        ephemeral: r.ephemeral,
        group: { id: r.groupId ?? "", name: groupName ?? "default" },
        state: runnerState(jobId !== null, lastSeen, t),
        last_seen_at: lastSeen,
        created_at: r.createdAt,
        job: jobId ? { run_id: runId!, job_id: jobId, key: jobKey!, repo: repoName ?? "" } : null,
      };
    }),
  };
}

/** DELETE /v1/orgs/{org}/runners/{id}: tombstones the machine; its running job fails and is not reassigned. */
export async function removeRunner(ctx: Ctx, actor: Principal, orgName: string, id: string): Promise<void> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin-masked");
  await ctx.db.transaction(async (tx) => {
    const r = await store.liveRunnerOfOrg(tx, org.id, id);
    if (!r) throw NotFound("no such runner in this organization");
    await retireRunner(ctx, tx, r, now());
    await recordAudit(tx, { orgId: org.id, action: "runner.removed", actor: auditActor(actor), target: r.name, data: { runner_id: r.id } });
  });
  // A claim the machine is waiting in ends now (its next call is a 401).
  announceRouting(ctx, org.id);
}
