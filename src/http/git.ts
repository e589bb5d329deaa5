// Git smart HTTP at /{org}/{repo}.git (gitprotocol-http): a thin transport over the git service.
// The request is parsed by git/service-request.ts; serveGit / advertiseGit do the rest; this
// file reads the body (gzip, size limit) and renders the outcome as an HTTP response.
import { createGunzip } from "node:zlib";
import { Readable } from "node:stream";
import { AppError, databaseUnavailable, Invalid, RateLimited, TooLarge } from "../errors.ts";
import { parseSmartHttpRequest, protocolVersion, smartHttpContentTypes, unreadableBody } from "../git/service-request.ts";
import type { Ctx } from "../services/context.ts";
import { advertiseGit, serveGit, type GitOutcome, type GitRefusal, type ServiceIO } from "../services/git/serve.ts";
import { GIT_BODY_SLACK, limitStream, sizeText } from "./body.ts";
import { pathOf } from "./path.ts";
import { resolveCaller } from "./principal.ts";

/** Headers git-http-backend sends so no proxy caches protocol responses. */
const NO_CACHE = {
  expires: "Fri, 01 Jan 1980 00:00:00 GMT",
  pragma: "no-cache",
  "cache-control": "no-cache, max-age=0, must-revalidate",
} as const;

/** The status of each refusal of the git service. */
const STATUS: Readonly<Record<GitRefusal, number>> = {
  "bad-request": 400,
  unauthenticated: 401,
  payment: 402,
  forbidden: 403,
  "forbidden-in-band": 403,
  "not-found": 404,
  "too-large": 413,
  unavailable: 503,
};

/** The status of each problem with the request itself. */
const PROBLEM_STATUS = { "bad-path": 400, "dumb-http": 403, method: 405, "content-type": 415 } as const;

/** A plain-text answer git prints to its user; 401 carries the Basic challenge. */
function plain(status: number, message: string, retryAfter?: number): Response {
  const headers: Record<string, string> = { "content-type": "text/plain; charset=utf-8", ...NO_CACHE };
  if (status === 401) headers["www-authenticate"] = 'Basic realm="svc", charset="UTF-8"';
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  return new Response(`${message}\n`, { status, headers });
}

/** A refused or failed outcome as a status (nothing of the response was sent yet). */
function rendered(outcome: Exclude<GitOutcome, { kind: "served" }>): Response {
  if (outcome.kind === "failed") return new Response("internal error\n", { status: 500, headers: { "content-type": "text/plain", ...NO_CACHE } });
  return plain(STATUS[outcome.refusal], outcome.message);
}

/** Why a body could not be read (bad gzip, a broken stream). */
function unreadableDetail(gzip: boolean): string {
  return gzip ? "the request body is not valid gzip data" : "the request body could not be read";
}

/**
 * The request body as a byte stream (gunzipped when sent with Content-Encoding: gzip, size-capped),
 * with its first bytes already read. Why read ahead: an RPC with no body, or with a body that does
 * not decompress, is answered 400 at once instead of reaching the engine, which would wait for
 * input that never comes or fail after answering 200.
 *
 * A push over SVC_GIT_MAX_PUSH is refused by receive-pack itself, in band, once it has read the
 * ref names: git prints that reason, while for a failed RPC it prints only "HTTP 413" and never
 * the body. Any other git request declared over the limit is a 413 before anything is read.
 */
