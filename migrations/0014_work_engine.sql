CREATE TABLE `job_schedules` (
	`name` text PRIMARY KEY NOT NULL,
	`last_slot` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `jobs` ADD `key` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `unique_key` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `lease_token` text;--> statement-breakpoint
CREATE INDEX `jobs_claim_idx` ON `jobs` (`kind`,`run_at`) WHERE done_at IS NULL;--> statement-breakpoint
CREATE INDEX `jobs_key_idx` ON `jobs` (`key`,`seq`) WHERE done_at IS NULL AND key IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_unique_uq` ON `jobs` (`kind`,`unique_key`) WHERE done_at IS NULL AND unique_key IS NOT NULL;--> statement-breakpoint
-- Backfill (by hand): work pending at the upgrade keeps running on the engine (services/jobs).
-- Keys and unique values as the kinds compute them (services/*: jobKind(...)).
UPDATE `jobs` SET `key` = 'repo:' || json_extract(`payload`, '$.repoId') WHERE `done_at` IS NULL AND `kind` IN ('repo.compact', 'repo.gc');--> statement-breakpoint
UPDATE `jobs` SET `key` = 'mirror:' || json_extract(`payload`, '$.repoId') WHERE `done_at` IS NULL AND `kind` = 'mirror.sync';--> statement-breakpoint
UPDATE `jobs` SET `key` = 'repo:' || json_extract(`payload`, '$.forkId') WHERE `done_at` IS NULL AND `kind` = 'repo.fork';--> statement-breakpoint
UPDATE `jobs` SET `key` = 'ci:' || json_extract(`payload`, '$.repoId') || ':' || json_extract(`payload`, '$.ref') WHERE `done_at` IS NULL AND `kind` = 'ci.trigger';--> statement-breakpoint
UPDATE `jobs` SET `key` = 'org:' || json_extract(`payload`, '$.orgId') WHERE `done_at` IS NULL AND `kind` = 'billing.seats';--> statement-breakpoint
-- A key's rows run in the order they were queued.
UPDATE `jobs` SET `seq` = (
	SELECT r.`n` FROM (SELECT `id`, row_number() OVER (PARTITION BY `key` ORDER BY `created_at`, `run_at`, `id`) AS `n` FROM `jobs` WHERE `done_at` IS NULL AND `key` IS NOT NULL) r WHERE r.`id` = `jobs`.`id`
) WHERE `done_at` IS NULL AND `key` IS NOT NULL;--> statement-breakpoint
UPDATE `jobs` SET `unique_key` = substr(`key`, instr(`key`, ':') + 1) WHERE `id` IN (
	SELECT min(`id`) FROM `jobs` WHERE `done_at` IS NULL AND `kind` IN ('repo.compact', 'repo.gc', 'billing.seats') GROUP BY `kind`, `key`
);--> statement-breakpoint
-- Webhook deliveries: one job per pending delivery, the delivery's id, the hook's order.
INSERT INTO `jobs` (`id`, `kind`, `payload`, `run_at`, `attempts`, `locked_until`, `key`, `seq`, `created_at`)
	SELECT `id`, 'webhook.deliver', json_object('deliveryId', `id`, 'webhookId', `webhook_id`), `next_attempt_at`, `attempts`, `lease_until`, 'webhook:' || `webhook_id`, `seq`, `created_at`
	FROM `webhook_deliveries` WHERE `state` = 'pending';--> statement-breakpoint
-- The mail outbox: one job per message neither sent nor given up, the message's id.
INSERT INTO `jobs` (`id`, `kind`, `payload`, `run_at`, `attempts`, `locked_until`, `created_at`)
	SELECT `id`, 'mail.send', json_object('outboxId', `id`), `run_at`, `attempts`, `locked_until`, `created_at`
	FROM `mail_outbox` WHERE `sent_at` IS NULL AND `failed_at` IS NULL;--> statement-breakpoint
-- The lander: one job per target branch with queued changes.
INSERT INTO `jobs` (`id`, `kind`, `payload`, `run_at`, `key`, `seq`, `unique_key`, `created_at`)
	SELECT lower(hex(randomblob(13))), 'change.land', json_object('repoId', `repo_id`, 'target', `target`), max(`queued_at`), 'land:' || `repo_id` || ':' || `target`, 1, `repo_id` || ':' || `target`, max(`queued_at`)
	FROM `changes` WHERE `state` = 'queued' GROUP BY `repo_id`, `target`;
