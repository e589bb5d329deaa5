CREATE TABLE `billing_events` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`type` text NOT NULL,
	`provider_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `billing_events_org_idx` ON `billing_events` (`org_id`,`received_at`);--> statement-breakpoint
ALTER TABLE `orgs` ADD `billing_event_at` integer;--> statement-breakpoint
CREATE INDEX `orgs_provider_customer_idx` ON `orgs` (`provider_customer_id`);