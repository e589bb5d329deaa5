// The PostgreSQL connection: one Bun.sql pool (SVC_DATABASE_POOL connections at most) behind
// drizzle-orm/bun-sql, typed as the SQLite handle store code is written against (row types are
// the same by the column map of src/db/pg/schema.ts; the tables a pg handle uses come from
// tables(q)). Bun.sql was chosen by measurement (bench/README "PostgreSQL drivers": fastest on
// reads, LISTEN that reconnects by itself, nothing to install).
import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { DatabaseConfig } from "../../config.ts";
import type { Db } from "../client.ts";
import { PgDatabase } from "./database.ts";

export interface PgClient {
  db: PgDatabase;
  /** The pool (migrations, raw statements, the LISTEN connection's settings). */
  sql: SQL;
  close(): Promise<void>;
}

/** Opens the pool; no connection is made until the first query. */
export function openPg(config: DatabaseConfig): PgClient {
  // `database` explicitly: Bun.sql lets PGDATABASE win over the URL's database.
  const client = new SQL({ url: config.url, database: config.name, max: config.pool, idleTimeout: 60, connectionTimeout: 10 });
  const handle = drizzle({ client }) as unknown as Db;
  return { db: new PgDatabase(handle), sql: client, close: () => client.close() };
}
