DROP INDEX `runner_groups_default_uq`;--> statement-breakpoint
CREATE UNIQUE INDEX `runner_groups_default_uq` ON `runner_groups` (`org_id`) WHERE "runner_groups"."is_default";