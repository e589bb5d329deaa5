// drizzle-kit's view of the PostgreSQL schema (drizzle.pg.config.ts): the derived tables as
// top-level exports, which is how drizzle-kit finds tables in a schema module.
import { pgCoreTables } from "./schema.ts";

module.exports = pgCoreTables;
