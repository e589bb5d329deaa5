CREATE TABLE `lfs_locks` (
	`id` text PRIMARY KEY NOT NULL,
	`repo_id` text NOT NULL,
	`path` text NOT NULL,
	`owner_id` text NOT NULL,
	`ref_name` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`repo_id`) REFERENCES `repos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `lfs_locks_repo_path_uq` ON `lfs_locks` (`repo_id`,`path`);--> statement-breakpoint
CREATE INDEX `lfs_locks_repo_created_idx` ON `lfs_locks` (`repo_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `lfs_objects` (
	`network_id` text NOT NULL,
	`oid` text NOT NULL,
	`size` integer NOT NULL,
	`repo_id` text,
	`org_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`network_id`, `oid`)
);
--> statement-breakpoint
CREATE INDEX `lfs_objects_repo_idx` ON `lfs_objects` (`repo_id`);--> statement-breakpoint
CREATE INDEX `lfs_objects_org_idx` ON `lfs_objects` (`org_id`);--> statement-breakpoint
ALTER TABLE `repos` ADD `lfs_network_id` text;