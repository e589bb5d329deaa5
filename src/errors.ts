// The one error type. Services throw it; the HTTP and SSH transports render it once.

/** An error meant for the caller: HTTP status, message, and optional extra body fields. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const Invalid = (message: string) => new AppError(400, message);
export const Unauthorized = (message = "authentication required") => new AppError(401, message);
export const PaymentRequired = (message: string) => new AppError(402, message);
export const Forbidden = (message: string) => new AppError(403, message);
export const NotFound = (message = "not found") => new AppError(404, message);
export const Conflict = (message: string, extra: Record<string, unknown> = {}) => new AppError(409, message, extra);
export const Unprocessable = (message: string) => new AppError(422, message);
export const TooLarge = (message = "request body too large") => new AppError(413, message);

/** 429: too many attempts; the transports send `Retry-After` with the seconds to wait. */
export class RateLimited extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, message);
    this.name = "RateLimited";
  }
}

/** 415: a body in a media type the route does not read. */
export const UnsupportedMediaType = (message: string) => new AppError(415, message);
