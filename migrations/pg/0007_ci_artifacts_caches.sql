CREATE TABLE "ci_artifacts" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"repo_id" text NOT NULL,
	"org_id" text NOT NULL,
	"job_id" text,
	"attempt" bigint DEFAULT 1 NOT NULL,
	"name" text NOT NULL,
	"size" bigint NOT NULL,
	"sha256" text,
	"key" text NOT NULL,
	"state" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ci_caches" (
	"id" text PRIMARY KEY NOT NULL,
	"repo_id" text NOT NULL,
	"org_id" text NOT NULL,
	"scope" text NOT NULL,
	"cache_key" text NOT NULL,
	"version" text NOT NULL,
	"size" bigint NOT NULL,
	"key" text NOT NULL,
	"state" text NOT NULL,
	"job_id" text,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ci_artifacts" ADD CONSTRAINT "ci_artifacts_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ci_caches" ADD CONSTRAINT "ci_caches_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ci_artifacts_run_name_uq" ON "ci_artifacts" USING btree ("run_id","name");--> statement-breakpoint
CREATE INDEX "ci_artifacts_repo_idx" ON "ci_artifacts" USING btree ("repo_id");--> statement-breakpoint
CREATE INDEX "ci_artifacts_expiry_idx" ON "ci_artifacts" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "ci_caches_entry_uq" ON "ci_caches" USING btree ("repo_id","scope","cache_key","version");--> statement-breakpoint
CREATE INDEX "ci_caches_repo_used_idx" ON "ci_caches" USING btree ("repo_id","last_used_at");--> statement-breakpoint
CREATE INDEX "ci_caches_used_idx" ON "ci_caches" USING btree ("last_used_at");