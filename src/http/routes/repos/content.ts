// Repository content over JSON: the commit API, refs, trees, blobs, history, protections
// (SPEC §2.3, §4.6; DECISIONS §3).
import { Elysia, t } from "elysia";
import { Invalid } from "../../../errors.ts";
import { createCommit } from "../../../services/repos/commits.ts";
import { getBlob, getCommit, getTree, listCommits } from "../../../services/repos/content.ts";
import type { Ctx } from "../../../services/context.ts";
import { deleteProtection, listProtections, putProtection } from "../../../services/repos/protections.ts";
import { deleteRef, listRefs, putRef } from "../../../services/repos/refs.ts";
import { callerOf } from "../../principal.ts";

const Operation = t.Object({
  op: t.String({ description: "put, put_base64 or delete" }),
  path: t.String(),
  content: t.Optional(t.String()),
});

const CommitBody = t.Object({
  branch: t.Optional(t.String({ description: "default main" })),
  expected_parent: t.Optional(t.Nullable(t.String({ description: "the branch must be here; null = must not exist" }))),
  message: t.String(),
  author: t.Optional(t.Object({ name: t.String(), email: t.String() })),
  context: t.Optional(t.Unknown({ description: "any JSON, recorded immutably with the commit" })),
  operations: t.Array(Operation, { maxItems: 10000 }),
});

/** A percent-decoded path parameter; a malformed escape is the caller's error (400). */
function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw Invalid("malformed percent-escape in the path");
  }
}

/** Whether If-None-Match (a list of entity tags, weak or strong, or *) matches `etag` (RFC 9110 weak comparison). */
function noneMatch(header: string | null, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/**
 * Parses a single `bytes=a-b` range (RFC 9110): null when absent, in another unit, or a
 * multi-range (the whole body is sent then); "invalid" when unsatisfiable.
 */
function parseRange(header: string | null, size: number): { start: number; end: number } | "invalid" | null {
  if (!header) return null;
  const value = header.trim();
  if (!value.toLowerCase().startsWith("bytes=") || value.includes(",")) return null;
  const m = /^bytes=(\d*)-(\d*)$/i.exec(value);
  if (!m || (m[1] === "" && m[2] === "")) return "invalid";
  let start: number;
  let end: number;
  if (m[1] === "") {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start > end || start >= size ? "invalid" : { start, end };
}

/** Content routes. */
export function contentRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo";
  return new Elysia({ name: "routes.content" })
    .post(
      `${base}/commits`,
      async ({ request, params, body, set }) => {
        const out = await createCommit(ctx, callerOf(request), params.org, params.repo, body as Record<string, unknown>);
        set.status = 201;
        return out;
      },
      { body: CommitBody, detail: { summary: "Create a commit from JSON operations (409 with current on expected_parent mismatch)" } },
    )
    .get(`${base}/commits`, ({ request, params, query }) => listCommits(ctx, callerOf(request), params.org, params.repo, query), {
      query: t.Object({ ref: t.Optional(t.String()), path: t.Optional(t.String()), limit: t.Optional(t.String()), cursor: t.Optional(t.String()) }),
      detail: { summary: "History, newest first, optionally of one path" },
    })
    .get(`${base}/commits/:sha`, ({ request, params }) => getCommit(ctx, callerOf(request), params.org, params.repo, params.sha), {
      detail: { summary: "One commit with parents, author, committer, message, context and changed paths" },
    })
    .get(`${base}/tree/*`, ({ request, params, query }) => getTree(ctx, callerOf(request), params.org, params.repo, decodeParam(params["*"]), query.path), {
      query: t.Object({ path: t.Optional(t.String()) }),
      detail: { summary: "Directory listing at a ref and path" },
    })
    .get(
      `${base}/blob/*`,
      async ({ request, params, query }) => {
        const blob = await getBlob(ctx, callerOf(request), params.org, params.repo, decodeParam(params["*"]), query.path);
        const etag = `"${blob.oid}"`;
        const headers: Record<string, string> = {
          "content-type": blob.contentType,
          etag,
          "accept-ranges": "bytes",
          "x-content-type-options": "nosniff",
          "content-security-policy": "default-src 'none'; sandbox",
          "cache-control": "private, no-cache",
        };
        if (noneMatch(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
        const range = parseRange(request.headers.get("range"), blob.data.byteLength);
        if (range === "invalid") return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${blob.data.byteLength}` } });
        if (range) {
          return new Response(blob.data.subarray(range.start, range.end + 1) as BodyInit, {
            status: 206,
            headers: { ...headers, "content-range": `bytes ${range.start}-${range.end}/${blob.data.byteLength}` },
          });
        }
        return new Response(blob.data as BodyInit, { status: 200, headers });
      },
      { query: t.Object({ path: t.Optional(t.String()) }), detail: { summary: "Raw file bytes (ETag = blob id, Range supported)" } },
    )
    .get(`${base}/refs`, ({ request, params }) => listRefs(ctx, callerOf(request), params.org, params.repo), { detail: { summary: "List refs" } })
    .put(
      `${base}/refs/*`,
      ({ request, params, body }) => putRef(ctx, callerOf(request), params.org, params.repo, decodeParam(params["*"]), body as Record<string, unknown>),
      {
        body: t.Object({ target: t.String(), expected: t.Optional(t.Nullable(t.String())) }),
        detail: { summary: "Create or move a ref with compare-and-swap (409 with current)" },
      },
    )
    .delete(
      `${base}/refs/*`,
      async ({ request, params, query, set }) => {
        await deleteRef(ctx, callerOf(request), params.org, params.repo, decodeParam(params["*"]), query.expected);
        set.status = 204;
        return null;
      },
      { query: t.Object({ expected: t.Optional(t.String()) }), detail: { summary: "Delete a ref (?expected=SHA for compare-and-swap)" } },
    )
    .get(`${base}/protections`, ({ request, params }) => listProtections(ctx, callerOf(request), params.org, params.repo), {
      detail: { summary: "Branch protections (admins)" },
    })
    .put(
      `${base}/protections/*`,
      ({ request, params, body }) => putProtection(ctx, callerOf(request), params.org, params.repo, decodeParam(params["*"]), body as Record<string, unknown>),
      {
        body: t.Object({
          allow_force_push: t.Optional(t.Boolean()),
          allow_deletion: t.Optional(t.Boolean()),
          require_change: t.Optional(t.Boolean()),
          required_checks: t.Optional(t.Array(t.String())),
        }),
        detail: { summary: "Create or replace a branch protection (pattern like main or release/*)" },
      },
    )
    .delete(
      `${base}/protections/*`,
      async ({ request, params, set }) => {
        await deleteProtection(ctx, callerOf(request), params.org, params.repo, decodeParam(params["*"]));
        set.status = 204;
        return null;
      },
      { detail: { summary: "Remove a branch protection" } },
    );
}
