// CI: runner policy, groups, registration tokens, machines, runs, jobs, their logs, the check
// results required checks read, and the CI minutes billing reads (SPEC §2.5–§2.7, §3.1, §4.1).
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { orgs } from "./orgs.ts";
import { repos } from "./repos.ts";

/** An organization's runner policy; an org without a row has the default policy (DECISIONS §3). */
export const runnerPolicies = sqliteTable("runner_policies", {
  orgId: text("org_id")
    .primaryKey()
    .references(() => orgs.id, { onDelete: "cascade" }),
  hosted: text("hosted", { enum: ["allowed", "disabled"] }).notNull(),
  selfHosted: text("self_hosted", { enum: ["all", "selected", "disabled"] }).notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** The repositories of `self_hosted_repos` (ids, so a rename keeps the entry; a deleted repo drops out). */
export const runnerPolicyRepos = sqliteTable(
  "runner_policy_repos",
  {
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.repoId] })],
);

export const runnerGroups = sqliteTable(
  "runner_groups",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    repoAccess: text("repo_access", { enum: ["all", "selected"] })
      .notNull()
      .default("all"),
    allowPublic: integer("allow_public", { mode: "boolean" }).notNull().default(false),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("runner_groups_org_name_uq").on(t.orgId, sql`lower(${t.name})`),
    // One default group per org, even when two requests create it lazily at once.
    uniqueIndex("runner_groups_default_uq").on(t.orgId).where(sql`${t.isDefault}`),
  ],
);

/** The repositories a `selected` group admits. */
export const runnerGroupRepos = sqliteTable(
  "runner_group_repos",
  {
    groupId: text("group_id")
      .notNull()
      .references(() => runnerGroups.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.repoId] }), index("runner_group_repos_repo_idx").on(t.repoId)],
);

/** `svcg_` tokens: one hour, one machine. Org-less rows are instance (hosted) tokens. Deleting the group deletes its tokens. */
export const runnerRegistrationTokens = sqliteTable("runner_registration_tokens", {
  id: id(),
  orgId: text("org_id").references(() => orgs.id, { onDelete: "cascade" }),
  groupId: text("group_id").references(() => runnerGroups.id, { onDelete: "cascade" }),
  hosted: integer("hosted", { mode: "boolean" }).notNull().default(false),
  secretHash: text("secret_hash").notNull(),
  expiresAt: integer("expires_at").notNull(),
  spentAt: integer("spent_at"),
  createdAt: createdAt(),
});

/** Machines. Org-less rows are instance (hosted) runners. Removed rows are tombstones kept for job history. */
export const runners = sqliteTable(
  "runners",
  {
    id: id(),
    orgId: text("org_id").references(() => orgs.id, { onDelete: "cascade" }),
    groupId: text("group_id"),
    hosted: integer("hosted", { mode: "boolean" }).notNull().default(false),
    name: text("name").notNull(),
    labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
    os: text("os").notNull(),
    arch: text("arch").notNull(),
    version: text("version").notNull().default(""),
    ephemeral: integer("ephemeral", { mode: "boolean" }).notNull().default(false),
    credentialHash: text("credential_hash").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    removedAt: integer("removed_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("runners_org_idx").on(t.orgId, t.removedAt),
    index("runners_group_idx").on(t.groupId),
    uniqueIndex("runners_live_name_uq").on(sql`coalesce(${t.orgId}, '')`, sql`lower(${t.name})`).where(sql`${t.removedAt} IS NULL`),
  ],
);

export type RunState = "queued" | "running" | "success" | "failure" | "cancelled";

/**
 * A job's state: a run's states plus `pending` (needs or concurrency not satisfied; never
 * claimable, the claim reads only `queued`) and `skipped` (condition false, or a need failed).
 */
export type JobState = RunState | "pending" | "skipped";

export const runs = sqliteTable(
  "runs",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    workflow: text("workflow").notNull(),
    commit: text("commit").notNull(),
    ref: text("ref").notNull(),
    event: text("event").notNull(),
    state: text("state").$type<RunState>().notNull(),
    /** Why the run failed before any job ran (malformed workflow, hosted runners disabled). */
    error: text("error"),
    /** Who pushed (or dispatched) what the run is for; null for mirrors and schedules. */
    actorUserId: text("actor_user_id"),
    createdAt: createdAt(),
    finishedAt: integer("finished_at"),
    /** The current attempt (a re-run adds one; the jobs of earlier attempts stay). */
    attempt: integer("attempt").notNull().default(1),
    /** workflow_dispatch inputs, validated and typed. */
    inputs: text("inputs", { mode: "json" }).$type<Record<string, string | number | boolean>>(),
    /** The evaluated workflow-level `concurrency.group`. */
    concurrencyGroup: text("concurrency_group"),
    cancelInProgress: integer("cancel_in_progress", { mode: "boolean" }).notNull().default(false),
    /** The minute slot (epoch minutes) of a scheduled run: one run per workflow per slot. */
    scheduleSlot: integer("schedule_slot"),
    /** False for a change from a fork: its jobs get no secrets. */
    trusted: integer("trusted", { mode: "boolean" }).notNull().default(true),
    /** Why the whole run waits (concurrency), shown and never parsed. */
    waiting: text("waiting"),
  },
  (t) => [
    index("runs_repo_idx").on(t.repoId, t.createdAt),
    index("runs_trigger_idx").on(t.repoId, t.commit, t.ref, t.event),
    uniqueIndex("runs_schedule_uq").on(t.repoId, t.workflow, t.scheduleSlot).where(sql`${t.scheduleSlot} IS NOT NULL`),
    index("runs_concurrency_idx").on(t.repoId, t.concurrencyGroup, t.state).where(sql`${t.concurrencyGroup} IS NOT NULL`),
  ],
);

