-- CI (issue 13). The draft runs and workflow_jobs tables never held rows, so they are rebuilt.
CREATE TABLE `check_results` (
	`repo_id` text NOT NULL,
	`commit` text NOT NULL,
	`key` text NOT NULL,
	`state` text NOT NULL,
	`run_id` text NOT NULL,
	`job_id` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`repo_id`, `commit`, `key`),
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `ci_minutes` (
	`job_id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`hosted` integer NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`minutes` integer
);
--> statement-breakpoint
CREATE INDEX `ci_minutes_org_idx` ON `ci_minutes` (`org_id`,`started_at`);--> statement-breakpoint
CREATE TABLE `runner_group_repos` (
	`group_id` text NOT NULL,
	`repo_id` text NOT NULL,
	PRIMARY KEY(`group_id`, `repo_id`),
	FOREIGN KEY (`group_id`) REFERENCES `runner_groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `runner_group_repos_repo_idx` ON `runner_group_repos` (`repo_id`);--> statement-breakpoint
CREATE TABLE `runner_policies` (
	`org_id` text PRIMARY KEY NOT NULL,
	`hosted` text NOT NULL,
	`self_hosted` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `runner_policy_repos` (
	`org_id` text NOT NULL,
	`repo_id` text NOT NULL,
	PRIMARY KEY(`org_id`, `repo_id`),
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_runner_registration_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`group_id` text,
	`hosted` integer DEFAULT false NOT NULL,
	`secret_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`spent_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `runner_groups`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_runner_registration_tokens`("id", "org_id", "group_id", "hosted", "secret_hash", "expires_at", "spent_at", "created_at") SELECT "id", "org_id", "group_id", "hosted", "secret_hash", "expires_at", "spent_at", "created_at" FROM `runner_registration_tokens`;--> statement-breakpoint
DROP TABLE `runner_registration_tokens`;--> statement-breakpoint
ALTER TABLE `__new_runner_registration_tokens` RENAME TO `runner_registration_tokens`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE TABLE `__new_runners` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`group_id` text,
	`hosted` integer DEFAULT false NOT NULL,
	`name` text NOT NULL,
	`labels` text NOT NULL,
	`os` text NOT NULL,
	`arch` text NOT NULL,
	`version` text DEFAULT '' NOT NULL,
	`ephemeral` integer DEFAULT false NOT NULL,
	`credential_hash` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	`removed_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_runners`("id", "org_id", "group_id", "hosted", "name", "labels", "os", "arch", "version", "ephemeral", "credential_hash", "last_seen_at", "removed_at", "created_at") SELECT "id", "org_id", "group_id", "hosted", "name", "labels", "os", "arch", "version", "ephemeral", "credential_hash", "last_seen_at", "removed_at", "created_at" FROM `runners`;--> statement-breakpoint
DROP TABLE `runners`;--> statement-breakpoint
ALTER TABLE `__new_runners` RENAME TO `runners`;--> statement-breakpoint
CREATE INDEX `runners_org_idx` ON `runners` (`org_id`,`removed_at`);--> statement-breakpoint
CREATE INDEX `runners_group_idx` ON `runners` (`group_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `runners_live_name_uq` ON `runners` (coalesce("org_id", ''),lower("name")) WHERE "runners"."removed_at" IS NULL;--> statement-breakpoint
DROP TABLE `workflow_jobs`;--> statement-breakpoint
DROP TABLE `runs`;--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`org_id` text NOT NULL,
	`workflow` text NOT NULL,
	`commit` text NOT NULL,
	`ref` text NOT NULL,
	`event` text NOT NULL,
	`state` text NOT NULL,
	`error` text,
	`created_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `runs_repo_idx` ON `runs` (`repo_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `runs_trigger_idx` ON `runs` (`repo_id`,`commit`,`ref`,`event`);--> statement-breakpoint
CREATE TABLE `workflow_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`org_id` text NOT NULL,
	`key` text NOT NULL,
	`runs_on` text NOT NULL,
	`hosted` integer NOT NULL,
	`spec` text NOT NULL,
	`state` text NOT NULL,
	`verdict` text,
	`error` text,
	`runner_id` text,
	`runner_name` text,
	`token_id` text,
	`steps` text NOT NULL,
	`cancel_reason` text,
	`log_size` integer DEFAULT 0 NOT NULL,
	`queued_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`last_heartbeat_at` integer,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workflow_jobs_queue_idx` ON `workflow_jobs` (`state`,`hosted`,`org_id`,`queued_at`);--> statement-breakpoint
CREATE INDEX `workflow_jobs_run_idx` ON `workflow_jobs` (`run_id`,`state`);--> statement-breakpoint
CREATE INDEX `workflow_jobs_runner_idx` ON `workflow_jobs` (`runner_id`,`state`);--> statement-breakpoint
CREATE INDEX `workflow_jobs_token_idx` ON `workflow_jobs` (`token_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `runner_groups_default_uq` ON `runner_groups` (`org_id`) WHERE "runner_groups"."is_default" = 1;--> statement-breakpoint
ALTER TABLE `runner_groups` DROP COLUMN `repos`;--> statement-breakpoint
CREATE TABLE `job_log_chunks` (
	`job_id` text NOT NULL,
	`offset` integer NOT NULL,
	`size` integer NOT NULL,
	`key` text NOT NULL,
	PRIMARY KEY(`job_id`, `offset`),
	FOREIGN KEY (`job_id`) REFERENCES `workflow_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
