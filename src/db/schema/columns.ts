// Column helpers shared by every table.
import { integer, text } from "drizzle-orm/sqlite-core";

/** The text primary key every entity has. */
export const id = () => text("id").primaryKey();
/** Creation time, epoch milliseconds. */
export const createdAt = () => integer("created_at").notNull();
