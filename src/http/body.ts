// Request bodies read with a size limit (DECISIONS §1: 25 MiB JSON API, 100 MiB git).
import { Invalid, TooLarge } from "../errors.ts";

export const JSON_BODY_LIMIT = 25 * 1024 * 1024;
export const GIT_BODY_LIMIT = 100 * 1024 * 1024;

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
