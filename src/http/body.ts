// Request bodies read with a size limit (DECISIONS §1 and §4: 25 MiB JSON API; git bodies up to
// SVC_GIT_MAX_PUSH, default 2 GiB, streamed and never held whole).
import { Invalid, TooLarge } from "../errors.ts";

export const JSON_BODY_LIMIT = 25 * 1024 * 1024;
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

/** Parses a JSON body with the API limit; malformed JSON is a 400. */
export async function parseJsonBody(request: Request): Promise<unknown> {
  const bytes = await readBodyLimited(request, JSON_BODY_LIMIT);
  if (bytes.byteLength === 0) return undefined;
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
