// Errors are rendered once, here: `{ "error": message }` with the status of SPEC §7.
import { AppError } from "../errors.ts";
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
  if (error instanceof AppError) {
    const headers: Record<string, string> = {};
    if (error.status === 401) headers["www-authenticate"] = 'Basic realm="svc", charset="UTF-8"';
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

/** A readable one-line message for a schema validation failure. */
export function validationMessage(error: unknown): string {
  const e = error as { all?: { path?: string; message?: string; summary?: string }[]; message?: string };
  const first = e.all?.[0];
  if (first) {
    const path = first.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : "body";
    return `invalid request: ${path || "body"}: ${first.summary ?? first.message ?? "invalid value"}`;
  }
  return "invalid request";
}
