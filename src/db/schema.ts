// The metadata schema for the whole service. Git objects live in object storage; everything
// else (refs, the live pack list, people, credentials, events, durable jobs) lives here.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const id = () => text("id").primaryKey();
const createdAt = () => integer("created_at").notNull();

/** People (and agents). The handle is also a personal namespace row in `orgs`. */
export const users = sqliteTable("users", {
  id: id(),
  handle: text("handle").notNull(),
  email: text("email").notNull(),
  name: text("name").notNull(),
  displayName: text("display_name"),
  bio: text("bio"),
  location: text("location"),
  company: text("company"),
  pronouns: text("pronouns"),
  links: text("links", { mode: "json" }).$type<{ label: string; url: string }[]>().notNull().default(sql`'[]'`),
  kind: text("kind", { enum: ["human", "agent"] }).notNull().default("human"),
  contribPrivateOptin: integer("contrib_private_optin", { mode: "boolean" }).notNull().default(false),
  profileRepo: text("profile_repo"),
  passwordHash: text("password_hash").notNull(),
  emailVerifiedAt: integer("email_verified_at"),
  disabledAt: integer("disabled_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("users_handle_uq").on(sql`lower(${t.handle})`),
  uniqueIndex("users_email_uq").on(sql`lower(${t.email})`),
]);

/** Addresses of an account; the sign-in address is the primary row. */
export const emails = sqliteTable("emails", {
  id: id(),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  address: text("address").notNull(),
  verifiedAt: integer("verified_at"),
  private: integer("private", { mode: "boolean" }).notNull().default(true),
  primary: integer("primary", { mode: "boolean" }).notNull().default(false),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("emails_address_uq").on(sql`lower(${t.address})`), index("emails_user_idx").on(t.userId)]);

/** Single-use links (confirmation svcv_, reset svcrs_, address claim svce_): only hashes stored. */
export const emailTokens = sqliteTable("email_tokens", {
  id: id(),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  purpose: text("purpose", { enum: ["verify", "reset", "claim"] }).notNull(),
  address: text("address").notNull(),
  secretHash: text("secret_hash").notNull(),
  expiresAt: integer("expires_at").notNull(),
  spentAt: integer("spent_at"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("email_tokens_hash_uq").on(t.secretHash), index("email_tokens_user_idx").on(t.userId, t.purpose)]);

/** Browser sessions (cookie svc_session); the cookie carries a secret whose SHA-256 is stored. */
export const sessions = sqliteTable("sessions", {
  id: id(),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  secretHash: text("secret_hash").notNull(),
  expiresAt: integer("expires_at").notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("sessions_hash_uq").on(t.secretHash), index("sessions_user_idx").on(t.userId)]);

/** Namespaces: organizations and personal namespaces (kind `personal`, named by the handle). */
export const orgs = sqliteTable("orgs", {
  id: id(),
  name: text("name").notNull(),
  kind: text("kind", { enum: ["org", "personal"] }).notNull(),
  ownerUserId: text("owner_user_id").references(() => users.id, { onDelete: "cascade" }),
  displayName: text("display_name"),
  description: text("description"),
  location: text("location"),
  website: text("website"),
  contactEmail: text("contact_email"),
  plan: text("plan", { enum: ["free", "paid", "past_due"] }).notNull().default("free"),
  billingStatus: text("billing_status"),
  currentPeriodEnd: integer("current_period_end"),
  paidSeats: integer("paid_seats").notNull().default(0),
  providerCustomerId: text("provider_customer_id"),
  providerSubscriptionId: text("provider_subscription_id"),
  ciSuspendedReason: text("ci_suspended_reason"),
  ciSuspendedAt: integer("ci_suspended_at"),
  runnerPolicy: text("runner_policy", { mode: "json" }).$type<{ hosted: string; self_hosted: string; self_hosted_repos: string[] }>(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("orgs_name_uq").on(sql`lower(${t.name})`)]);

/** A person's role in an organization. */
export const memberships = sqliteTable("memberships", {
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  role: text("role", { enum: ["viewer", "member", "admin", "owner"] }).notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index("memberships_user_idx").on(t.userId)]);

export const teams = sqliteTable("teams", {
  id: id(),
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  description: text("description"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("teams_org_name_uq").on(t.orgId, sql`lower(${t.name})`)]);

export const teamMembers = sqliteTable("team_members", {
  teamId: text("team_id").notNull().references(() => teams.id, { onDelete: "cascade" }),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.teamId, t.userId] }), index("team_members_user_idx").on(t.userId)]);

export const invites = sqliteTable("invites", {
  id: id(),
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  email: text("email").notNull(),
  role: text("role", { enum: ["viewer", "member", "admin", "owner"] }).notNull(),
  secretHash: text("secret_hash").notNull(),
  expiresAt: integer("expires_at").notNull(),
  acceptedAt: integer("accepted_at"),
  createdBy: text("created_by"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("invites_hash_uq").on(t.secretHash), index("invites_org_idx").on(t.orgId)]);

/** Repositories. Refs and packs hang off them; storage is removed by a durable job on delete. */
export const repos = sqliteTable("repos", {
  id: id(),
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  kind: text("kind", { enum: ["native", "mirror"] }).notNull().default("native"),
  public: integer("public", { mode: "boolean" }).notNull().default(false),
  defaultBranch: text("default_branch").notNull().default("main"),
  description: text("description"),
  homepage: text("homepage"),
  originUrl: text("origin_url"),
  originProvider: text("origin_provider", { enum: ["app", "generic"] }),
  originInstallation: text("origin_installation"),
  lastSyncAt: integer("last_sync_at"),
  lastSyncedCommit: text("last_synced_commit"),
  syncError: text("sync_error"),
  forkParentId: text("fork_parent_id"),
  forkState: text("fork_state", { enum: ["pending", "ready", "failed"] }),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("repos_org_name_uq").on(t.orgId, sql`lower(${t.name})`), index("repos_fork_parent_idx").on(t.forkParentId)]);

/** Per-repo grants naming a person or a team. */
export const grants = sqliteTable("grants", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
  teamId: text("team_id").references(() => teams.id, { onDelete: "cascade" }),
  role: text("role", { enum: ["viewer", "member", "admin"] }).notNull(),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("grants_repo_user_uq").on(t.repoId, t.userId),
  uniqueIndex("grants_repo_team_uq").on(t.repoId, t.teamId),
  index("grants_user_idx").on(t.userId),
  index("grants_team_idx").on(t.teamId),
]);

/** API tokens `svc_<id>_<secret>`: personal (a person) or service (the org); job tokens for CI. */
export const tokens = sqliteTable("tokens", {
  id: id(),
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
  kind: text("kind", { enum: ["personal", "service", "job"] }).notNull(),
  scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
  label: text("label").notNull(),
  repoId: text("repo_id").references(() => repos.id, { onDelete: "cascade" }),
  secretHash: text("secret_hash").notNull(),
  lastUsedAt: integer("last_used_at"),
  createdAt: createdAt(),
}, (t) => [index("tokens_org_idx").on(t.orgId)]);

/** SSH public keys: personal (a person) or deploy (naming a token). */
export const sshKeys = sqliteTable("ssh_keys", {
  id: id(),
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
  tokenId: text("token_id").references(() => tokens.id, { onDelete: "cascade" }),
  kind: text("kind", { enum: ["personal", "deploy"] }).notNull(),
  label: text("label").notNull(),
  publicKey: text("public_key").notNull(),
  fingerprint: text("fingerprint").notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("ssh_keys_fingerprint_uq").on(t.fingerprint)]);

/** Refs of a repository. HEAD is not stored: it is a symref to repos.default_branch. */
export const refs = sqliteTable("refs", {
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  target: text("target").notNull(),
}, (t) => [primaryKey({ columns: [t.repoId, t.name] })]);

/** The live pack list: a pack is visible only once its row is committed. */
export const packs = sqliteTable("packs", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  size: integer("size").notNull(),
  idxSize: integer("idx_size").notNull(),
  objectCount: integer("object_count").notNull(),
  tier: integer("tier").notNull().default(0),
  createdAt: createdAt(),
  /** Set when compaction replaced the pack; its files are deleted after a grace period. */
  replacedAt: integer("replaced_at"),
}, (t) => [uniqueIndex("packs_repo_name_uq").on(t.repoId, t.name)]);

