CREATE TABLE "ci_schedules" (
	"repo_id" text NOT NULL,
	"workflow" text NOT NULL,
	"position" bigint NOT NULL,
	"cron" text NOT NULL,
	"commit" text NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "ci_schedules_repo_id_workflow_position_pk" PRIMARY KEY("repo_id","workflow","position")
);
--> statement-breakpoint
CREATE TABLE "ci_secret_repos" (
	"secret_id" text NOT NULL,
	"repo_id" text NOT NULL,
	CONSTRAINT "ci_secret_repos_secret_id_repo_id_pk" PRIMARY KEY("secret_id","repo_id")
);
--> statement-breakpoint
CREATE TABLE "ci_secrets" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"repo_id" text,
	"name" text NOT NULL,
	"sealed" text NOT NULL,
	"visibility" text DEFAULT 'all' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"updated_by" text
);
--> statement-breakpoint
CREATE TABLE "ci_variable_repos" (
	"variable_id" text NOT NULL,
	"repo_id" text NOT NULL,
	CONSTRAINT "ci_variable_repos_variable_id_repo_id_pk" PRIMARY KEY("variable_id","repo_id")
);
--> statement-breakpoint
CREATE TABLE "ci_variables" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"repo_id" text,
	"name" text NOT NULL,
	"value" text NOT NULL,
	"visibility" text DEFAULT 'all' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"updated_by" text
);
--> statement-breakpoint
ALTER TABLE "job_log_chunks" ADD COLUMN "masked" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "attempt" bigint DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "inputs" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "concurrency_group" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_in_progress" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "schedule_slot" bigint;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "trusted" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "waiting" text;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "attempt" bigint DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "workflow_job" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "needs" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "condition" text;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "skip_reason" text;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "outputs" jsonb;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "concurrency_group" text;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "reused_from" text;--> statement-breakpoint
ALTER TABLE "workflow_jobs" ADD COLUMN "plan" jsonb;--> statement-breakpoint
ALTER TABLE "ci_schedules" ADD CONSTRAINT "ci_schedules_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_secret_repos" ADD CONSTRAINT "ci_secret_repos_secret_id_ci_secrets_id_fk" FOREIGN KEY ("secret_id") REFERENCES "public"."ci_secrets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_secret_repos" ADD CONSTRAINT "ci_secret_repos_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_secrets" ADD CONSTRAINT "ci_secrets_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_secrets" ADD CONSTRAINT "ci_secrets_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_variable_repos" ADD CONSTRAINT "ci_variable_repos_variable_id_ci_variables_id_fk" FOREIGN KEY ("variable_id") REFERENCES "public"."ci_variables"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_variable_repos" ADD CONSTRAINT "ci_variable_repos_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_variables" ADD CONSTRAINT "ci_variables_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_variables" ADD CONSTRAINT "ci_variables_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ci_secret_repos_repo_idx" ON "ci_secret_repos" USING btree ("repo_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ci_secrets_scope_name_uq" ON "ci_secrets" USING btree ("org_id",coalesce("repo_id", ''),"name");--> statement-breakpoint
CREATE INDEX "ci_secrets_repo_idx" ON "ci_secrets" USING btree ("repo_id");--> statement-breakpoint
CREATE INDEX "ci_variable_repos_repo_idx" ON "ci_variable_repos" USING btree ("repo_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ci_variables_scope_name_uq" ON "ci_variables" USING btree ("org_id",coalesce("repo_id", ''),"name");--> statement-breakpoint
CREATE INDEX "ci_variables_repo_idx" ON "ci_variables" USING btree ("repo_id");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_schedule_uq" ON "runs" USING btree ("repo_id","workflow","schedule_slot") WHERE "runs"."schedule_slot" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "runs_concurrency_idx" ON "runs" USING btree ("repo_id","concurrency_group","state") WHERE "runs"."concurrency_group" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "workflow_jobs_attempt_idx" ON "workflow_jobs" USING btree ("run_id","attempt");--> statement-breakpoint
CREATE INDEX "workflow_jobs_concurrency_idx" ON "workflow_jobs" USING btree ("repo_id","concurrency_group","state") WHERE "workflow_jobs"."concurrency_group" IS NOT NULL;