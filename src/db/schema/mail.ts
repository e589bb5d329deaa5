// The durable mail outbox.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";

export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: id(),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    /** Bodies are cleared once delivered or given up on: they may carry single-use links. */
    textBody: text("text_body").notNull(),
    htmlBody: text("html_body").notNull(),
    /** Extra headers (List-Unsubscribe, List-Id, Auto-Submitted); cleared with the bodies. */
    headers: text("headers", { mode: "json" }).$type<Record<string, string> | null>(),
    attempts: integer("attempts").notNull().default(0),
    runAt: integer("run_at").notNull(),
    lockedUntil: integer("locked_until"),
    lastError: text("last_error"),
    sentAt: integer("sent_at"),
    failedAt: integer("failed_at"),
    createdAt: createdAt(),
  },
  (t) => [index("mail_outbox_due_idx").on(t.sentAt, t.failedAt, t.runAt)],
);
