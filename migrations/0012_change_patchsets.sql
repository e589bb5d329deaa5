CREATE TABLE `change_patchsets` (
	`change_id` text NOT NULL,
	`patchset` integer NOT NULL,
	`head` text NOT NULL,
	`base` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`change_id`, `patchset`),
	FOREIGN KEY (`change_id`) REFERENCES `changes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `change_patchsets` (`change_id`, `patchset`, `head`, `base`, `created_at`) SELECT `id`, `patchset`, `head`, `base`, `updated_at` FROM `changes` WHERE `head` IS NOT NULL;
