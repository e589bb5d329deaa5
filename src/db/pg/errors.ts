// PostgreSQL errors as svc's errors. Bun.sql puts the SQLSTATE in `errno` (its `code` is its own,
// e.g. ERR_POSTGRES_SERVER_ERROR); drizzle wraps statement errors in DrizzleQueryError with the
// driver's error as `cause`, while COMMIT's own errors arrive bare (bench/README "PostgreSQL
// drivers"). A unique violation (23505) between nodes, where a pre-check inside one SERIALIZABLE
// transaction did not already answer it, becomes the 409 the pre-check would have given.
import { AppError, Conflict, DATABASE_UNAVAILABLE, Unavailable } from "../../errors.ts";

interface DriverError {
  errno?: unknown;
  code?: unknown;
  constraint?: unknown;
  /** PostgreSQL's CONTEXT: the statement (and function) the error arose in. */
  where?: unknown;
  cause?: unknown;
}

/** The errors along `err`'s cause chain (at most a few links). */
function chain(err: unknown): DriverError[] {
  const out: DriverError[] = [];
  for (let e = err, i = 0; e && typeof e === "object" && i < 4; e = (e as DriverError).cause, i++) out.push(e as DriverError);
  return out;
}

/** The 5-character SQLSTATE of a PostgreSQL error (on `err` or its causes), else null. */
export function sqlState(err: unknown): string | null {
  for (const e of chain(err)) {
    for (const v of [e.errno, e.code]) if (typeof v === "string" && /^[0-9A-Z]{5}$/.test(v)) return v;
  }
  return null;
}

/** The constraint (or unique index) a violation names, else null. */
export function constraintOf(err: unknown): string | null {
  for (const e of chain(err)) if (typeof e.constraint === "string") return e.constraint;
  return null;
}

/** A serialization failure or deadlock: the transaction is retried from the start. */
export function isRetryable(err: unknown): boolean {
  const s = sqlState(err);
  return s === "40001" || s === "40P01";
}

/** The server is unreachable (refused, closed, timed out): answered 503, never 500. */
export function isUnreachable(err: unknown): boolean {
  for (const e of chain(err)) {
    const code = typeof e.code === "string" ? e.code : "";
    if (/^ERR_POSTGRES_CONNECTION_|^ECONNREFUSED$|^ECONNRESET$|^ENOTFOUND$|^ETIMEDOUT$/.test(code)) return true;
  }
  // 57P01-57P03: admin shutdown, crash shutdown, cannot connect now; 08xxx: connection exceptions.
  const s = sqlState(err);
  return s !== null && (s.startsWith("08") || s === "57P01" || s === "57P02" || s === "57P03");
}

/** What each unique index or constraint means, as the service's pre-checks word it. */
const UNIQUE_MESSAGES: Readonly<Record<string, string>> = Object.freeze({
  users_handle_uq: "the handle is taken or reserved",
  users_email_uq: "an account with this email address already exists",
  emails_address_uq: "this address is already in use",
  email_tokens_hash_uq: "a token with this secret exists; try again",
  sessions_hash_uq: "a session with this secret exists; try again",
  ssh_keys_fingerprint_uq: "this key is already registered",
  invites_hash_uq: "an invitation with this secret exists; try again",
  orgs_name_uq: "the name is taken or reserved",
  teams_org_name_uq: "a team with this name already exists",
  grants_repo_user_uq: "this person already has a grant on the repository",
  grants_repo_team_uq: "this team already has a grant on the repository",
  repos_org_name_uq: "a repository with this name already exists",
  packs_repo_name_uq: "this pack is already recorded",
  jobs_unique_uq: "this work is already queued",
  webhook_deliveries_seq_uq: "busy",
  runner_groups_org_name_uq: "a runner group with this name already exists",
  runner_groups_default_uq: "the organization already has a default runner group",
  runners_live_name_uq: "a runner with this name already exists",
  changes_repo_number_uq: "busy",
  repo_search_docs_repo_id_unique: "a repository with this id already exists",
});

/** 503 for a server that cannot be reached. */
export function databaseUnavailable(): AppError {
  return Unavailable(DATABASE_UNAVAILABLE, { code: "database_unavailable" });
}

/** 503 after a write transaction kept conflicting with others (SERIALIZABLE retries used up). */
export function databaseBusy(): AppError {
  return new AppError("unavailable", "database busy: the write kept conflicting with others; try again", { code: "database_busy" });
}

/** svc's error for a PostgreSQL error, or null when it has none (the error is then a bug: 500). */
export function appErrorOf(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const s = sqlState(err);
  if (s === "23505") {
    const name = constraintOf(err);
    return Conflict((name && UNIQUE_MESSAGES[name]) || "this already exists");
  }
  if (isUnreachable(err)) return databaseUnavailable();
  return null;
}
