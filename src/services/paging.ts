// Paging of long lists (DECISIONS §1): `limit` (default 30, at most 100) and an opaque `cursor`;
// answers carry `next_cursor` (null at the end). One cursor format for every list: the sort key
// of the last item returned, as base64url JSON, so a cursor is only ever a position, never a filter.
import { Invalid } from "../errors.ts";

export const DEFAULT_LIMIT = 30;
export const MAX_LIMIT = 100;

/** A position in a list: the sort key after which the next page starts. */
export type CursorKey = string | number | (string | number)[];

/** A parsed page request. */
export interface Page<K extends CursorKey = CursorKey> {
  limit: number;
  /** The sort key to continue after, or null for the first page. */
  after: K | null;
}

/** Parses `limit` and `cursor` from a query; 400 for a bad limit or a cursor this service did not make. */
export function parsePage<K extends CursorKey = string>(
  q: { limit?: unknown; cursor?: unknown },
  check: (key: unknown) => key is K = isString as never,
): Page<K> {
  const limit = q.limit === undefined || q.limit === "" ? DEFAULT_LIMIT : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw Invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  if (q.cursor === undefined || q.cursor === "" || q.cursor === null) return { limit, after: null };
  if (typeof q.cursor !== "string" || q.cursor.length > 1024) throw Invalid("invalid cursor");
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(q.cursor, "base64url").toString("utf8"));
  } catch {
    throw Invalid("invalid cursor");
  }
  if (!check(key)) throw Invalid("invalid cursor");
  return { limit, after: key };
}

/** The cursor for the page after one ending at the item with sort key `key`. */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key), "utf8").toString("base64url");
}

/** Builds `{ items, next_cursor }` from up to limit+1 fetched rows (the extra row says more exist). */
export function pageOf<T>(rows: T[], page: Page<CursorKey>, keyOf: (row: T) => CursorKey): { items: T[]; next_cursor: string | null } {
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  return { items, next_cursor: more ? encodeCursor(keyOf(items[items.length - 1]!)) : null };
}

function isString(key: unknown): key is string {
  return typeof key === "string";
}
