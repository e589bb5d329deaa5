CREATE TABLE `mirror_sync_requests` (
	`repo_id` text PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`received_at` integer,
	`requested_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `mirrors` (
	`repo_id` text PRIMARY KEY NOT NULL,
	`origin_key` text NOT NULL,
	`username` text,
	`password` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mirrors_origin_idx` ON `mirrors` (`origin_key`);--> statement-breakpoint
DROP TABLE `webhook_deliveries`;--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`org_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event` text NOT NULL,
	`seq` integer NOT NULL,
	`body` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_until` integer,
	`finished_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_seq_uq` ON `webhook_deliveries` (`webhook_id`,`seq`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_pending_idx` ON `webhook_deliveries` (`webhook_id`,`seq`) WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_finished_idx` ON `webhook_deliveries` (`finished_at`);--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event` text NOT NULL,
	`attempt` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer NOT NULL,
	`delivered_at` integer NOT NULL,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_hook_idx` ON `webhook_attempts` (`webhook_id`,`id`);--> statement-breakpoint
ALTER TABLE `webhooks` ADD `last_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `webhooks_repo_idx` ON `webhooks` (`repo_id`);