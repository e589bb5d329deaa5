-- The contribution graph reads one row per active day (services/discovery/graph-json.ts): a day's
-- per-repository counts packed into a blob of 8-byte entries (slot, commits; big-endian uint32s),
-- where a slot is a small number a person's repository gets when it is first credited. A year is
-- 365 short rows instead of tens of thousands of (day, repository) rows. Replaces
-- contribution_days, contribution_totals and contribution_repos (and their triggers): a day's
-- total is the sum of its entries whose repository still exists, so nothing has to follow a
-- repository's delete; its slot row goes with it (cascade) and its entries are never read again.
-- PostgreSQL: the same tables, bytea for the blob.
CREATE TABLE `contribution_counts` (
	`user_id` text NOT NULL,
	`day` integer NOT NULL,
	`counts` blob NOT NULL,
	PRIMARY KEY(`user_id`, `day`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `contribution_people` (
	`user_id` text PRIMARY KEY NOT NULL,
	`next_slot` integer NOT NULL,
	`version` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `contribution_slots` (
	`user_id` text NOT NULL,
	`repo_id` text NOT NULL,
	`slot` integer NOT NULL,
	PRIMARY KEY(`user_id`, `repo_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `contribution_slots_repo_idx` ON `contribution_slots` (`repo_id`);--> statement-breakpoint
-- Existing counts move over: slots numbered per person in repository id order, one blob per day.
INSERT INTO `contribution_slots` (`user_id`, `repo_id`, `slot`)
	SELECT `user_id`, `repo_id`, row_number() OVER (PARTITION BY `user_id` ORDER BY `repo_id`) - 1 FROM `contribution_repos`;--> statement-breakpoint
INSERT INTO `contribution_people` (`user_id`, `next_slot`, `version`)
	SELECT `user_id`, count(*), 1 FROM `contribution_slots` GROUP BY `user_id`;--> statement-breakpoint
INSERT INTO `contribution_counts` (`user_id`, `day`, `counts`)
	SELECT d.`user_id`, d.`day`, unhex(group_concat(printf('%08X%08X', s.`slot`, d.`count`), ''))
	FROM `contribution_days` d JOIN `contribution_slots` s ON s.`user_id` = d.`user_id` AND s.`repo_id` = d.`repo_id`
	WHERE d.`count` > 0 GROUP BY d.`user_id`, d.`day`;--> statement-breakpoint
DROP TABLE `contribution_days`;--> statement-breakpoint
DROP TABLE `contribution_repos`;--> statement-breakpoint
DROP TABLE `contribution_totals`;
