// What every node of a several-node installation must share and that is not the metadata proper
// (DECISIONS §5 "Several nodes"): today the SSH host keys, on PostgreSQL only (SQLite keeps them
// as files in the data dir; this table stays empty there). See services/ops/host-keys.ts.
import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./columns.ts";

/** Named secrets shared by every node (`ssh_host_ed25519_key`, `ssh_host_rsa_key`: OpenSSH private keys). */
export const nodeSecrets = sqliteTable("node_secrets", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createdAt: createdAt(),
});
