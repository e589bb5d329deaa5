CREATE TABLE "repo_redirects" (
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"repo_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "repo_redirects_org_id_name_pk" PRIMARY KEY("org_id","name")
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "avatar" text;--> statement-breakpoint
ALTER TABLE "repos" ADD COLUMN "active_at" bigint;--> statement-breakpoint
ALTER TABLE "repo_redirects" ADD CONSTRAINT "repo_redirects_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repo_redirects" ADD CONSTRAINT "repo_redirects_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "repo_redirects_org_name_uq" ON "repo_redirects" USING btree ("org_id",lower("name"));--> statement-breakpoint
CREATE INDEX "repo_redirects_repo_idx" ON "repo_redirects" USING btree ("repo_id");--> statement-breakpoint
CREATE INDEX "repos_public_active_idx" ON "repos" USING btree ("public","active_at");--> statement-breakpoint
UPDATE "repos" SET "active_at" = "created_at" WHERE "active_at" IS NULL;--> statement-breakpoint
-- The shared fact epoch (0001) follows every column of repos but active_at: a push moves active_at
-- (explore's order), which no cached fact reads, and must not empty every node's fact cache.
CREATE OR REPLACE TRIGGER svc_fact_epoch AFTER INSERT OR DELETE OR UPDATE OF id, org_id, name, kind, public, default_branch, description, homepage, origin_url, origin_provider, origin_installation, last_sync_at, last_synced_commit, sync_error, fork_parent_id, fork_state, lfs_network_id, created_at OR TRUNCATE ON repos FOR EACH STATEMENT EXECUTE FUNCTION svc_fact_epoch_bump();