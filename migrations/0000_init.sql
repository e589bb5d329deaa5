CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`action` text NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_id` text,
	`actor_name` text,
	`target` text,
	`data` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_org_idx` ON `audit_events` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `changes` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`number` integer NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`state` text NOT NULL,
	`branch` text NOT NULL,
	`source_repo_id` text,
	`target` text NOT NULL,
	`head` text,
	`base` text,
	`patchset` integer DEFAULT 1 NOT NULL,
	`depends_on` integer,
	`landed_commit` text,
	`included_in` integer,
	`verdict` text,
	`author_user_id` text,
	`queued_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `changes_repo_number_uq` ON `changes` (`repo_id`,`number`);--> statement-breakpoint
CREATE TABLE `commit_contexts` (
	`repo_id` text NOT NULL,
	`sha` text NOT NULL,
	`context` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`repo_id`, `sha`),
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `contributions` (
	`user_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`sha` text NOT NULL,
	`day` text NOT NULL,
	PRIMARY KEY(`user_id`, `repo_id`, `sha`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `email_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`purpose` text NOT NULL,
	`address` text NOT NULL,
	`secret_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`spent_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `email_tokens_hash_uq` ON `email_tokens` (`secret_hash`);--> statement-breakpoint
CREATE TABLE `emails` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`address` text NOT NULL,
	`verified_at` integer,
	`private` integer DEFAULT true NOT NULL,
	`primary` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `emails_address_uq` ON `emails` (lower("address"));--> statement-breakpoint
CREATE INDEX `emails_user_idx` ON `emails` (`user_id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`org_id` text NOT NULL,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`actor_user_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_repo_idx` ON `events` (`repo_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `follows` (
	`follower_id` text NOT NULL,
	`followee_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`follower_id`, `followee_id`),
	FOREIGN KEY (`follower_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`followee_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `grants` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`user_id` text,
	`team_id` text,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grants_repo_user_uq` ON `grants` (`repo_id`,`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `grants_repo_team_uq` ON `grants` (`repo_id`,`team_id`);--> statement-breakpoint
CREATE TABLE `invites` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`secret_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`accepted_at` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invites_hash_uq` ON `invites` (`secret_hash`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`run_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`locked_until` integer,
	`last_error` text,
	`done_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`done_at`,`run_at`);--> statement-breakpoint
CREATE TABLE `memberships` (
	`org_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`org_id`, `user_id`),
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `memberships_user_idx` ON `memberships` (`user_id`);--> statement-breakpoint
CREATE TABLE `metrics` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`org_id` text NOT NULL,
	`repo_id` text,
	`kind` text NOT NULL,
	`bytes` integer DEFAULT 0 NOT NULL,
	`duration_ms` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `metrics_org_kind_idx` ON `metrics` (`org_id`,`kind`,`created_at`);--> statement-breakpoint
CREATE TABLE `orgs` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`owner_user_id` text,
	`display_name` text,
	`description` text,
	`location` text,
	`website` text,
	`contact_email` text,
	`plan` text DEFAULT 'free' NOT NULL,
	`billing_status` text,
	`current_period_end` integer,
	`paid_seats` integer DEFAULT 0 NOT NULL,
	`provider_customer_id` text,
	`provider_subscription_id` text,
	`ci_suspended_reason` text,
	`ci_suspended_at` integer,
	`runner_policy` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`owner_user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `orgs_name_uq` ON `orgs` (lower("name"));--> statement-breakpoint
CREATE TABLE `packs` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`name` text NOT NULL,
	`size` integer NOT NULL,
	`idx_size` integer NOT NULL,
	`object_count` integer NOT NULL,
	`tier` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`replaced_at` integer,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `packs_repo_name_uq` ON `packs` (`repo_id`,`name`);--> statement-breakpoint
CREATE TABLE `pins` (
	`user_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`position` integer NOT NULL,
	PRIMARY KEY(`user_id`, `repo_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `protections` (
	`repo_id` text NOT NULL,
	`pattern` text NOT NULL,
	`allow_force_push` integer DEFAULT false NOT NULL,
	`allow_deletion` integer DEFAULT false NOT NULL,
	`require_change` integer DEFAULT false NOT NULL,
	`required_checks` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`repo_id`, `pattern`),
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `refs` (
	`repo_id` text NOT NULL,
	`name` text NOT NULL,
	`target` text NOT NULL,
	PRIMARY KEY(`repo_id`, `name`),
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `repos` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`kind` text DEFAULT 'native' NOT NULL,
	`public` integer DEFAULT false NOT NULL,
	`default_branch` text DEFAULT 'main' NOT NULL,
	`description` text,
	`homepage` text,
	`origin_url` text,
	`origin_provider` text,
	`origin_installation` text,
	`last_sync_at` integer,
	`last_synced_commit` text,
	`sync_error` text,
	`fork_parent_id` text,
	`fork_state` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `repos_org_name_uq` ON `repos` (`org_id`,lower("name"));--> statement-breakpoint
CREATE INDEX `repos_fork_parent_idx` ON `repos` (`fork_parent_id`);--> statement-breakpoint
CREATE TABLE `runner_groups` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`repo_access` text DEFAULT 'all' NOT NULL,
	`allow_public` integer DEFAULT false NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`repos` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runner_groups_org_name_uq` ON `runner_groups` (`org_id`,lower("name"));--> statement-breakpoint
CREATE TABLE `runner_registration_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`group_id` text,
	`hosted` integer DEFAULT false NOT NULL,
	`secret_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`spent_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runner_reg_hash_uq` ON `runner_registration_tokens` (`secret_hash`);--> statement-breakpoint
CREATE TABLE `runners` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`group_id` text,
	`name` text NOT NULL,
	`labels` text NOT NULL,
	`os` text NOT NULL,
	`arch` text NOT NULL,
	`version` text DEFAULT '' NOT NULL,
	`ephemeral` integer DEFAULT false NOT NULL,
	`credential_hash` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	`removed_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runners_cred_uq` ON `runners` (`credential_hash`);--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`workflow` text NOT NULL,
	`commit` text NOT NULL,
	`ref` text NOT NULL,
	`event` text NOT NULL,
	`state` text NOT NULL,
	`created_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_hash_uq` ON `sessions` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `signup_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`address` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `signup_attempts_idx` ON `signup_attempts` (`created_at`);--> statement-breakpoint
CREATE TABLE `ssh_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`user_id` text,
	`token_id` text,
	`kind` text NOT NULL,
	`label` text NOT NULL,
	`public_key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`token_id`) REFERENCES `tokens`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ssh_keys_fingerprint_uq` ON `ssh_keys` (`fingerprint`);--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`repo_id` text NOT NULL,
	`user_id` text NOT NULL,
	`level` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`repo_id`, `user_id`),
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `team_members` (
	`team_id` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`team_id`, `user_id`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `teams` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `teams_org_name_uq` ON `teams` (`org_id`,lower("name"));--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`user_id` text,
	`kind` text NOT NULL,
	`scopes` text NOT NULL,
	`label` text NOT NULL,
	`repo_id` text,
	`secret_hash` text NOT NULL,
	`last_used_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tokens_org_idx` ON `tokens` (`org_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`handle` text NOT NULL,
	`email` text NOT NULL,
	`name` text NOT NULL,
	`display_name` text,
	`bio` text,
	`location` text,
	`company` text,
	`pronouns` text,
	`links` text DEFAULT '[]' NOT NULL,
	`kind` text DEFAULT 'human' NOT NULL,
	`contrib_private_optin` integer DEFAULT false NOT NULL,
	`profile_repo` text,
	`password_hash` text NOT NULL,
	`email_verified_at` integer,
	`disabled_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_handle_uq` ON `users` (lower("handle"));--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_uq` ON `users` (lower("email"));--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event` text NOT NULL,
	`attempt` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	`delivered_at` integer NOT NULL,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`url` text NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `workflow_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`key` text NOT NULL,
	`runs_on` text NOT NULL,
	`spec` text NOT NULL,
	`state` text NOT NULL,
	`verdict` text,
	`error` text,
	`runner_id` text,
	`token_id` text,
	`log` text DEFAULT '' NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`last_heartbeat_at` integer,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
