// The one error type. Services throw it; the HTTP and SSH transports render it once.

/**
 * What kind of refusal an error is: callers (pages, the git service, throttles) switch on this,
 * never on the number. The HTTP status is derived from it (`STATUS_OF`), in one place.
 */
export type ErrorCode =
  | "invalid"
  | "unauthenticated"
  | "payment_required"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "gone"
  | "too_large"
  | "unsupported_media_type"
  | "unprocessable"
  | "rate_limited"
  | "internal"
  | "upstream"
  | "unavailable";

/** The HTTP status of each code (SPEC §7). */
export const STATUS_OF: { readonly [C in ErrorCode]: number } = Object.freeze({
  invalid: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
});

/** A status an AppError may carry: one of the codes' statuses. */
export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 502 | 503;

const CODE_OF: ReadonlyMap<number, ErrorCode> = new Map(Object.entries(STATUS_OF).map(([code, status]) => [status, code as ErrorCode]));

/** The code of an HTTP status (the numeric constructor's, and a decision's status). */
export function codeOfStatus(status: ErrorStatus): ErrorCode {
  return CODE_OF.get(status)!;
}

/** An error meant for the caller: its code (and the HTTP status derived from it), message, and optional extra body fields. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(
    code: ErrorCode | ErrorStatus,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "AppError";
    this.code = typeof code === "number" ? codeOfStatus(code) : code;
    this.status = STATUS_OF[this.code];
  }
}

export const Invalid = (message: string) => new AppError("invalid", message);
export const Unauthorized = (message = "authentication required") => new AppError("unauthenticated", message);
export const PaymentRequired = (message: string) => new AppError("payment_required", message);
export const Forbidden = (message: string) => new AppError("forbidden", message);
export const NotFound = (message = "not found") => new AppError("not_found", message);
export const Conflict = (message: string, extra: Record<string, unknown> = {}) => new AppError("conflict", message, extra);
/** The thing existed and is gone for good (an expired CI artifact). */
export const Gone = (message: string) => new AppError("gone", message);
export const Unprocessable = (message: string) => new AppError("unprocessable", message);
export const TooLarge = (message = "request body too large") => new AppError("too_large", message);

/** 429: too many attempts; the transports send `Retry-After` with the seconds to wait. */
export class RateLimited extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super("rate_limited", message);
    this.name = "RateLimited";
  }
}

/** 415: a body in a media type the route does not read. */
export const UnsupportedMediaType = (message: string) => new AppError("unsupported_media_type", message);

/** 503: a dependency is down for now (the client should retry); `extra` may name it with a `code`. */
export const Unavailable = (message: string, extra: Record<string, unknown> = {}) => new AppError("unavailable", message, extra);

/** What a client is told while the metadata database cannot be reached (issue 27: nodes keep running and recover by themselves). */
export const DATABASE_UNAVAILABLE = "the database is unavailable; try again shortly";

/** Driver errors that mean "the database cannot be reached", not "this query is wrong". */
const UNREACHABLE_MESSAGES: readonly string[] = Object.freeze(["Cannot use a closed database", "Database has closed"]);
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "SQLITE_CANTOPEN",
  "SQLITE_IOERR",
  // PostgreSQL: admin shutdown, crash shutdown, cannot connect now.
  "57P01",
  "57P02",
  "57P03",
]);

/**
 * The 503 `database_unavailable` an error of the database driver stands for (a closed SQLite
 * handle, a PostgreSQL server that refuses or dropped the connection, SQLSTATE class 08), or
 * null for any other error. Looks through `cause` (drizzle wraps driver errors).
 */
export function databaseUnavailable(error: unknown): AppError | null {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AppError) return null;
    const { code, errno, message } = e as { code?: unknown; errno?: unknown; message?: unknown };
    const codes = [code, errno].filter((c): c is string => typeof c === "string");
    if (codes.some((c) => UNREACHABLE_CODES.has(c) || /^08[0-9A-Z]{3}$/.test(c) || c.startsWith("SQLITE_IOERR")))
      return Unavailable(DATABASE_UNAVAILABLE, { code: "database_unavailable" });
    if (typeof message === "string" && UNREACHABLE_MESSAGES.some((m) => message.includes(m)))
      return Unavailable(DATABASE_UNAVAILABLE, { code: "database_unavailable" });
  }
  return null;
}
