// Small response helpers shared by the route plugins.
import { t } from "elysia";

/** Answers 204 with no body. */
export function noContent(set: { status?: number | string }): null {
  set.status = 204;
  return null;
}
/** The schema of a 204 answer (no body). */
noContent.schema = t.Null({ description: "no content" });

/**
 * A 200 JSON answer built here rather than by the framework. Why: the hottest reads (GET repo,
 * tree listings) would otherwise pay the framework's response-schema pass on every request (a
 * few µs, and a copy of every tree entry); their schemas stay in the interface description, and
 * the tests check real answers against them (test/blackbox/repos/openapi.test.ts).
 */
export function jsonAnswer(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: JSON_HEADERS });
}

/**
 * A 200 answer whose UTF-8 JSON a service wrote itself (the contribution graph, tens of thousands
 * of entries: services/discovery/graph.ts). Same contract as `jsonAnswer`: the schema stays in the
 * interface description and the tests check real answers against it.
 */
export function jsonBytesAnswer(json: Uint8Array<ArrayBuffer>): Response {
  return new Response(json, { status: 200, headers: JSON_HEADERS });
}

const JSON_HEADERS = { "content-type": "application/json" } as const;
