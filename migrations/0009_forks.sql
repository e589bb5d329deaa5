ALTER TABLE `packs` ADD `storage_repo_id` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `packs` SET `storage_repo_id` = `repo_id`;--> statement-breakpoint
CREATE INDEX `packs_storage_name_idx` ON `packs` (`storage_repo_id`,`name`);
