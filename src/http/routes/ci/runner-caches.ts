// The agent's cache calls (issue 30, `actions/cache`; docs/api.md "CI caches"), with the per-job
// token: lookup, reserve, commit, and on the fs store the archive's bytes themselves (on S3 the
// agent moves them with presigned bucket URLs and these two content routes answer 404).
import { Elysia, t } from "elysia";
import { cacheContent, commitCache, lookupCache, reserveCache, writeCacheContent } from "../../../services/ci/caches.ts";
import { CacheCommitted, CacheHit, CacheLookup, CacheReserve, CacheReserved } from "../../../services/ci/caches-schemas.ts";
import type { Ctx } from "../../../services/context.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { policy } from "../../policy.ts";
import { noContent } from "../../responses.ts";

/**
 * Parses a single `bytes=a-b` range (RFC 9110): null when absent, in another unit, or a
 * multi-range (the whole body is sent then); "invalid" when unsatisfiable.
 */
function parseRange(header: string | null, size: number): { start: number; end: number } | "invalid" | null {
  if (!header) return null;
  const value = header.trim();
  if (!value.toLowerCase().startsWith("bytes=") || value.includes(",")) return null;
  const m = /^bytes=(\d{0,16})-(\d{0,16})$/i.exec(value);
  if (!m || (m[1] === "" && m[2] === "")) return "invalid";
  const start = m[1] === "" ? Math.max(0, size - Number(m[2])) : Number(m[1]);
  const end = m[1] === "" || m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  return start > end || start >= size ? "invalid" : { start, end };
}

/** The declared Content-Length, or null when absent or not a plain number. */
function contentLength(request: Request): number | null {
  const v = request.headers.get("content-length");
  return v !== null && /^\d{1,16}$/.test(v) ? Number(v) : null;
}

const Archive = t.String({ format: "binary", description: "the cache archive (gzip'd tar); one Range answers 206" });

/** Runner-facing cache routes. */
export function runnerCacheRoutes(ctx: Ctx) {
  const base = "/v1/runner/jobs/:job_id/caches";
  return new Elysia({ name: "routes.ci.runner-caches" })
    .post(
      `${base}/lookup`,
      async ({ request, params, body, set }) => {
        const hit = await lookupCache(ctx, callerOf(request), params.job_id, body);
        if (!hit) return noContent(set);
        return hit;
      },
      {
        body: CacheLookup,
        response: { 200: CacheHit, 204: noContent.schema, ...errors(400, 401, 404) },
        detail: {
          summary: "Find the cache to restore: the job's scope then the default branch's; key exactly, then key and restore keys as prefixes (204: a miss)",
        },
      },
    )
    .post(
      base,
      async ({ request, params, body, set }) => {
        const out = await reserveCache(ctx, callerOf(request), params.job_id, body);
        set.status = 201;
        return out;
      },
      {
        body: CacheReserve,
        response: { 201: CacheReserved, ...errors(400, 401, 404, 409, 413) },
        detail: { summary: "Reserve a cache entry in the job's scope and get where to PUT it (409: the key exists there, entries are immutable)" },
      },
    )
    .post(`${base}/:cache_id/commit`, ({ request, params }) => commitCache(ctx, callerOf(request), params.job_id, params.cache_id), {
      response: { 200: CacheCommitted, ...errors(401, 404, 409, 422) },
      detail: { summary: "Confirm the upload: the stored archive must have the reserved size; the entry is then restorable" },
    })
    .put(
      `${base}/:cache_id/content`,
      async ({ request, params, set }) => {
        await writeCacheContent(
          ctx,
          callerOf(request),
          params.job_id,
          params.cache_id,
          request.body as unknown as AsyncIterable<Uint8Array> | null,
          contentLength(request),
        );
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(400, 401, 404, 409, 413) },
        // Why a streamed body: an archive may be gigabytes; it goes to a temp file as it arrives, capped at the reserved size.
        detail: { summary: "fs store: upload the reserved archive (exactly the reserved size)", ...policy({ body: "stream" }) },
      },
    )
    .get(
      `${base}/:cache_id/content`,
      async ({ request, params }) => {
        const file = await cacheContent(ctx, callerOf(request), params.job_id, params.cache_id);
        const headers = { "content-type": "application/gzip", "accept-ranges": "bytes", "cache-control": "no-store" };
        const range = parseRange(request.headers.get("range"), file.size);
        if (range === "invalid") return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${file.size}` } });
        if (range) {
          return new Response(Bun.file(file.path).slice(range.start, range.end + 1), {
            status: 206,
            headers: { ...headers, "content-range": `bytes ${range.start}-${range.end}/${file.size}` },
          });
        }
        // Why Bun.file: the server sends it with sendfile, no copy through the process.
        return new Response(Bun.file(file.path), { status: 200, headers });
      },
      {
        response: { 200: Archive, 206: Archive, ...errors(401, 404), 416: t.Null({ description: "range not satisfiable; Content-Range: bytes */<size>" }) },
        detail: { summary: "fs store: download a cache archive the job may restore (one Range supported)" },
      },
    );
}
