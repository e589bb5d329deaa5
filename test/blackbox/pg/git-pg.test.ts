// `svc serve` with its metadata in PostgreSQL (SVC_DATABASE_URL of a private test server): the
// shared git smart-HTTP scenarios, the CLI (user-create) and the API on the same database.
import { postgresDatabase } from "../../helpers/postgres.ts";
import { gitScenarios } from "../git/git-scenarios.ts";

gitScenarios("the fs backend, metadata in PostgreSQL", async () => {
  const db = await postgresDatabase();
  return { env: { SVC_DATABASE_URL: db.url }, stop: () => db.drop() };
});
