// How the people routes read request bodies.
//
// Uniform routes: the spec gives login (401), resend-verification and forgot-password (202), the
// mailed-link routes (404 for every dead link) and logout (204) one answer whatever arrives
// (SPEC §4.3, §7). Each declares `policy({ body: "uniform" })` (http/policy.ts): its body is
// checked by the service, not the router, so a missing field, a wrong type, no body or a body
// that is not JSON all get that one answer, never a 400.
//
// Every other body is JSON validated against its schema (`JSON_BODY`).
import type { TSchema } from "@sinclair/typebox";

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