async function openBody(request: Request, limit: number, push: boolean): Promise<AsyncIterable<Uint8Array>> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit && !push) throw TooLarge(`request body exceeds the maximum size of ${sizeText(limit)}`);
  const encoding = (request.headers.get("content-encoding") ?? "").toLowerCase();
  const gzip = encoding === "gzip" || encoding === "x-gzip";
  if (!request.body) throw Invalid("protocol error: empty request body");
  const raw = request.body as unknown as AsyncIterable<Uint8Array>;
  const decoded: AsyncIterable<Uint8Array> = gzip ? Readable.from(raw).pipe(createGunzip()) : raw;
  const chunks = limitStream(decoded, limit + GIT_BODY_SLACK)[Symbol.asyncIterator]();
  let first: Uint8Array | null = null;
  try {
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
      if (next.value.byteLength > 0) {
        first = next.value;
        break;
      }
    }
  } catch (error) {
    // Nothing has reached the engine yet: a plain 400 (a 413 stays a 413).
    throw error instanceof AppError ? error : Invalid(`protocol error: ${unreadableDetail(gzip)}`);
  }
  if (!first) throw Invalid("protocol error: empty request body");
  const head = first;
  return (async function* () {
    yield head;
    try {
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    } catch (error) {
      // Part way through: the engine tells the client in band, as for any malformed request.
      throw error instanceof AppError ? error : unreadableBody(unreadableDetail(gzip));
    }
  })();
}

/**
 * Runs an RPC whose output is the response body. An outcome reached before the first byte is
 * rendered as a status; once output has begun the response is a streaming 200, closed when
 * served and aborted otherwise (the status is gone; the engine already told git in band).
 */
async function rpc(contentType: string, input: AsyncIterable<Uint8Array>, run: (io: ServiceIO) => Promise<GitOutcome>): Promise<Response> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  let began: (() => void) | null = null;
  const firstByte = new Promise<"began">((resolve) => (began = () => resolve("began")));
  const io: ServiceIO = {
    input,
    write(chunk) {
      began?.();
      began = null;
      return writer.write(chunk);
    },
  };
  const outcome = run(io);
  const first = await Promise.race([firstByte, outcome]);
  const headers = { "content-type": contentType, ...NO_CACHE };
  if (first !== "began") {
    if (first.kind !== "served") {
      void writer.abort().catch(() => {});
      return rendered(first);
    }
    void writer.close().catch(() => {});
    return new Response(readable, { status: 200, headers });
  }
  void outcome
    .then(
      (o) => (o.kind === "served" ? writer.close() : writer.abort(new Error(o.kind === "refused" ? o.message : "internal error"))),
      (error: unknown) => writer.abort(error),
    )
    .catch(() => {});
  return new Response(readable, { status: 200, headers });
}

/** The smart-HTTP handler: a Response for git paths, null for everything else. */
export function gitHandler(ctx: Ctx) {
  return async (request: Request): Promise<Response | null> => {
    const parsed = parseSmartHttpRequest({
      method: request.method,
      path: pathOf(request.url),
      url: request.url,
      contentType: request.headers.get("content-type"),
    });
    if (!parsed) return null;
    try {
      // The caller first: a presented but unusable credential is 401 whatever else is wrong.
      const actor = await resolveCaller(ctx, request);
      if (parsed.kind === "invalid") return plain(PROBLEM_STATUS[parsed.problem], parsed.message);
      const { service, org, repo } = parsed;
      const protocol = protocolVersion(request.headers.get("git-protocol"));
      const types = smartHttpContentTypes(service);
      if (parsed.kind === "advertise") {
        const outcome = await advertiseGit(ctx, actor, { service, org, repo, protocol });
        if (outcome.kind === "served" || (outcome.kind === "refused" && outcome.refusal === "forbidden-in-band")) {
          return new Response(outcome.body as BodyInit, { status: 200, headers: { "content-type": types.advertisement, ...NO_CACHE } });
        }
        return rendered(outcome);
      }
      const input = await openBody(request, ctx.config.gitMaxPush, service === "git-receive-pack");
      const declaredBytes = Number(request.headers.get("content-length") ?? "0") || undefined;
      return await rpc(types.result, input, (io) => serveGit(ctx, actor, { service, org, repo, protocol, io, stateless: true, via: "http", declaredBytes }));
    } catch (error) {
      if (error instanceof AppError) return plain(error.status, error.message, error instanceof RateLimited ? error.retryAfterSeconds : undefined);
      // git prints a text/plain error body to its user: the database being down says so.
      const unavailable = databaseUnavailable(error);
      if (unavailable) return plain(unavailable.status, unavailable.message, 5);
      ctx.log.error("git request failed", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      return rendered({ kind: "failed" });
    }
  };
}
