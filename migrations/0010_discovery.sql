-- Discovery: contributions keyed by day (with per-person day totals and repository lists kept by
-- triggers), metric buckets (binary histograms) replacing per-operation metric rows, audit and
-- follow indexes, and repository search (FTS5). The tables with composite keys are WITHOUT ROWID: their reads are range
-- scans of the key.
CREATE TABLE `metric_buckets` (
	`org_id` text NOT NULL,
	`kind` text NOT NULL,
	`grain` integer NOT NULL,
	`start` integer NOT NULL,
	`count` integer NOT NULL,
	`bytes` integer NOT NULL,
	`ms_sum` integer NOT NULL,
	`hist` blob NOT NULL,
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
CREATE TABLE `contribution_repos` (
	`user_id` text NOT NULL,
	`repo_id` text NOT NULL,
	PRIMARY KEY(`user_id`, `repo_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `contribution_repos_repo_idx` ON `contribution_repos` (`repo_id`);--> statement-breakpoint
CREATE TABLE `contribution_totals` (
	`user_id` text NOT NULL,
	`day` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`user_id`, `day`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
-- The graph's per-person summaries follow `contribution_days` in the transaction that changes it
-- (a credited commit, or a repository's delete cascading to its rows). PostgreSQL: the same
-- triggers in PL/pgSQL, or the upserts written beside the per-day upsert.
CREATE TRIGGER `contribution_days_insert` AFTER INSERT ON `contribution_days` BEGIN
	INSERT INTO `contribution_totals` (`user_id`, `day`, `count`) VALUES (new.`user_id`, new.`day`, new.`count`)
		ON CONFLICT (`user_id`, `day`) DO UPDATE SET `count` = `count` + excluded.`count`;
	INSERT OR IGNORE INTO `contribution_repos` (`user_id`, `repo_id`) VALUES (new.`user_id`, new.`repo_id`);
END;--> statement-breakpoint
CREATE TRIGGER `contribution_days_update` AFTER UPDATE OF `count` ON `contribution_days` BEGIN
	UPDATE `contribution_totals` SET `count` = `count` + new.`count` - old.`count` WHERE `user_id` = new.`user_id` AND `day` = new.`day`;
END;--> statement-breakpoint
CREATE TRIGGER `contribution_days_delete` AFTER DELETE ON `contribution_days` BEGIN
	UPDATE `contribution_totals` SET `count` = `count` - old.`count` WHERE `user_id` = old.`user_id` AND `day` = old.`day`;
END;--> statement-breakpoint
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
CREATE INDEX `pins_repo_idx` ON `pins` (`repo_id`);--> statement-breakpoint
CREATE TABLE `repo_search_docs` (
	`docid` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`repo_id` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `repo_search_docs_repo_id_unique` ON `repo_search_docs` (`repo_id`);--> statement-breakpoint
CREATE INDEX `repos_name_idx` ON `repos` (lower("name"));--> statement-breakpoint
-- Repository search (services/discovery/search.ts): name and description words, kept by triggers
-- in the transaction that writes the repository row. PostgreSQL: a generated tsvector column
-- over name and description with a GIN index replaces the table and its triggers.
CREATE VIRTUAL TABLE `repo_search` USING fts5(name, description, tokenize = 'unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE TRIGGER `repos_search_insert` AFTER INSERT ON `repos` BEGIN
	INSERT INTO `repo_search_docs` (`repo_id`) VALUES (new.`id`);
	INSERT INTO `repo_search` (rowid, name, description) VALUES ((SELECT `docid` FROM `repo_search_docs` WHERE `repo_id` = new.`id`), new.`name`, coalesce(new.`description`, ''));
END;--> statement-breakpoint
CREATE TRIGGER `repos_search_update` AFTER UPDATE OF `name`, `description` ON `repos` BEGIN
	DELETE FROM `repo_search` WHERE rowid = (SELECT `docid` FROM `repo_search_docs` WHERE `repo_id` = old.`id`);
	INSERT INTO `repo_search` (rowid, name, description) VALUES ((SELECT `docid` FROM `repo_search_docs` WHERE `repo_id` = new.`id`), new.`name`, coalesce(new.`description`, ''));
END;--> statement-breakpoint
CREATE TRIGGER `repos_search_delete` AFTER DELETE ON `repos` BEGIN
	DELETE FROM `repo_search` WHERE rowid = (SELECT `docid` FROM `repo_search_docs` WHERE `repo_id` = old.`id`);
	DELETE FROM `repo_search_docs` WHERE `repo_id` = old.`id`;
END;--> statement-breakpoint
INSERT INTO `repo_search_docs` (`repo_id`) SELECT `id` FROM `repos` ORDER BY `created_at`;--> statement-breakpoint
INSERT INTO `repo_search` (rowid, name, description) SELECT d.`docid`, r.`name`, coalesce(r.`description`, '') FROM `repos` r JOIN `repo_search_docs` d ON d.`repo_id` = r.`id`;
