// The Git LFS File Locking API at /{org}/{repo}.git/info/lfs/locks (git-lfs docs/api/locking.md):
//
//   All File Locking requests require the following HTTP headers:
//       Accept: application/vnd.git-lfs+json
//       Content-Type: application/vnd.git-lfs+json
//   POST /locks, GET /locks, POST /locks/verify, POST /locks/:id/unlock; errors are
//   `{ "message", "request_id"?, "documentation_url"? }`.
//
// The LFS routes speak the spec's own formats (DECISIONS §5 "Git LFS"), not `{ error }`. The
// caller is resolved as for the batch API (lfs.ts `callerOf`): as git over HTTP (tokens by Basic
// or Bearer; 401 with a Basic challenge so the client asks its credential helper; masked 404 for
// what it may not see), or the bearer of a `git-lfs-authenticate` header from an SSH remote.
import { Elysia } from "elysia";
import { AppError, databaseUnavailable, Invalid, RateLimited, UnsupportedMediaType } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import type { RepoTarget } from "../../../services/access/target.ts";
import { createLock, listLocks, openLockRepo, unlockLock, verifyLocks } from "../../../services/lfs/locks.ts";
import { jsonTooDeep, JSON_MAX_DEPTH } from "../../body.ts";
import { errorResponse } from "../../errors.ts";
import { policy } from "../../policy.ts";
import { requestIds } from "../../app.ts";
import { callerOf } from "./lfs.ts";
import { credentialOf } from "../../../services/lfs/credentials.ts";

/** The media type of every LFS request and answer. */
export const LFS_MEDIA_TYPE = "application/vnd.git-lfs+json";
/** A lock request's body at most: a path of 4 KiB and a ref name fit many times over. */
const LOCK_BODY_LIMIT = 64 * 1024;

/** Read as its exact bytes within the limit (our parser, not the generic one: the media type is the spec's). */
const LOCK_ROUTE = { detail: { hide: true, ...policy({ body: { raw: LOCK_BODY_LIMIT } }) } } as const;
const HIDDEN = { detail: { hide: true } } as const;

/** An LFS JSON answer. */
function lfsJson(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": LFS_MEDIA_TYPE, ...headers } });
}

/** Any thrown value as the spec's error body; unexpected ones are logged with the request id and masked. */
function lfsError(ctx: Ctx, request: Request, thrown: unknown): Response {
  const error = thrown instanceof AppError ? thrown : databaseUnavailable(thrown);
  if (!error) {
    const id = requestIds.get(request) ?? "unknown";
    errorResponse(thrown, ctx.log, id, request);
    return lfsJson(500, { message: "internal error", request_id: id });
  }
  const headers: Record<string, string> = {};
  // Why the challenge: git-lfs asks the credential helper and retries, as git does (it reads
  // LFS-Authenticate first; the batch API sends both too).
  if (error.code === "unauthenticated") {
    headers["lfs-authenticate"] = 'Basic realm="svc"';
    headers["www-authenticate"] = 'Basic realm="svc", charset="UTF-8"';
  }
  if (error instanceof RateLimited) headers["retry-after"] = String(error.retryAfterSeconds);
  if (error.extra.code === "database_unavailable") headers["retry-after"] = "5";
  return lfsJson(error.status, { message: error.message }, headers);
}

/** The request's JSON body (none: null): the spec's media type or plain JSON, within its depth limit. */
function bodyOf(request: Request, raw: unknown): unknown {
  const bytes = raw instanceof Uint8Array ? raw : new Uint8Array(0);
  if (bytes.byteLength === 0) return null;
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== LFS_MEDIA_TYPE && type !== "application/json")
    throw UnsupportedMediaType(`unsupported content type ${JSON.stringify(type || "none")}: send ${LFS_MEDIA_TYPE}`);
  if (jsonTooDeep(bytes, JSON_MAX_DEPTH)) throw Invalid(`JSON body nested deeper than ${JSON_MAX_DEPTH} levels`);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw Invalid("the request body is not valid JSON");
  }
}

/** The LFS locking routes. */
export function lfsLockRoutes(ctx: Ctx) {
  /** Resolves the caller and the repository, runs `fn`, and answers in the spec's format. */
  const serve =
    (operation: "download" | "upload", fn: (t: RepoTarget, request: Request, body: unknown) => Promise<Response>) =>
    async ({ request, params, body }: { request: Request; params: { org: string; repo: string }; body: unknown }): Promise<Response> => {
      try {
        const caller = await callerOf(ctx, request, credentialOf(request.headers.get("authorization")));
        const t = await openLockRepo(ctx, caller, params.org, params.repo, operation);
        return await fn(t, request, body);
      } catch (error) {
        return lfsError(ctx, request, error);
      }
    };
  return new Elysia({ name: "routes.lfs.locks" })
    .post(
      "/:org/:repo/info/lfs/locks",
      serve("upload", async (t, request, raw) => {
        const outcome = await createLock(ctx, t, bodyOf(request, raw));
        if (outcome.kind === "exists") return lfsJson(409, { lock: outcome.lock, message: outcome.message });
        return lfsJson(201, { lock: outcome.lock });
      }),
      LOCK_ROUTE,
    )
    .get(
      "/:org/:repo/info/lfs/locks",
      serve("download", async (t, request) => lfsJson(200, await listLocks(ctx, t, Object.fromEntries(new URL(request.url).searchParams)))),
      HIDDEN,
    )
    .post(
      "/:org/:repo/info/lfs/locks/verify",
      serve("upload", async (t, request, raw) => lfsJson(200, await verifyLocks(ctx, t, bodyOf(request, raw)))),
      LOCK_ROUTE,
    )
    .post(
      "/:org/:repo/info/lfs/locks/:id/unlock",
      async (c: { request: Request; params: { org: string; repo: string; id: string }; body: unknown }) =>
        serve("upload", async (t, request, raw) => lfsJson(200, await unlockLock(ctx, t, c.params.id, bodyOf(request, raw))))(c),
      LOCK_ROUTE,
    );
}
