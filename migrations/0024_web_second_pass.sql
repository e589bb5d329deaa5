CREATE TABLE `repo_redirects` (
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`repo_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`org_id`, `name`),
	FOREIGN KEY (`org_id`) REFERENCES `orgs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `repo_redirects_org_name_uq` ON `repo_redirects` (`org_id`,lower("name"));--> statement-breakpoint
CREATE INDEX `repo_redirects_repo_idx` ON `repo_redirects` (`repo_id`);--> statement-breakpoint
ALTER TABLE `users` ADD `avatar` text;--> statement-breakpoint
ALTER TABLE `repos` ADD `active_at` integer;--> statement-breakpoint
CREATE INDEX `repos_public_active_idx` ON `repos` (`public`,`active_at`);--> statement-breakpoint
UPDATE `repos` SET `active_at` = `created_at` WHERE `active_at` IS NULL;