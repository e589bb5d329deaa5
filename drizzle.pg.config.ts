import { defineConfig } from "drizzle-kit";

// PostgreSQL migrations, generated from the same definition as the SQLite ones (src/db/schema,
// derived into pg-core tables by src/db/pg/schema.ts). `npm run db:generate` runs both configs.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/pg/kit-schema.ts",
  out: "./migrations/pg",
});
