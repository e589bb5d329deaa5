CREATE TABLE `ci_artifacts` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`org_id` text NOT NULL,
	`job_id` text,
	`attempt` integer DEFAULT 1 NOT NULL,
	`name` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text,
	`key` text NOT NULL,
	`state` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ci_artifacts_run_name_uq` ON `ci_artifacts` (`run_id`,`name`);--> statement-breakpoint
CREATE INDEX `ci_artifacts_repo_idx` ON `ci_artifacts` (`repo_id`);--> statement-breakpoint
CREATE INDEX `ci_artifacts_expiry_idx` ON `ci_artifacts` (`expires_at`);--> statement-breakpoint
CREATE TABLE `ci_caches` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`org_id` text NOT NULL,
	`scope` text NOT NULL,
	`cache_key` text NOT NULL,
	`version` text NOT NULL,
	`size` integer NOT NULL,
	`key` text NOT NULL,
	`state` text NOT NULL,
	`job_id` text,
	`created_at` integer NOT NULL,
	`last_used_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ci_caches_entry_uq` ON `ci_caches` (`repo_id`,`scope`,`cache_key`,`version`);--> statement-breakpoint
CREATE INDEX `ci_caches_repo_used_idx` ON `ci_caches` (`repo_id`,`last_used_at`);--> statement-breakpoint
CREATE INDEX `ci_caches_used_idx` ON `ci_caches` (`last_used_at`);