// Git LFS over HTTP (issue 31; git-lfs docs/api/batch.md, basic-transfers.md, server-discovery.md):
//
//   POST      /{org}/{repo}.git/info/lfs/objects/batch   the batch API (auth as git over HTTP, or
//                                                        the header `git-lfs-authenticate` gave)
//   GET, PUT  /{org}/{repo}.git/info/lfs/objects/{oid}   fs storage: the bytes, by an action's credential
//   POST      /{org}/{repo}.git/info/lfs/verify          S3 storage: the verify action
//
// These speak the LFS formats (application/vnd.git-lfs+json, `{"message"}` errors: DECISIONS §5),
// not the /v1 ones. Mounted as an onRequest hook ahead of routing, so no body parser of the
// application ever reads an upload. The lock routes (…/info/lfs/locks) are not answered here.
import { AppError, databaseUnavailable, Invalid, RateLimited } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { credentialOf, readCredential } from "../../../services/lfs/credentials.ts";
import {
  batchObjects,
  checkDeclaredLength,
  MAX_BATCH_BODY,
  objectFile,
  receiveObject,
  transferGrant,
  verifyObject,
  type LfsCaller,
} from "../../../services/lfs/lfs.ts";
import { now } from "../../../services/context.ts";
import { jsonTooDeep, JSON_MAX_DEPTH, readBodyLimited } from "../../body.ts";
import { pathOf } from "../../path.ts";
import { resolveCaller } from "../../principal.ts";

const LFS_TYPE = "application/vnd.git-lfs+json";
const PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/info\/lfs\/(objects\/batch|objects\/[0-9a-f]{64}|verify)$/;

function lfsJson(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": LFS_TYPE, ...extra } });
}

/** An LFS error answer (`{"message"}`); a 401 carries the Basic challenge under both names (LFS-Authenticate keeps browsers from prompting). */
function lfsError(error: AppError): Response {
  const extra: Record<string, string> = {};
  if (error.code === "unauthenticated") {
    extra["lfs-authenticate"] = 'Basic realm="svc"';
    extra["www-authenticate"] = 'Basic realm="svc", charset="UTF-8"';
  }
  if (error instanceof RateLimited) extra["retry-after"] = String(error.retryAfterSeconds);
  return lfsJson(error.status, { message: error.message }, extra);
}

/** The Git LFS request handler: a Response for the LFS object paths, undefined for everything else. */
export function lfsRequests(ctx: Ctx) {
  return ({ request }: { request: Request }): Promise<Response> | undefined => {
    const path = pathOf(request.url);
    // Cheap test first: this runs for every request.
    if (!path.includes("/info/lfs/")) return undefined;
    const m = PATH.exec(path);
    if (!m) return undefined;
    return answer(ctx, request, m[1]!, m[2]!, m[3]!).catch((error: unknown) => {
      if (error instanceof AppError) return lfsError(error);
      const unavailable = databaseUnavailable(error);
      if (unavailable) return lfsError(unavailable);
      ctx.log.error("lfs request failed", { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      return lfsJson(500, { message: "internal error" });
    });
  };
}

async function answer(ctx: Ctx, request: Request, rawOrg: string, rawRepo: string, endpoint: string): Promise<Response> {
  const org = decodeURIComponent(rawOrg);
  const repo = decodeURIComponent(rawRepo);
  const method = request.method;
  const credential = credentialOf(request.headers.get("authorization"));
  if (endpoint === "objects/batch") {
    if (method !== "POST") return lfsJson(405, { message: `${method} is not allowed here; the batch API accepts POST` }, { allow: "POST" });
    const accept = request.headers.get("accept");
    if (accept && !/application\/vnd\.git-lfs\+json|application\/json|\*\/\*/.test(accept)) {
      return lfsJson(406, { message: `the Accept header must allow ${LFS_TYPE}` });
    }
    const caller = await callerOf(ctx, request, credential);
    const body = await readJson(request);
    return lfsJson(200, await batchObjects(ctx, caller, { org, repo, body }));
  }
  if (endpoint === "verify") {
    if (method !== "POST") return lfsJson(405, { message: `${method} is not allowed here; verify accepts POST` }, { allow: "POST" });
    await verifyObject(ctx, credential, await readJson(request));
    return lfsJson(200, { message: "ok" });
  }
  const oid = endpoint.slice("objects/".length);
  if (method === "GET" || method === "HEAD") {
    const grant = transferGrant(ctx, credential, "download", oid);
    const file = await objectFile(ctx, grant);
    return serveFile(request, file.path, file.size);
  }
  if (method === "PUT") {
    const grant = transferGrant(ctx, credential, "upload", oid);
    const declared = request.headers.get("content-length");
    checkDeclaredLength(grant, declared === null ? null : Number(declared));
    const body = (request.body ?? (async function* () {})()) as unknown as AsyncIterable<Uint8Array>;
    await receiveObject(ctx, grant, body);
    return new Response(null, { status: 200 });
  }
  return lfsJson(405, { message: `${method} is not allowed here; this path accepts GET, PUT` }, { allow: "GET, HEAD, PUT" });
}

/**
 * The caller of the batch and lock APIs: the bearer of a `git-lfs-authenticate` header, or whoever git over HTTP would
 * see (Basic with a token as password, Bearer, a session).
 */
export async function callerOf(ctx: Ctx, request: Request, credential: string | null): Promise<LfsCaller> {
  if (credential) {
    const grant = readCredential(ctx, credential, Math.floor(now() / 1000));
    if (!grant || grant.kind !== "ssh") throw new AppError("unauthenticated", "missing, expired or unusable LFS credential");
    return { kind: "ssh", grant };
  }
  return { kind: "principal", principal: await resolveCaller(ctx, request) };
}

/** A small JSON body (the batch request, verify), bounded before parsing. */
async function readJson(request: Request): Promise<unknown> {
  const bytes = await readBodyLimited(request, MAX_BATCH_BODY);
  if (jsonTooDeep(bytes, JSON_MAX_DEPTH)) throw Invalid(`JSON body nested deeper than ${JSON_MAX_DEPTH} levels`);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AppError("unprocessable", "the request body is not valid JSON");
  }
}

/** A stored file, whole or one byte range (`Range: bytes=a-b`, `a-`, `-n`): a resumed download asks for the rest. */
export function serveFile(request: Request, path: string, size: number, extra: Record<string, string> = {}): Response {
  const headers: Record<string, string> = { "content-type": "application/octet-stream", "accept-ranges": "bytes", ...extra };
  const file = Bun.file(path);
  const range = request.headers.get("range");
  const r = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  if (r && (r[1] || r[2])) {
    let start: number;
    let end: number;
    if (r[1]) {
      start = Number(r[1]);
      end = r[2] ? Math.min(Number(r[2]), size - 1) : size - 1;
    } else {
      start = Math.max(0, size - Number(r[2]));
      end = size - 1;
    }
    if (start >= size || start > end) return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${size}` } });
    headers["content-range"] = `bytes ${start}-${end}/${size}`;
    headers["content-length"] = String(end - start + 1);
    return new Response(request.method === "HEAD" ? null : file.slice(start, end + 1), { status: 206, headers });
  }
  headers["content-length"] = String(size);
  return new Response(request.method === "HEAD" ? null : file, { status: 200, headers });
}
