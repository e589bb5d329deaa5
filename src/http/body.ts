// Request bodies read with a size limit (DECISIONS §1 and §4: 25 MiB JSON API; git bodies up to
// SVC_GIT_MAX_PUSH, default 2 GiB, streamed and never held whole), and JSON parsed only after
// its nesting depth is known to be bounded.
import { Invalid, TooLarge } from "../errors.ts";

export const JSON_BODY_LIMIT = 25 * 1024 * 1024;
/**
 * Bodies of the routes anyone may call without a credential (sign-in, signup, the mailed links):
 * their fields fit in a few KiB (a 1,024-character password is at most 12 KiB as JSON escapes).
 * Why: a 24 MiB anonymous login body was read and parsed whole before its 401 (issue 25 row 7).
 */
export const ANONYMOUS_BODY_LIMIT = 16 * 1024;
/** Deepest nesting of arrays and objects a JSON body may have (docs/api.md "Request limits"). */
export const JSON_MAX_DEPTH = 64;
/** "2 GiB", "500 MiB", or bytes when not a whole number of either. */
export function sizeText(bytes: number): string {
  if (bytes % 1024 ** 3 === 0) return `${bytes / 1024 ** 3} GiB`;
  if (bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2} MiB`;
  return `${bytes} bytes`;
}

/** Room for a push's commands beyond SVC_GIT_MAX_PUSH, so the engine's own limit (with its message) answers first. */
export const GIT_BODY_SLACK = 1024 * 1024;

/** Reads the whole body, refusing with 413 beyond `limit` bytes (checked before and while reading). */
export async function readBodyLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw TooLarge(`request body larger than ${limit} bytes`);
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > limit) throw TooLarge(`request body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * Whether JSON text nests arrays and objects deeper than `max`. One pass over the bytes with a
 * counter (no recursion, no allocation): brackets inside strings are skipped, and every
 * structural byte is ASCII, which never occurs inside a UTF-8 multi-byte sequence.
 */
export function jsonTooDeep(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next byte (\" and \\ included)
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Parses a JSON body with the API limits: 413 over the size limit, 400 deeper than
 * JSON_MAX_DEPTH or malformed. Why the depth check comes first: the parser, the validator and
 * its error reporting all recurse over the value, and a 300 KB body nested 50,000 deep pinned
 * the event loop for seconds before overflowing the stack.
 */
export async function parseJsonBody(request: Request, limit: number = JSON_BODY_LIMIT): Promise<unknown> {
  const bytes = await readBodyLimited(request, limit);
  if (bytes.byteLength === 0) return undefined;
  if (jsonTooDeep(bytes, JSON_MAX_DEPTH)) throw Invalid(`JSON body nested deeper than ${JSON_MAX_DEPTH} levels`);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw Invalid("invalid JSON body");
  }
}

/** Wraps a byte stream so it fails with 413 once more than `limit` bytes have passed. */
export async function* limitStream(body: AsyncIterable<Uint8Array>, limit: number): AsyncIterable<Uint8Array> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > limit) throw TooLarge(`request body larger than ${limit} bytes`);
    yield chunk;
  }
}
