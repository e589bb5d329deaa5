CREATE TABLE "change_comments" (
	"id" text PRIMARY KEY NOT NULL,
	"change_id" text NOT NULL,
	"repo_id" text NOT NULL,
	"author_user_id" text,
	"state" text DEFAULT 'published' NOT NULL,
	"body" text,
	"body_html" text,
	"render_version" bigint DEFAULT 0 NOT NULL,
	"thread_id" text NOT NULL,
	"in_reply_to" text,
	"review_id" text,
	"patchset" bigint NOT NULL,
	"path" text,
	"side" text,
	"line" bigint,
	"start_line" bigint,
	"commit_oid" text,
	"blob_oid" text,
	"anchor_text" text,
	"context_text" text,
	"outdated" boolean DEFAULT false NOT NULL,
	"anchored_patchset" bigint NOT NULL,
	"cur_line" bigint,
	"cur_start_line" bigint,
	"suggestion" text,
	"applied_commit" text,
	"resolved" boolean DEFAULT false NOT NULL,
	"resolved_by_user_id" text,
	"resolved_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"edited_at" bigint
);
--> statement-breakpoint
CREATE TABLE "change_reviewers" (
	"change_id" text NOT NULL,
	"user_id" text NOT NULL,
	"requested_by_user_id" text,
	"requested_at" bigint NOT NULL,
	CONSTRAINT "change_reviewers_change_id_user_id_pk" PRIMARY KEY("change_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "change_reviews" (
	"id" text PRIMARY KEY NOT NULL,
	"change_id" text NOT NULL,
	"repo_id" text NOT NULL,
	"author_user_id" text,
	"verdict" text NOT NULL,
	"body" text,
	"body_html" text,
	"render_version" bigint DEFAULT 0 NOT NULL,
	"patchset" bigint NOT NULL,
	"head" text NOT NULL,
	"dismissed" boolean DEFAULT false NOT NULL,
	"dismissed_reason" text,
	"dismissed_by_user_id" text,
	"dismissed_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mail_unsubscribes" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"repo_id" text,
	"subject_kind" text,
	"subject_id" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_prefs" (
	"user_id" text PRIMARY KEY NOT NULL,
	"email" boolean DEFAULT true NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"repo_id" text NOT NULL,
	"subject_kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"subject_number" bigint,
	"title" text NOT NULL,
	"reason" text NOT NULL,
	"unread" boolean DEFAULT true NOT NULL,
	"last_activity_id" text NOT NULL,
	"last_activity_at" bigint NOT NULL,
	"mailed_through" bigint DEFAULT 0 NOT NULL,
	"updated_at" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "thread_activity" (
	"id" text PRIMARY KEY NOT NULL,
	"repo_id" text NOT NULL,
	"org_id" text NOT NULL,
	"subject_kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"subject_number" bigint,
	"title" text NOT NULL,
	"kind" text NOT NULL,
	"actor_user_id" text,
	"summary" jsonb NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "thread_participants" (
	"subject_kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"repo_id" text NOT NULL,
	"user_id" text NOT NULL,
	"reason" text,
	"muted" boolean DEFAULT false NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "thread_participants_subject_kind_subject_id_user_id_pk" PRIMARY KEY("subject_kind","subject_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "protections" ADD COLUMN "required_approvals" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "protections" ADD COLUMN "dismiss_stale_approvals" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "mail_outbox" ADD COLUMN "headers" jsonb;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "redelivery_of" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "events" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "actor_user_id" text;--> statement-breakpoint
ALTER TABLE "change_comments" ADD CONSTRAINT "change_comments_change_id_changes_id_fk" FOREIGN KEY ("change_id") REFERENCES "public"."changes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_reviewers" ADD CONSTRAINT "change_reviewers_change_id_changes_id_fk" FOREIGN KEY ("change_id") REFERENCES "public"."changes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_reviewers" ADD CONSTRAINT "change_reviewers_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_reviews" ADD CONSTRAINT "change_reviews_change_id_changes_id_fk" FOREIGN KEY ("change_id") REFERENCES "public"."changes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mail_unsubscribes" ADD CONSTRAINT "mail_unsubscribes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_prefs" ADD CONSTRAINT "notification_prefs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "thread_activity" ADD CONSTRAINT "thread_activity_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "thread_participants" ADD CONSTRAINT "thread_participants_repo_id_repos_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."repos"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "thread_participants" ADD CONSTRAINT "thread_participants_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "change_comments_change_idx" ON "change_comments" USING btree ("change_id","created_at","id");--> statement-breakpoint
CREATE INDEX "change_comments_thread_idx" ON "change_comments" USING btree ("thread_id","created_at");--> statement-breakpoint
CREATE INDEX "change_comments_review_idx" ON "change_comments" USING btree ("review_id");--> statement-breakpoint
CREATE INDEX "change_comments_author_idx" ON "change_comments" USING btree ("change_id","author_user_id","state");--> statement-breakpoint
CREATE INDEX "change_comments_anchor_idx" ON "change_comments" USING btree ("change_id","anchored_patchset") WHERE state = 'published' AND path IS NOT NULL;--> statement-breakpoint
CREATE INDEX "change_reviewers_user_idx" ON "change_reviewers" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "change_reviews_change_idx" ON "change_reviews" USING btree ("change_id","created_at","id");--> statement-breakpoint
CREATE INDEX "change_reviews_person_idx" ON "change_reviews" USING btree ("change_id","author_user_id","created_at");--> statement-breakpoint
CREATE INDEX "mail_unsubscribes_expiry_idx" ON "mail_unsubscribes" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_subject_uq" ON "notifications" USING btree ("user_id","subject_kind","subject_id");--> statement-breakpoint
CREATE INDEX "notifications_user_idx" ON "notifications" USING btree ("user_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "notifications_unread_idx" ON "notifications" USING btree ("user_id","unread","repo_id");--> statement-breakpoint
CREATE INDEX "thread_activity_subject_idx" ON "thread_activity" USING btree ("subject_kind","subject_id","created_at","id");--> statement-breakpoint
CREATE INDEX "thread_activity_created_idx" ON "thread_activity" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "thread_participants_user_idx" ON "thread_participants" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "subscriptions_repo_level_idx" ON "subscriptions" USING btree ("repo_id","level");