/** What the runner needs to run a job (DECISIONS §3 job description). */
export interface JobSpec {
  /**
   * A step runs `run` (a script) or, in a v2 spec (issue 29), `uses` an action with `with` inputs
   * (exactly one of `run` and `uses`; v1 specs have only `run` steps).
   */
  steps: { name: string; run?: string; uses?: string; with?: Record<string, string>; env: Record<string, string> }[];
  env: Record<string, string>;
  timeoutS: number;
}

/** The state of one step as the runner reported it. */
export interface StepState {
  state: "pending" | "running" | "success" | "failure" | "skipped" | "cancelled";
  exit_code: number | null;
  /**
   * The step's name as lists show it (at most STEP_NAME_SHOWN characters), kept here so run lists
   * and pages never read the job's spec. Absent in rows written before issue 25.
   */
  name?: string;
}

export const workflowJobs = sqliteTable(
  "workflow_jobs",
  {
    id: id(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    repoId: text("repo_id").notNull(),
    orgId: text("org_id").notNull(),
    key: text("key").notNull(),
    runsOn: text("runs_on", { mode: "json" }).$type<string[]>().notNull(),
    /** runs-on without `self-hosted`: for instance runners, and counted as CI minutes. */
    hosted: integer("hosted", { mode: "boolean" }).notNull(),
    spec: text("spec", { mode: "json" }).$type<JobSpec>().notNull(),
    state: text("state").$type<JobState>().notNull(),
    verdict: text("verdict"),
    error: text("error"),
    runnerId: text("runner_id"),
    runnerName: text("runner_name"),
    tokenId: text("token_id"),
    steps: text("steps", { mode: "json" }).$type<StepState[]>().notNull(),
    /** Why the job should stop (`cancel` answered to the heartbeat): a cancel request or its timeout. */
    cancelReason: text("cancel_reason"),
    logSize: integer("log_size").notNull().default(0),
    queuedAt: integer("queued_at").notNull(),
    startedAt: integer("started_at"),
    finishedAt: integer("finished_at"),
    lastHeartbeatAt: integer("last_heartbeat_at"),
    /** The attempt this row belongs to; rows (and logs) of earlier attempts stay. */
    attempt: integer("attempt").notNull().default(1),
    /** The YAML job id (`build`): what `needs` names. Empty in rows planned before issue 29. */
    workflowJob: text("workflow_job").notNull().default(""),
    /** YAML job ids this job needs. */
    needs: text("needs", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** The job's `if` source, shown on the run page. */
    condition: text("condition"),
    /** Why a `skipped` job was skipped (`needs build failed`). */
    skipReason: text("skip_reason"),
    /** Job outputs reported with the verdict. */
    outputs: text("outputs", { mode: "json" }).$type<Record<string, string>>(),
    /** The evaluated job-level concurrency group. */
    concurrencyGroup: text("concurrency_group"),
    /** A failed-only re-run: the earlier attempt's job this row stands for. */
    reusedFrom: text("reused_from"),
    /** What is evaluated when the job is released (dynamic matrix, needs-dependent parts); null when planned whole. */
    plan: text("plan", { mode: "json" }).$type<unknown>(),
  },
  (t) => [
    index("workflow_jobs_queue_idx").on(t.state, t.hosted, t.orgId, t.queuedAt),
    index("workflow_jobs_run_idx").on(t.runId, t.state),
    index("workflow_jobs_runner_idx").on(t.runnerId, t.state),
    index("workflow_jobs_token_idx").on(t.tokenId),
    index("workflow_jobs_attempt_idx").on(t.runId, t.attempt),
    index("workflow_jobs_concurrency_idx").on(t.repoId, t.concurrencyGroup, t.state).where(sql`${t.concurrencyGroup} IS NOT NULL`),
  ],
);

/** Acknowledged log text: one stored object per append, in offset order (bytes of UTF-8). */
export const jobLogChunks = sqliteTable(
  "job_log_chunks",
  {
    jobId: text("job_id")
      .notNull()
      .references(() => workflowJobs.id, { onDelete: "cascade" }),
    offset: integer("offset").notNull(),
    size: integer("size").notNull(),
    key: text("key").notNull(),
    /** The server's masking pass changed the stored bytes: offset/size stay the agent's, readers serve the chunk whole. */
    masked: integer("masked", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.offset] })],
);

