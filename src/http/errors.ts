// Errors are rendered once, here: `{ "error": message }` with the status of SPEC §7.
import { AppError, databaseUnavailable, RateLimited } from "../errors.ts";
import type { Logger } from "../services/context.ts";
import { pathOf } from "./path.ts";

/** A JSON response with no-store caching. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/**
 * Turns any thrown value into the response a client sees. Anything but an AppError is a 500:
 * logged as one JSON line with the request id, method, path and the error's stack, and masked.
 */
export function errorResponse(error: unknown, log: Logger, requestId: string, request?: Request): Response {
  // A database that cannot be reached is a 503 `database_unavailable`, not a 500 with a stack.
  const unavailable = error instanceof AppError ? null : databaseUnavailable(error);
  if (unavailable) log.warn("database unavailable", { request_id: requestId, error: error instanceof Error ? error.message : String(error) });
  error = unavailable ?? error;
  if (error instanceof AppError) {
    const headers: Record<string, string> = {};
    if (error.extra.code === "database_unavailable") headers["retry-after"] = "5";
    if (error.code === "unauthenticated") headers["www-authenticate"] = 'Basic realm="svc", charset="UTF-8"';
    if (error instanceof RateLimited) headers["retry-after"] = String(error.retryAfterSeconds);
    return json(error.status, { error: error.message, ...error.extra }, headers);
  }
  // Why: internals (stack, SQL) never reach the client; the request id ties the log line to the report.
  log.error("unhandled error", {
    request_id: requestId,
    ...(request ? { method: request.method, path: pathOf(request.url) } : {}),
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return json(500, { error: "internal error", request_id: requestId });
}

/** The longest excerpt of a rejected value an error message quotes. */
const EXCERPT = 40;

/** A short, safe description of a rejected value: its type, or a quoted excerpt of a short string or number. */
function excerptOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    const shown = value.length > EXCERPT ? `${value.slice(0, EXCERPT)}…` : value;
    return `${JSON.stringify(shown)}${value.length > EXCERPT ? ` (${value.length} characters)` : ""}`;
  }
  return String(value).slice(0, EXCERPT);
}

/**
 * A readable one-line message for a schema validation failure: the field, what was expected and
 * a short excerpt of what came. Why: the validator's own summary quotes the whole value, so a
 * 20 MB string would come back as a 20 MB error (and an error must never echo a secret at length).
 */
export function validationMessage(error: unknown): string {
  const e = error as { valueError?: { path?: string; message?: string; value?: unknown }; type?: string };
  const first = e.valueError;
  if (!first) return "invalid request";
  const where = first.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : e.type === "query" ? "query" : "body";
  const field = where.length > 100 ? `${where.slice(0, 100)}…` : where;
  return `invalid request: ${field}: ${first.message ?? "invalid value"}, got ${excerptOf(first.value)}`;
}
