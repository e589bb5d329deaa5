// How the people routes read request bodies.
//
// Uniform routes: the spec gives login (401), resend-verification and forgot-password (202), the
// mailed-link routes (404 for every dead link) and logout (204) one answer whatever arrives
// (SPEC §4.3, §7). Their bodies are checked by the services, not the router, so a missing field,
// a wrong type, no body or a body that is not JSON all get that one answer, never a 400.
//
// Every other body is JSON validated against its schema (`JSON_BODY`).
import type { TSchema } from "@sinclair/typebox";
import { AppError } from "../../../errors.ts";

/** The route patterns (as Elysia names them) whose body is read leniently. */
export const UNIFORM_BODY_ROUTES: ReadonlySet<string> = new Set([
  "/v1/auth/login",
  "/v1/auth/logout",
  "/v1/auth/verify",
  "/v1/auth/resend-verification",
  "/v1/auth/forgot-password",
  "/v1/auth/reset-password",
  "/v1/auth/invite/preview",
  "/v1/users/:handle/emails/verify",
]);

/**
 * The JSON parser's fallback for `route`: on a uniform route a malformed body reads as no body;
 * elsewhere the 400 stands, and a body over the size limit (413) is refused everywhere.
 */
export function lenientJson(route: string): (error: unknown) => null {
  return (error) => {
    if (UNIFORM_BODY_ROUTES.has(route) && error instanceof AppError && error.status === 400) return null;
    throw error;
  };
}

/** The OpenAPI request body of a uniform route: the shape it reads, documented but not enforced by the router. */
export function documentedBody(schema: TSchema, description: string) {
  return { description, required: false, content: { "application/json": { schema } } };
}

/**
 * Route option of a route with a JSON body schema. The app's own JSON parser (size limit) still
 * runs first; naming the content type here makes a body of another type a 400, and is what puts
 * the body schema into /v1/openapi.json (the generator skips function parsers).
 */
export const JSON_BODY = { parse: "application/json" } as const;
