CREATE TABLE "lfs_locks" (
	"id" text PRIMARY KEY NOT NULL,
	"repo_id" text NOT NULL,
	"path" text NOT NULL,
	"owner_id" text NOT NULL,
	"ref_name" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "lfs_objects" (
	"network_id" text NOT NULL,
	"oid" text NOT NULL,
	"size" bigint NOT NULL,
	"repo_id" text,
	"org_id" text,
	"created_at" bigint NOT NULL,
	CONSTRAINT "lfs_objects_network_id_oid_pk" PRIMARY KEY("network_id","oid")
);
--> statement-breakpoint
ALTER TABLE "repos" ADD COLUMN "lfs_network_id" text;--> statement-breakpoint
ALTER TABLE "lfs_locks" ADD CONSTRAINT "lfs_locks_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "lfs_locks" ADD CONSTRAINT "lfs_locks_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "lfs_locks_repo_path_uq" ON "lfs_locks" USING btree ("repo_id","path");--> statement-breakpoint
CREATE INDEX "lfs_locks_repo_created_idx" ON "lfs_locks" USING btree ("repo_id","created_at","id");--> statement-breakpoint
CREATE INDEX "lfs_objects_repo_idx" ON "lfs_objects" USING btree ("repo_id");--> statement-breakpoint
CREATE INDEX "lfs_objects_org_idx" ON "lfs_objects" USING btree ("org_id");