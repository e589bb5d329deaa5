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
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
});

/** A status an AppError may carry: one of the codes' statuses. */
export type ErrorStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503;

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
