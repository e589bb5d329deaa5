ALTER TABLE `changes` ADD `queued_head` text;--> statement-breakpoint
ALTER TABLE `changes` ADD `queued_by_user_id` text;--> statement-breakpoint
ALTER TABLE `changes` ADD `waiting` text;--> statement-breakpoint
CREATE INDEX `changes_queue_idx` ON `changes` (`state`,`repo_id`,`target`,`queued_at`);--> statement-breakpoint
CREATE INDEX `changes_source_idx` ON `changes` (`source_repo_id`,`branch`);--> statement-breakpoint
CREATE INDEX `changes_repo_branch_idx` ON `changes` (`repo_id`,`branch`);