-- Discovery: contributions keyed by day, metric buckets replacing per-operation metric rows, audit
-- and follow indexes. The tables with composite keys are WITHOUT ROWID: their reads are range
-- scans of the key.
CREATE TABLE `metric_buckets` (
	`org_id` text NOT NULL,
	`kind` text NOT NULL,
	`grain` integer NOT NULL,
	`start` integer NOT NULL,
	`count` integer NOT NULL,
	`bytes` integer NOT NULL,
	`ms_sum` integer NOT NULL,
	`hist` text NOT NULL,
	PRIMARY KEY(`org_id`, `kind`, `grain`, `start`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `contribution_days` (
	`user_id` text NOT NULL,
	`day` integer NOT NULL,
	`repo_id` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`user_id`, `day`, `repo_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `contribution_days_repo_idx` ON `contribution_days` (`repo_id`);--> statement-breakpoint
DROP TABLE `metrics`;--> statement-breakpoint
DROP TABLE `contributions`;--> statement-breakpoint
CREATE TABLE `contributions` (
	`user_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`sha` text NOT NULL,
	`day` integer NOT NULL,
	PRIMARY KEY(`user_id`, `repo_id`, `sha`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `contributions_repo_idx` ON `contributions` (`repo_id`);--> statement-breakpoint
CREATE INDEX `audit_org_action_idx` ON `audit_events` (`org_id`,`action`,`created_at`);--> statement-breakpoint
CREATE INDEX `follows_followee_idx` ON `follows` (`followee_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `follows_follower_idx` ON `follows` (`follower_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `pins_repo_idx` ON `pins` (`repo_id`);