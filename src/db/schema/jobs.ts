// Durable background work.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, id } from "./columns.ts";

export const jobs = sqliteTable("jobs", {
  id: id(),
  kind: text("kind").notNull(),
  payload: text("payload", { mode: "json" }).notNull(),
  runAt: integer("run_at").notNull(),
  attempts: integer("attempts").notNull().default(0),
  lockedUntil: integer("locked_until"),
  lastError: text("last_error"),
  doneAt: integer("done_at"),
  createdAt: createdAt(),
}, (t) => [index("jobs_due_idx").on(t.doneAt, t.runAt)]);