/** Immutable context blobs recorded with API commits. */
export const commitContexts = sqliteTable("commit_contexts", {
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  sha: text("sha").notNull(),
  context: text("context").notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.repoId, t.sha] })]);

export const protections = sqliteTable("protections", {
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  pattern: text("pattern").notNull(),
  allowForcePush: integer("allow_force_push", { mode: "boolean" }).notNull().default(false),
  allowDeletion: integer("allow_deletion", { mode: "boolean" }).notNull().default(false),
  requireChange: integer("require_change", { mode: "boolean" }).notNull().default(false),
  requiredChecks: text("required_checks", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.repoId, t.pattern] })]);

/** Repository events (push, change.*), written in the same transaction as what caused them. */
export const events = sqliteTable("events", {
  id: id(),
  repoId: text("repo_id").notNull(),
  orgId: text("org_id").notNull(),
  kind: text("kind").notNull(),
  payload: text("payload", { mode: "json" }).notNull(),
  actorUserId: text("actor_user_id"),
  createdAt: createdAt(),
}, (t) => [index("events_repo_idx").on(t.repoId, t.createdAt)]);

/** Durable background work: webhook delivery, purge, compaction, mirror sync, forks, lander. */
export const jobs = sqliteTable("jobs", {
  id: id(),
  kind: text("kind").notNull(),
  payload: text("payload", { mode: "json" }).notNull(),
  runAt: integer("run_at").notNull(),
  attempts: integer("attempts").notNull().default(0),
  lockedUntil: integer("locked_until"),
  lastError: text("last_error"),
  doneAt: integer("done_at"),
  createdAt: createdAt(),
}, (t) => [index("jobs_due_idx").on(t.doneAt, t.runAt)]);

