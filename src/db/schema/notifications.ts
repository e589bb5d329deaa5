// Notifications: who takes part in a thread, what happened in it, each person's inbox, their mail
// setting and the one-click unsubscribe tokens their mails carry.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";
import { users } from "./people.ts";
import { repos } from "./repos.ts";

/** What a notification is about. */
export type SubjectKind = "change" | "issue" | "run";

/**
 * The people taking part in a thread and their strongest reason (author, review_requested, assign,
 * mention, review, comment). `reason` null with `muted` = a person who only muted the thread.
 */
export const threadParticipants = sqliteTable(
  "thread_participants",
  {
    subjectKind: text("subject_kind").$type<SubjectKind>().notNull(),
    subjectId: text("subject_id").notNull(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    reason: text("reason"),
    muted: integer("muted", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.subjectKind, t.subjectId, t.userId] }), index("thread_participants_user_idx").on(t.userId)],
);

/** One thing that happened in a thread (a comment, a review with its comments, a push, a landing). */
export const threadActivity = sqliteTable(
  "thread_activity",
  {
    id: id(),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    orgId: text("org_id").notNull(),
    subjectKind: text("subject_kind").$type<SubjectKind>().notNull(),
    subjectId: text("subject_id").notNull(),
    subjectNumber: integer("subject_number"),
    title: text("title").notNull(),
    kind: text("kind").notNull(),
    actorUserId: text("actor_user_id"),
    summary: text("summary", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("thread_activity_subject_idx").on(t.subjectKind, t.subjectId, t.createdAt, t.id), index("thread_activity_created_idx").on(t.createdAt)],
);

/** A person's inbox: one row per thread, unread again on new activity. */
export const notifications = sqliteTable(
  "notifications",
  {
    id: id(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    repoId: text("repo_id")
      .notNull()
      .references(() => repos.id, { onDelete: "cascade" }),
    subjectKind: text("subject_kind").$type<SubjectKind>().notNull(),
    subjectId: text("subject_id").notNull(),
    subjectNumber: integer("subject_number"),
    title: text("title").notNull(),
    reason: text("reason").notNull(),
    unread: integer("unread", { mode: "boolean" }).notNull().default(true),
    lastActivityId: text("last_activity_id").notNull(),
    lastActivityAt: integer("last_activity_at").notNull(),
    /** created_at of the last activity put in a mail (activities after it are not mailed yet). */
    mailedThrough: integer("mailed_through").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("notifications_subject_uq").on(t.userId, t.subjectKind, t.subjectId),
    index("notifications_user_idx").on(t.userId, t.updatedAt, t.id),
    index("notifications_unread_idx").on(t.userId, t.unread, t.repoId),
  ],
);

/** A person's notification settings (absent = defaults: mail on). */
export const notificationPrefs = sqliteTable("notification_prefs", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  email: integer("email", { mode: "boolean" }).notNull().default(true),
  updatedAt: integer("updated_at").notNull(),
});

/** Unsubscribe links in notification mail: sha256 of the token, never the token. */
export const mailUnsubscribes = sqliteTable(
  "mail_unsubscribes",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    repoId: text("repo_id"),
    subjectKind: text("subject_kind").$type<SubjectKind>(),
    subjectId: text("subject_id"),
    createdAt: createdAt(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("mail_unsubscribes_expiry_idx").on(t.expiresAt)],
);