/** Each job's latest state against its commit under its key: what a protection's required_checks reads. */
export const checkResults = sqliteTable(
  "check_results",
  {
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    commit: text("commit").notNull(),
    key: text("key").notNull(),
    /** A job state; `pending` is recorded as `queued`, `skipped` as itself (it passes). */
    state: text("state").$type<RunState | "skipped">().notNull(),
    runId: text("run_id").notNull(),
    jobId: text("job_id").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.repoId, t.commit, t.key] })],
);

/** CI minutes per job, kept when runs are deleted (billing reads them; hosted jobs count). */
export const ciMinutes = sqliteTable(
  "ci_minutes",
  {
    jobId: text("job_id").primaryKey(),
    orgId: text("org_id").notNull(),
    repoId: text("repo_id").notNull(),
    hosted: integer("hosted", { mode: "boolean" }).notNull(),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
    /** Whole minutes, rounded up, once the job finished. */
    minutes: integer("minutes"),
  },
  (t) => [index("ci_minutes_org_idx").on(t.orgId, t.startedAt)],
);

/** Encrypted CI secrets: org secrets (`repo_id` null) and repo secrets. The value is only ever sealed (seal.ts). */
export const ciSecrets = sqliteTable(
  "ci_secrets",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    repoId: text("repo_id").references(() => repos.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `v1:<key_id>:<nonce>:<ciphertext+tag>`, bound to (org, repo, name). */
    sealed: text("sealed").notNull(),
    /** Org secrets: every repo of the org, or only those in ci_secret_repos. */
    visibility: text("visibility", { enum: ["all", "selected"] })
      .notNull()
      .default("all"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
    updatedBy: text("updated_by"),
  },
  (t) => [uniqueIndex("ci_secrets_scope_name_uq").on(t.orgId, sql`coalesce(${t.repoId}, '')`, t.name), index("ci_secrets_repo_idx").on(t.repoId)],
);

/** The repositories a `selected` org secret reaches (ids, so a rename keeps the entry). */
export const ciSecretRepos = sqliteTable(
  "ci_secret_repos",
  {
    secretId: text("secret_id")
      .notNull()
      .references(() => ciSecrets.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.secretId, t.repoId] }), index("ci_secret_repos_repo_idx").on(t.repoId)],
);