/** Per-operation metric rows (git.clone, git.fetch, git.push, api.commit, …). */
export const metrics = sqliteTable("metrics", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  orgId: text("org_id").notNull(),
  repoId: text("repo_id"),
  kind: text("kind").notNull(),
  bytes: integer("bytes").notNull().default(0),
  durationMs: integer("duration_ms").notNull().default(0),
  createdAt: createdAt(),
}, (t) => [index("metrics_org_kind_idx").on(t.orgId, t.kind, t.createdAt)]);

/** Append-only audit records. */
export const auditEvents = sqliteTable("audit_events", {
  id: id(),
  orgId: text("org_id").notNull(),
  action: text("action").notNull(),
  actorKind: text("actor_kind").notNull(),
  actorId: text("actor_id"),
  actorName: text("actor_name"),
  target: text("target"),
  data: text("data", { mode: "json" }),
  createdAt: createdAt(),
}, (t) => [index("audit_org_idx").on(t.orgId, t.createdAt)]);

export const webhooks = sqliteTable("webhooks", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  url: text("url").notNull(),
  /** HMAC key; needed in clear to sign deliveries. */
  secret: text("secret").notNull(),
  createdAt: createdAt(),
});

export const webhookDeliveries = sqliteTable("webhook_deliveries", {
  id: id(),
  webhookId: text("webhook_id").notNull().references(() => webhooks.id, { onDelete: "cascade" }),
  eventId: text("event_id").notNull(),
  event: text("event").notNull(),
  attempt: integer("attempt").notNull(),
  statusCode: integer("status_code"),
  error: text("error"),
  durationMs: integer("duration_ms").notNull(),
  deliveredAt: integer("delivered_at").notNull(),
});

export const subscriptions = sqliteTable("subscriptions", {
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  level: text("level", { enum: ["all", "participating", "ignore"] }).notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.repoId, t.userId] })]);

export const follows = sqliteTable("follows", {
  followerId: text("follower_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  followeeId: text("followee_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.followerId, t.followeeId] })]);

export const pins = sqliteTable("pins", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  position: integer("position").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.repoId] })]);

/** Contribution records: one row per commit attributed to a person. */
export const contributions = sqliteTable("contributions", {
  userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  sha: text("sha").notNull(),
  day: text("day").notNull(),
}, (t) => [primaryKey({ columns: [t.userId, t.repoId, t.sha] })]);

