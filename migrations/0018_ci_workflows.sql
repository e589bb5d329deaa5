CREATE TABLE `ci_schedules` (
	`repo_id` text NOT NULL,
	`workflow` text NOT NULL,
	`position` integer NOT NULL,
	`cron` text NOT NULL,
	`commit` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`repo_id`, `workflow`, `position`),
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `ci_secret_repos` (
	`secret_id` text NOT NULL,
	`repo_id` text NOT NULL,
	PRIMARY KEY(`secret_id`, `repo_id`),
	FOREIGN KEY (`secret_id`) REFERENCES `ci_secrets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ci_secret_repos_repo_idx` ON `ci_secret_repos` (`repo_id`);--> statement-breakpoint
CREATE TABLE `ci_secrets` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`repo_id` text,
	`name` text NOT NULL,
	`sealed` text NOT NULL,
	`visibility` text DEFAULT 'all' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`updated_by` text,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ci_secrets_scope_name_uq` ON `ci_secrets` (`org_id`,coalesce("repo_id", ''),`name`);--> statement-breakpoint
CREATE INDEX `ci_secrets_repo_idx` ON `ci_secrets` (`repo_id`);--> statement-breakpoint
CREATE TABLE `ci_variable_repos` (
	`variable_id` text NOT NULL,
	`repo_id` text NOT NULL,
	PRIMARY KEY(`variable_id`, `repo_id`),
	FOREIGN KEY (`variable_id`) REFERENCES `ci_variables`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `ci_variable_repos_repo_idx` ON `ci_variable_repos` (`repo_id`);--> statement-breakpoint
CREATE TABLE `ci_variables` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`repo_id` text,
	`name` text NOT NULL,
	`value` text NOT NULL,
	`visibility` text DEFAULT 'all' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`updated_by` text,
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ci_variables_scope_name_uq` ON `ci_variables` (`org_id`,coalesce("repo_id", ''),`name`);--> statement-breakpoint
CREATE INDEX `ci_variables_repo_idx` ON `ci_variables` (`repo_id`);--> statement-breakpoint
ALTER TABLE `job_log_chunks` ADD `masked` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `attempt` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `inputs` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `concurrency_group` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `cancel_in_progress` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `schedule_slot` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `trusted` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `runs` ADD `waiting` text;--> statement-breakpoint
CREATE UNIQUE INDEX `runs_schedule_uq` ON `runs` (`repo_id`,`workflow`,`schedule_slot`) WHERE "runs"."schedule_slot" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `runs_concurrency_idx` ON `runs` (`repo_id`,`concurrency_group`,`state`) WHERE "runs"."concurrency_group" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `attempt` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `workflow_job` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `needs` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `condition` text;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `skip_reason` text;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `outputs` text;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `concurrency_group` text;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `reused_from` text;--> statement-breakpoint
ALTER TABLE `workflow_jobs` ADD `plan` text;--> statement-breakpoint
CREATE INDEX `workflow_jobs_attempt_idx` ON `workflow_jobs` (`run_id`,`attempt`);--> statement-breakpoint
CREATE INDEX `workflow_jobs_concurrency_idx` ON `workflow_jobs` (`repo_id`,`concurrency_group`,`state`) WHERE "workflow_jobs"."concurrency_group" IS NOT NULL;