/** CI variables: plain text, readable by writers (DECISIONS §5); org (`repo_id` null) or repo. */
export const ciVariables = sqliteTable(
  "ci_variables",
  {
    id: id(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id, { onDelete: "cascade" }),
    repoId: text("repo_id").references(() => repos.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    value: text("value").notNull(),
    visibility: text("visibility", { enum: ["all", "selected"] })
      .notNull()
      .default("all"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
    updatedBy: text("updated_by"),
  },
  (t) => [uniqueIndex("ci_variables_scope_name_uq").on(t.orgId, sql`coalesce(${t.repoId}, '')`, t.name), index("ci_variables_repo_idx").on(t.repoId)],
);

/** The repositories a `selected` org variable reaches. */
export const ciVariableRepos = sqliteTable(
  "ci_variable_repos",
  {
    variableId: text("variable_id")
      .notNull()
      .references(() => ciVariables.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.variableId, t.repoId] }), index("ci_variable_repos_repo_idx").on(t.repoId)],
);

/** The `schedule` crons of each repo's default branch, replaced whole when the default branch moves. */
export const ciSchedules = sqliteTable(
  "ci_schedules",
  {
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    /** The workflow file's path. */
    workflow: text("workflow").notNull(),
    /** The index of the cron in the file's `schedule` list. */
    position: integer("position").notNull(),
    cron: text("cron").notNull(),
    /** The default-branch tip the cron was read from. */
    commit: text("commit").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.repoId, t.workflow, t.position] })],
);

/**
 * A run's artifact (issue 30): one zip the agent made and uploaded, kept in object storage under
 * `key` until `expires_at` (SVC_CI_ARTIFACT_DAYS). `uploading` rows are reservations whose bytes
 * have not been confirmed; lists and downloads show `ready` rows only. A name is unique per run; a
 * later attempt's upload replaces an earlier attempt's artifact of the same name.
 */
export const ciArtifacts = sqliteTable(
  "ci_artifacts",
  {
    id: id(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    repoId: text("repo_id").notNull(),
    orgId: text("org_id").notNull(),
    /** The job that uploaded it (null once that job's row is gone). */
    jobId: text("job_id"),
    attempt: integer("attempt").notNull().default(1),
    name: text("name").notNull(),
    /** Bytes of the stored zip. */
    size: integer("size").notNull(),
    /** The stored zip's SHA-256 (hex), checked when the upload is confirmed. */
    sha256: text("sha256"),
    /** The object store key of the zip. */
    key: text("key").notNull(),
    state: text("state", { enum: ["uploading", "ready"] }).notNull(),
    createdAt: createdAt(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    uniqueIndex("ci_artifacts_run_name_uq").on(t.runId, t.name),
    index("ci_artifacts_repo_idx").on(t.repoId),
    index("ci_artifacts_expiry_idx").on(t.expiresAt),
  ],
);

/**
 * A dependency cache (issue 30): immutable per (repo, scope, key, version). `scope` is the ref the
 * saving job ran on (`refs/heads/main`; a fork's runs write `fork:{repo id}/refs/heads/x`, so they
 * can never write a scope the target's runs read first); restores read the job's own scope, then
 * the default branch's. `version` digests the cached paths, so the same key over other paths is
 * another cache. `reserved` rows are uploads in flight; restores read `ready` rows only.
 */
export const ciCaches = sqliteTable(
  "ci_caches",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    scope: text("scope").notNull(),
    /** The cache key as the workflow wrote it (at most 512 characters). */
    cacheKey: text("cache_key").notNull(),
    version: text("version").notNull(),
    size: integer("size").notNull(),
    /** The object store key of the archive. */
    key: text("key").notNull(),
    state: text("state", { enum: ["reserved", "ready"] }).notNull(),
    /** The job that saved it. */
    jobId: text("job_id"),
    createdAt: createdAt(),
    /** Set at save and at each restore: eviction reads it (7 days unused, then least recently used first past SVC_CI_CACHE_MAX). */
    lastUsedAt: integer("last_used_at").notNull(),
  },
  (t) => [
    uniqueIndex("ci_caches_entry_uq").on(t.repoId, t.scope, t.cacheKey, t.version),
    index("ci_caches_repo_used_idx").on(t.repoId, t.lastUsedAt),
    index("ci_caches_used_idx").on(t.lastUsedAt),
  ],
);
