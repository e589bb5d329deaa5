// Small response helpers shared by the route plugins.
import { t } from "elysia";

/** Answers 204 with no body. */
export function noContent(set: { status?: number | string }): null {
  set.status = 204;
  return null;
}
/** The schema of a 204 answer (no body). */
noContent.schema = t.Null({ description: "no content" });
