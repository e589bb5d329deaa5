CREATE TABLE "issue_assignees" (
	"issue_id" text NOT NULL,
	"user_id" text NOT NULL,
	CONSTRAINT "issue_assignees_issue_id_user_id_pk" PRIMARY KEY("issue_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "issue_comments" (
	"id" text PRIMARY KEY NOT NULL,
	"issue_id" text NOT NULL,
	"repo_id" text NOT NULL,
	"author_user_id" text,
	"body" text,
	"body_html" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"edited_at" bigint,
	"deleted_at" bigint
);
--> statement-breakpoint
CREATE TABLE "issue_events" (
	"id" text PRIMARY KEY NOT NULL,
	"issue_id" text NOT NULL,
	"repo_id" text NOT NULL,
	"kind" text NOT NULL,
	"actor_user_id" text,
	"data" jsonb NOT NULL,
	"dedupe" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "issue_labels" (
	"issue_id" text NOT NULL,
	"label_id" text NOT NULL,
	CONSTRAINT "issue_labels_issue_id_label_id_pk" PRIMARY KEY("issue_id","label_id")
);
--> statement-breakpoint
CREATE TABLE "issues" (
	"id" text PRIMARY KEY NOT NULL,
	"repo_id" text NOT NULL,
	"number" bigint NOT NULL,
	"title" text NOT NULL,
	"body" text,
	"body_html" text,
	"state" text NOT NULL,
	"close_reason" text,
	"closed_at" bigint,
	"closed_by_user_id" text,
	"closed_by" jsonb,
	"author_user_id" text,
	"comments" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"fts_rowid" bigint
);
--> statement-breakpoint
CREATE TABLE "labels" (
	"id" text PRIMARY KEY NOT NULL,
	"repo_id" text NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"color" text NOT NULL,
	"description" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "repo_counters" (
	"repo_id" text PRIMARY KEY NOT NULL,
	"last_number" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "issue_assignees" ADD CONSTRAINT "issue_assignees_issue_id_issues_id_fk" FOREIGN KEY ("issue_id") REFERENCES "public"."issues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issue_assignees" ADD CONSTRAINT "issue_assignees_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issue_comments" ADD CONSTRAINT "issue_comments_issue_id_issues_id_fk" FOREIGN KEY ("issue_id") REFERENCES "public"."issues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issue_events" ADD CONSTRAINT "issue_events_issue_id_issues_id_fk" FOREIGN KEY ("issue_id") REFERENCES "public"."issues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issue_labels" ADD CONSTRAINT "issue_labels_issue_id_issues_id_fk" FOREIGN KEY ("issue_id") REFERENCES "public"."issues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issue_labels" ADD CONSTRAINT "issue_labels_label_id_labels_id_fk" FOREIGN KEY ("label_id") REFERENCES "public"."labels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "issues" ADD CONSTRAINT "issues_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "labels" ADD CONSTRAINT "labels_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repo_counters" ADD CONSTRAINT "repo_counters_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "issue_assignees_user_idx" ON "issue_assignees" USING btree ("user_id","issue_id");--> statement-breakpoint
CREATE INDEX "issue_comments_issue_idx" ON "issue_comments" USING btree ("issue_id","created_at","id");--> statement-breakpoint
CREATE INDEX "issue_comments_author_idx" ON "issue_comments" USING btree ("author_user_id","created_at");--> statement-breakpoint
CREATE INDEX "issue_events_issue_idx" ON "issue_events" USING btree ("issue_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "issue_events_dedupe_uq" ON "issue_events" USING btree ("issue_id","dedupe");--> statement-breakpoint
CREATE INDEX "issue_labels_label_idx" ON "issue_labels" USING btree ("label_id","issue_id");--> statement-breakpoint
CREATE UNIQUE INDEX "issues_fts_rowid_uq" ON "issues" USING btree ("fts_rowid");--> statement-breakpoint
CREATE UNIQUE INDEX "issues_repo_number_uq" ON "issues" USING btree ("repo_id","number");--> statement-breakpoint
CREATE INDEX "issues_repo_state_number_idx" ON "issues" USING btree ("repo_id","state","number");--> statement-breakpoint
CREATE INDEX "issues_repo_state_updated_idx" ON "issues" USING btree ("repo_id","state","updated_at","number");--> statement-breakpoint
CREATE INDEX "issues_repo_state_comments_idx" ON "issues" USING btree ("repo_id","state","comments","number");--> statement-breakpoint
CREATE INDEX "issues_repo_updated_idx" ON "issues" USING btree ("repo_id","updated_at","number");--> statement-breakpoint
CREATE INDEX "issues_repo_author_idx" ON "issues" USING btree ("repo_id","author_user_id","number");--> statement-breakpoint
CREATE INDEX "issues_author_created_idx" ON "issues" USING btree ("author_user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "labels_repo_name_uq" ON "labels" USING btree ("repo_id","name_key");--> statement-breakpoint
INSERT INTO "repo_counters" ("repo_id", "last_number") SELECT "repo_id", max("number") FROM "changes" GROUP BY "repo_id";--> statement-breakpoint
CREATE INDEX "issues_search_idx" ON "issues" USING gin (to_tsvector('simple', "title" || ' ' || coalesce("body", '')));
