CREATE TABLE `change_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`change_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`author_user_id` text,
	`state` text DEFAULT 'published' NOT NULL,
	`body` text,
	`body_html` text,
	`render_version` integer DEFAULT 0 NOT NULL,
	`thread_id` text NOT NULL,
	`in_reply_to` text,
	`review_id` text,
	`patchset` integer NOT NULL,
	`path` text,
	`side` text,
	`line` integer,
	`start_line` integer,
	`commit_oid` text,
	`blob_oid` text,
	`anchor_text` text,
	`context_text` text,
	`outdated` integer DEFAULT false NOT NULL,
	`anchored_patchset` integer NOT NULL,
	`cur_line` integer,
	`cur_start_line` integer,
	`suggestion` text,
	`applied_commit` text,
	`resolved` integer DEFAULT false NOT NULL,
	`resolved_by_user_id` text,
	`resolved_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`edited_at` integer,
	FOREIGN KEY (`change_id`) REFERENCES `changes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `change_comments_change_idx` ON `change_comments` (`change_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `change_comments_thread_idx` ON `change_comments` (`thread_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `change_comments_review_idx` ON `change_comments` (`review_id`);--> statement-breakpoint
CREATE INDEX `change_comments_author_idx` ON `change_comments` (`change_id`,`author_user_id`,`state`);--> statement-breakpoint
CREATE INDEX `change_comments_anchor_idx` ON `change_comments` (`change_id`,`anchored_patchset`) WHERE state = 'published' AND path IS NOT NULL;--> statement-breakpoint
CREATE TABLE `change_reviewers` (
	`change_id` text NOT NULL,
	`user_id` text NOT NULL,
	`requested_by_user_id` text,
	`requested_at` integer NOT NULL,
	PRIMARY KEY(`change_id`, `user_id`),
	FOREIGN KEY (`change_id`) REFERENCES `changes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `change_reviewers_user_idx` ON `change_reviewers` (`user_id`);--> statement-breakpoint
CREATE TABLE `change_reviews` (
	`id` text PRIMARY KEY NOT NULL,
	`change_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`author_user_id` text,
	`verdict` text NOT NULL,
	`body` text,
	`body_html` text,
	`render_version` integer DEFAULT 0 NOT NULL,
	`patchset` integer NOT NULL,
	`head` text NOT NULL,
	`dismissed` integer DEFAULT false NOT NULL,
	`dismissed_reason` text,
	`dismissed_by_user_id` text,
	`dismissed_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`change_id`) REFERENCES `changes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `change_reviews_change_idx` ON `change_reviews` (`change_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `change_reviews_person_idx` ON `change_reviews` (`change_id`,`author_user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `mail_unsubscribes` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`repo_id` text,
	`subject_kind` text,
	`subject_id` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mail_unsubscribes_expiry_idx` ON `mail_unsubscribes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `notification_prefs` (
	`user_id` text PRIMARY KEY NOT NULL,
	`email` integer DEFAULT true NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`subject_kind` text NOT NULL,
	`subject_id` text NOT NULL,
	`subject_number` integer,
	`title` text NOT NULL,
	`reason` text NOT NULL,
	`unread` integer DEFAULT true NOT NULL,
	`last_activity_id` text NOT NULL,
	`last_activity_at` integer NOT NULL,
	`mailed_through` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_subject_uq` ON `notifications` (`user_id`,`subject_kind`,`subject_id`);--> statement-breakpoint
CREATE INDEX `notifications_user_idx` ON `notifications` (`user_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `notifications_unread_idx` ON `notifications` (`user_id`,`unread`,`repo_id`);--> statement-breakpoint
CREATE TABLE `thread_activity` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`org_id` text NOT NULL,
	`subject_kind` text NOT NULL,
	`subject_id` text NOT NULL,
	`subject_number` integer,
	`title` text NOT NULL,
	`kind` text NOT NULL,
	`actor_user_id` text,
	`summary` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `thread_activity_subject_idx` ON `thread_activity` (`subject_kind`,`subject_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `thread_activity_created_idx` ON `thread_activity` (`created_at`);--> statement-breakpoint
CREATE TABLE `thread_participants` (
	`subject_kind` text NOT NULL,
	`subject_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`user_id` text NOT NULL,
	`reason` text,
	`muted` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`subject_kind`, `subject_id`, `user_id`),
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `thread_participants_user_idx` ON `thread_participants` (`user_id`);--> statement-breakpoint
ALTER TABLE `protections` ADD `required_approvals` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `protections` ADD `dismiss_stale_approvals` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `mail_outbox` ADD `headers` text;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `redelivery_of` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `events` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `actor_user_id` text;--> statement-breakpoint
CREATE INDEX `subscriptions_repo_level_idx` ON `subscriptions` (`repo_id`,`level`);