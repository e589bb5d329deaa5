// Schemas shared by every domain (TypeBox, which is what Elysia's `t` builds): the error body,
// paging, and the error statuses a route can answer. Each domain's request and response schemas
// live in its `schemas.ts`, used by the routes (validation and /v1/openapi.json) and by the
// services (`Static<>` input and output types), so each shape is written once.
import { Type, type TSchema } from "@sinclair/typebox";

/** `{ "error": message }`, with extra fields on some statuses (409 adds `current`). */
export const ErrorBody = Type.Object(
  { error: Type.String({ description: "what went wrong, for people" }) },
  { additionalProperties: true, examples: [{ error: "repository not found" }] },
);

/** What each error status means, for the interface description. */
const ERROR_MEANING: Readonly<Record<number, string>> = {
  400: "invalid input",
  401: "no or unusable credential",
  402: "payment required (`quota:` or `card:`)",
  403: "not allowed",
  404: "no such thing, or the caller may not see it",
  405: "method not allowed",
  409: "conflict",
  410: "gone: it existed and was removed for good (an expired artifact)",
  413: "request body too large",
  415: "unsupported content type",
  422: "value outside an enumeration or an unknown name",
  429: "too many requests",
  502: "upstream provider unreachable",
  503: "not configured or not ready",
};

/** The error part of a route's `response` map: each status with the error body. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Object(ErrorBody.properties, { additionalProperties: true, description: ERROR_MEANING[s] ?? "error" });
  return out;
}

/** `limit` and `cursor` of a long list (DECISIONS §1). */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: "1-100, default 30", examples: ["30"] })),
  cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
});

/** `next_cursor` of a long list: null on the last page. */
export const NextCursor = Type.Union([Type.String(), Type.Null()], { description: "cursor of the next page; null at the end" });

/** A nullable string. */
export const NullableString = (options: Record<string, unknown> = {}) => Type.Union([Type.String(), Type.Null()], options);
