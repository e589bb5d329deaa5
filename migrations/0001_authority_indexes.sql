CREATE INDEX `grants_user_idx` ON `grants` (`user_id`);--> statement-breakpoint
CREATE INDEX `grants_team_idx` ON `grants` (`team_id`);--> statement-breakpoint
CREATE INDEX `team_members_user_idx` ON `team_members` (`user_id`);