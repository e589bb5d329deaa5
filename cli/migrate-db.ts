// `svc migrate-db --to postgres://…` (DECISIONS §5 "Several nodes"; services/ops/migrate-db.ts
// does the work): prints each table's counts on both sides, then what to set next.
import type { Config } from "../src/config.ts";
import { ConfigError } from "../src/config.ts";
import { AppError } from "../src/errors.ts";
import { migrateDb, pgTarget } from "../src/services/ops/migrate-db.ts";
import { paint } from "./tty.ts";

/** Runs the command; answers the exit code (0 done, 1 refused or failed, 2 a bad setting or URL). */
export async function runMigrateDb(config: Config, rawTo: string): Promise<number> {
  const err = (why: string) => process.stderr.write(`${paint(process.stderr).red("svc:")} ${why}\n`);
  let result: Awaited<ReturnType<typeof migrateDb>>;
  try {
    const to = pgTarget(rawTo);
    result = await migrateDb(config, to, {
      onTable: (r) => {
        if (process.stderr.isTTY) process.stderr.write(`\rcopied ${r.table} (${r.rows})\x1b[K`);
      },
    });
    if (process.stderr.isTTY) process.stderr.write("\r\x1b[K");
  } catch (error) {
    if (process.stderr.isTTY) process.stderr.write("\r\x1b[K");
    if (error instanceof ConfigError) {
      err(`configuration error: ${error.message}`);
      return 2;
    }
    if (error instanceof AppError) {
      err(error.message);
      const checks = (error as { checks?: { table: string; source: number; target: number; ok: boolean }[] }).checks;
      if (checks) process.stderr.write(table(checks));
      return 1;
    }
    throw error;
  }
  const rows = result.checks.reduce((n, c) => n + c.source, 0);
  const out: string[] = [table(result.checks)];
  out.push(`copied ${rows} rows of ${result.checks.length} tables into ${result.target}; row counts and primary-key checksums match; committed`);
  if (result.hostKeys) out.push(`stored ${result.hostKeys} SSH host key(s) of ${config.dataDir} in the database: clients see the same host keys`);
  out.push("");
  out.push("Next, on every node (this data dir's svc.db is no longer used; keep it as a fallback until you are satisfied):");
  out.push(`  SVC_DATABASE_URL=${result.target.includes("***") ? `${result.target}  (with the real password)` : result.target}`);
  if (config.storage.kind === "s3") {
    out.push(
      `  SVC_STORAGE=s3 SVC_S3_BUCKET=${config.storage.bucket} and the same S3 endpoint and keys (objects are not copied; every node reads this bucket)`,
    );
  } else {
    out.push(`  SVC_STORAGE=fs SVC_DATA_DIR=${config.dataDir} (objects are not copied: they stay in ${config.storage.root})`);
    out.push(
      `warning: SVC_STORAGE=fs keeps the objects on this machine. One node on PostgreSQL works as it is; several nodes need SVC_STORAGE=s3 (copy ${config.storage.root} into a bucket first, keys unchanged).`,
    );
  }
  process.stdout.write(`${out.join("\n")}\n`);
  return 0;
}

/** Counts per table as aligned columns. */
function table(checks: { table: string; source: number; target: number; ok: boolean }[]): string {
  const w = Math.max(5, ...checks.map((c) => c.table.length));
  const lines = [`${"table".padEnd(w)}  ${"sqlite".padStart(9)}  ${"postgres".padStart(9)}`];
  for (const c of checks) lines.push(`${c.table.padEnd(w)}  ${String(c.source).padStart(9)}  ${String(c.target).padStart(9)}${c.ok ? "" : "  MISMATCH"}`);
  return `${lines.join("\n")}\n`;
}
