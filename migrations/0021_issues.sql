CREATE TABLE `issue_assignees` (
	`issue_id` text NOT NULL,
	`user_id` text NOT NULL,
	PRIMARY KEY(`issue_id`, `user_id`),
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_assignees_user_idx` ON `issue_assignees` (`user_id`,`issue_id`);--> statement-breakpoint
CREATE TABLE `issue_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`issue_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`author_user_id` text,
	`body` text,
	`body_html` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`edited_at` integer,
	`deleted_at` integer,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_comments_issue_idx` ON `issue_comments` (`issue_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `issue_comments_author_idx` ON `issue_comments` (`author_user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `issue_events` (
	`id` text PRIMARY KEY NOT NULL,
	`issue_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`kind` text NOT NULL,
	`actor_user_id` text,
	`data` text NOT NULL,
	`dedupe` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_events_issue_idx` ON `issue_events` (`issue_id`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `issue_events_dedupe_uq` ON `issue_events` (`issue_id`,`dedupe`);--> statement-breakpoint
CREATE TABLE `issue_labels` (
	`issue_id` text NOT NULL,
	`label_id` text NOT NULL,
	PRIMARY KEY(`issue_id`, `label_id`),
	FOREIGN KEY (`issue_id`) REFERENCES `issues`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`label_id`) REFERENCES `labels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `issue_labels_label_idx` ON `issue_labels` (`label_id`,`issue_id`);--> statement-breakpoint
CREATE TABLE `issues` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`number` integer NOT NULL,
	`title` text NOT NULL,
	`body` text,
	`body_html` text,
	`state` text NOT NULL,
	`close_reason` text,
	`closed_at` integer,
	`closed_by_user_id` text,
	`closed_by` text,
	`author_user_id` text,
	`comments` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`fts_rowid` integer,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `issues_fts_rowid_uq` ON `issues` (`fts_rowid`);--> statement-breakpoint
CREATE UNIQUE INDEX `issues_repo_number_uq` ON `issues` (`repo_id`,`number`);--> statement-breakpoint
CREATE INDEX `issues_repo_state_number_idx` ON `issues` (`repo_id`,`state`,`number`);--> statement-breakpoint
CREATE INDEX `issues_repo_state_updated_idx` ON `issues` (`repo_id`,`state`,`updated_at`,`number`);--> statement-breakpoint
CREATE INDEX `issues_repo_state_comments_idx` ON `issues` (`repo_id`,`state`,`comments`,`number`);--> statement-breakpoint
CREATE INDEX `issues_repo_updated_idx` ON `issues` (`repo_id`,`updated_at`,`number`);--> statement-breakpoint
CREATE INDEX `issues_repo_author_idx` ON `issues` (`repo_id`,`author_user_id`,`number`);--> statement-breakpoint
CREATE INDEX `issues_author_created_idx` ON `issues` (`author_user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `labels` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`color` text NOT NULL,
	`description` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `labels_repo_name_uq` ON `labels` (`repo_id`,`name_key`);--> statement-breakpoint
CREATE TABLE `repo_counters` (
	`repo_id` text PRIMARY KEY NOT NULL,
	`last_number` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `repo_counters` (`repo_id`, `last_number`) SELECT `repo_id`, max(`number`) FROM `changes` GROUP BY `repo_id`;--> statement-breakpoint
CREATE VIRTUAL TABLE `issues_fts` USING fts5(`title`, `body`, content='issues', content_rowid='fts_rowid', tokenize='unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE TRIGGER `issues_fts_ai` AFTER INSERT ON `issues` BEGIN
  UPDATE `issues` SET `fts_rowid` = (SELECT coalesce(max(`fts_rowid`), 0) + 1 FROM `issues`) WHERE `id` = new.`id` AND `fts_rowid` IS NULL;
  INSERT INTO `issues_fts` (rowid, `title`, `body`) SELECT `fts_rowid`, `title`, `body` FROM `issues` WHERE `id` = new.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `issues_fts_ad` AFTER DELETE ON `issues` BEGIN
  INSERT INTO `issues_fts` (`issues_fts`, rowid, `title`, `body`) VALUES ('delete', old.`fts_rowid`, old.`title`, old.`body`);
END;--> statement-breakpoint
CREATE TRIGGER `issues_fts_au` AFTER UPDATE OF `title`, `body` ON `issues` BEGIN
  INSERT INTO `issues_fts` (`issues_fts`, rowid, `title`, `body`) VALUES ('delete', old.`fts_rowid`, old.`title`, old.`body`);
  INSERT INTO `issues_fts` (rowid, `title`, `body`) VALUES (new.`fts_rowid`, new.`title`, new.`body`);
END;
