// Git smart HTTP at /{org}/{repo}.git (gitprotocol-http): a thin transport over git-service.
//
//   GET  $GIT_URL/info/refs?service=git-upload-pack|git-receive-pack   → advertisement
//   POST $GIT_URL/git-upload-pack    (application/x-git-upload-pack-request)
//   POST $GIT_URL/git-receive-pack   (application/x-git-receive-pack-request)
//
// Protocol v2 is selected by the `Git-Protocol: version=2` request header.
import { createGunzip } from "node:zlib";
import { Readable } from "node:stream";
import { AppError, TooLarge } from "../errors.ts";
import type { Ctx } from "../services/context.ts";
import { advertise, receivePack, uploadPack, type GitServiceName } from "../services/git/serve.ts";
import { GIT_BODY_SLACK, limitStream, sizeText } from "./body.ts";
import { pathOf } from "./path.ts";
import { principalOf } from "./principal.ts";

const PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/** Headers git-http-backend sends so no proxy caches protocol responses. */
const NO_CACHE = {
  expires: "Fri, 01 Jan 1980 00:00:00 GMT",
  pragma: "no-cache",
  "cache-control": "no-cache, max-age=0, must-revalidate",
};

/** A plain-text refusal git prints to its user; 401 carries the Basic challenge. */
function refusal(error: unknown, ctx: Ctx): Response {
  if (!(error instanceof AppError)) {
    ctx.log.error("git request failed", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    return new Response("internal error\n", { status: 500, headers: { "content-type": "text/plain", ...NO_CACHE } });
  }
  const headers: Record<string, string> = { "content-type": "text/plain; charset=utf-8", ...NO_CACHE };
  if (error.status === 401) headers["www-authenticate"] = 'Basic realm="svc", charset="UTF-8"';
  return new Response(`${error.message}\n`, { status: error.status, headers });
}

function protocolOf(request: Request): 0 | 2 {
  return /(^|[:\s])version=2(\b|$)/.test(request.headers.get("git-protocol") ?? "") ? 2 : 0;
}

/**
 * The request body as a byte stream: gunzipped when sent with Content-Encoding: gzip, size-capped.
 * A push over SVC_GIT_MAX_PUSH is refused by receive-pack itself, in band, once it has read the
 * ref names: git prints that reason, while for a failed RPC it prints only "HTTP 413" and never
 * the body. Any other git request declared over the limit is a 413 before anything is read.
 */
function bodyOf(request: Request, limit: number, service: GitServiceName): AsyncIterable<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit && service !== "git-receive-pack") throw TooLarge(`request body exceeds the maximum size of ${sizeText(limit)}`);
  const raw = (request.body ?? new ReadableStream()) as unknown as AsyncIterable<Uint8Array>;
  const encoding = (request.headers.get("content-encoding") ?? "").toLowerCase();
  let stream: AsyncIterable<Uint8Array> = raw;
  if (encoding === "gzip" || encoding === "x-gzip") stream = Readable.from(raw).pipe(createGunzip());
  return limitStream(stream, limit + GIT_BODY_SLACK);
}

/** Runs `serve` writing into a streamed response body (backpressure through the writer). */
function streamed(ctx: Ctx, contentType: string, serve: (write: (chunk: Uint8Array) => Promise<void>) => Promise<void>): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  void (async () => {
    try {
      await serve((chunk) => writer.write(chunk));
      await writer.close();
    } catch (error) {
      if (!(error instanceof AppError)) ctx.log.error("git rpc failed", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      await writer.abort(error).catch(() => {});
    }
  })();
  return new Response(readable, { status: 200, headers: { "content-type": contentType, ...NO_CACHE } });
}

/** The smart-HTTP handler: a Response for git paths, null for everything else. */
export function gitHandler(ctx: Ctx) {
  return async (request: Request): Promise<Response | null> => {
    const path = pathOf(request.url);
    // Cheap test first: git paths always contain ".git/" or end in a git service name.
    if (!path.includes("/info/refs") && !path.endsWith("/git-upload-pack") && !path.endsWith("/git-receive-pack")) return null;
    const m = PATH.exec(path);
    if (!m) return null;
    const url = new URL(request.url);
    const [, rawOrg, rawRepo, op] = m as unknown as [string, string, string, string];
    const org = decodeURIComponent(rawOrg);
    const repo = decodeURIComponent(rawRepo);
    try {
      const actor = principalOf(ctx, request);
      const protocol = protocolOf(request);
      if (op === "info/refs") {
        if (request.method !== "GET" && request.method !== "HEAD") throw new AppError(405, "method not allowed");
        const service = url.searchParams.get("service");
        if (service !== "git-upload-pack" && service !== "git-receive-pack") {
          throw new AppError(403, "the dumb HTTP protocol is not supported; use a git client with smart HTTP");
        }
        const body = await advertise(ctx, actor, org, repo, service as GitServiceName, { protocol, http: true });
        return new Response(body as BodyInit, { status: 200, headers: { "content-type": `application/x-${service}-advertisement`, ...NO_CACHE } });
      }
      if (request.method !== "POST") throw new AppError(405, "method not allowed");
      const service = op as GitServiceName;
      if (request.headers.get("content-type") !== `application/x-${service}-request`) {
        throw new AppError(415, `expected content type application/x-${service}-request`);
      }
      const input = bodyOf(request, ctx.config.gitMaxPush, service);
      if (service === "git-upload-pack") {
        return await startRpc(ctx, service, (write) => uploadPack(ctx, actor, org, repo, { input, write }, { protocol, statelessRpc: true }));
      }
      const declaredBytes = Number(request.headers.get("content-length") ?? "0") || undefined;
      return await startRpc(ctx, service, (write) => receivePack(ctx, actor, org, repo, { input, write }, { statelessRpc: true, via: "git", declaredBytes }));
    } catch (error) {
      return refusal(error, ctx);
    }
  };
}

/**
 * Starts an RPC: refusals thrown before the first byte is written become proper HTTP statuses;
 * once output has begun the response is streaming.
 */
async function startRpc(ctx: Ctx, service: GitServiceName, run: (write: (chunk: Uint8Array) => Promise<void>) => Promise<void>): Promise<Response> {
  let firstWrite!: () => void;
  const started = new Promise<void>((r) => (firstWrite = r));
  let early: unknown = null;
  let resolveRun!: (w: (chunk: Uint8Array) => Promise<void>) => void;
  const writerReady = new Promise<(chunk: Uint8Array) => Promise<void>>((r) => (resolveRun = r));
  const pending: Uint8Array[] = [];
  let sink: ((chunk: Uint8Array) => Promise<void>) | null = null;
  const done = run(async (chunk) => {
    firstWrite();
    if (sink) return sink(chunk);
    pending.push(chunk);
    sink = await writerReady;
  })
    .catch((e) => {
      early = e;
    })
    .finally(() => firstWrite());
  await started;
  if (early && pending.length === 0) throw early;
  return streamed(ctx, `application/x-${service}-result`, async (write) => {
    for (const c of pending) await write(c);
    pending.length = 0;
    resolveRun(write);
    await done;
    if (early) throw early;
  });
}