export const runnerGroups = sqliteTable("runner_groups", {
  id: id(),
  orgId: text("org_id").notNull().references(() => orgs.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  repoAccess: text("repo_access", { enum: ["all", "selected"] }).notNull().default("all"),
  allowPublic: integer("allow_public", { mode: "boolean" }).notNull().default(false),
  isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
  repos: text("repos", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
  createdAt: createdAt(),
  updatedAt: integer("updated_at").notNull(),
}, (t) => [uniqueIndex("runner_groups_org_name_uq").on(t.orgId, sql`lower(${t.name})`)]);

export const runnerRegistrationTokens = sqliteTable("runner_registration_tokens", {
  id: id(),
  orgId: text("org_id"),
  groupId: text("group_id"),
  hosted: integer("hosted", { mode: "boolean" }).notNull().default(false),
  secretHash: text("secret_hash").notNull(),
  expiresAt: integer("expires_at").notNull(),
  spentAt: integer("spent_at"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("runner_reg_hash_uq").on(t.secretHash)]);

export const runners = sqliteTable("runners", {
  id: id(),
  orgId: text("org_id"),
  groupId: text("group_id"),
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
}, (t) => [uniqueIndex("runners_cred_uq").on(t.credentialHash)]);

export const runs = sqliteTable("runs", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  workflow: text("workflow").notNull(),
  commit: text("commit").notNull(),
  ref: text("ref").notNull(),
  event: text("event").notNull(),
  state: text("state").notNull(),
  createdAt: createdAt(),
  finishedAt: integer("finished_at"),
});

export const workflowJobs = sqliteTable("workflow_jobs", {
  id: id(),
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  key: text("key").notNull(),
  runsOn: text("runs_on", { mode: "json" }).$type<string[]>().notNull(),
  spec: text("spec", { mode: "json" }).notNull(),
  state: text("state").notNull(),
  verdict: text("verdict"),
  error: text("error"),
  runnerId: text("runner_id"),
  tokenId: text("token_id"),
  log: text("log").notNull().default(""),
  startedAt: integer("started_at"),
  finishedAt: integer("finished_at"),
  lastHeartbeatAt: integer("last_heartbeat_at"),
});

export const changes = sqliteTable("changes", {
  id: id(),
  repoId: text("repo_id").notNull().references(() => repos.id, { onDelete: "cascade" }),
  number: integer("number").notNull(),
  title: text("title").notNull(),
  description: text("description"),
  state: text("state").notNull(),
  branch: text("branch").notNull(),
  sourceRepoId: text("source_repo_id"),
  target: text("target").notNull(),
  head: text("head"),
  base: text("base"),
  patchset: integer("patchset").notNull().default(1),
  dependsOn: integer("depends_on"),
  landedCommit: text("landed_commit"),
  includedIn: integer("included_in"),
  verdict: text("verdict"),
  authorUserId: text("author_user_id"),
  queuedAt: integer("queued_at"),
  createdAt: createdAt(),
  updatedAt: integer("updated_at").notNull(),
}, (t) => [uniqueIndex("changes_repo_number_uq").on(t.repoId, t.number)]);

/** Rate-limited events (signup, resend-verification, forgot-password), counted per address and globally. */
export const rateEvents = sqliteTable("rate_events", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  bucket: text("bucket").notNull(),
  address: text("address").notNull(),
  createdAt: createdAt(),
}, (t) => [index("rate_events_bucket_idx").on(t.bucket, t.createdAt), index("rate_events_address_idx").on(t.bucket, t.address, t.createdAt)]);

/** The durable mail outbox: written in the transaction that decides to send; a worker delivers. */
export const mailOutbox = sqliteTable("mail_outbox", {
  id: id(),
  toAddress: text("to_address").notNull(),
  subject: text("subject").notNull(),
  /** Bodies are cleared once delivered or given up on: they may carry single-use links. */
  textBody: text("text_body").notNull(),
  htmlBody: text("html_body").notNull(),
  attempts: integer("attempts").notNull().default(0),
  runAt: integer("run_at").notNull(),
  lockedUntil: integer("locked_until"),
  lastError: text("last_error"),
  sentAt: integer("sent_at"),
  failedAt: integer("failed_at"),
  createdAt: createdAt(),
}, (t) => [index("mail_outbox_due_idx").on(t.sentAt, t.failedAt, t.runAt)]);

export type User = typeof users.$inferSelect;
export type Org = typeof orgs.$inferSelect;
export type Repo = typeof repos.$inferSelect;
export type Token = typeof tokens.$inferSelect;
export type Membership = typeof memberships.$inferSelect;
export type Role = Membership["role"];
