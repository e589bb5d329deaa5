// Repository content over JSON: the commit API, refs, trees, blobs, history, protections
// (SPEC §2.3, §4.6; DECISIONS §3).
import { Elysia, t } from "elysia";
import { Invalid } from "../../../errors.ts";
import { checkOperationKinds, createCommit } from "../../../services/repos/commits.ts";
import { commitChecks, getBlob, getCommit, getTree, listCommits } from "../../../services/repos/content.ts";
import { CheckList } from "../../../services/ci/schemas.ts";
import type { Ctx } from "../../../services/context.ts";
import { deleteProtection, listProtections, putProtection } from "../../../services/repos/protections.ts";
import { deleteRef, listRefs, putRef } from "../../../services/repos/refs.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import {
  BlobBytes,
  BlobRange,
  CommitCreated,
  CommitDetail,
  CommitList,
  CommitRequest,
  CommitsQuery,
  PathQuery,
  Protection,
  ProtectionList,
  ProtectionPut,
  Ref,
  RefConflict,
  RefDeleteQuery,
  RefList,
  RefPut,
  Tree,
} from "../../../services/repos/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { jsonAnswer, noContent } from "../../responses.ts";

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
  /** The request's repository, resolved once (the services decide what else they need on it). */
  const target = (request: Request, params: { org: string; repo: string }) => openRepo(ctx, callerOf(request), params.org, params.repo);
  /** The path's `*` decoded first (a malformed escape is 400 before any access check, as before), then the target. */
  const targetAt = async (request: Request, params: { org: string; repo: string; "*": string }) => {
    const rest = decodeParam(params["*"]);
    return { t: await target(request, params), rest };
  };
  return new Elysia({ name: "routes.content" })
    .post(
      `${base}/commits`,
      async ({ request, params, body, set }) => {
        const out = await createCommit(ctx, await target(request, params), body);
        set.status = 201;
        return out;
      },
      {
        // Before the schema: an unknown `op` is a value outside an enumeration (422), not malformed (400).
        transform: ({ body }) => checkOperationKinds(body),
        body: CommitRequest,
        response: { 201: CommitCreated, ...errors(400, 401, 402, 403, 404, 413, 422), 409: RefConflict },
        detail: {
          summary: "Create a commit from JSON operations",
          description:
            "At most 10,000 operations. 409 with `current` (the branch's tip, or null) when expected_parent does not match; 422 when an operation does not apply to the tree (deleting a missing file, a file where a directory is); 403 when a branch protection refuses.",
        },
      },
    )
    .get(`${base}/commits`, async ({ request, params, query }) => listCommits(ctx, await target(request, params), query), {
      query: CommitsQuery,
      response: { 200: CommitList, ...errors(400, 401, 404) },
      detail: { summary: "History, newest first by committer date, optionally of one path" },
    })
    .get(`${base}/commits/:sha`, async ({ request, params }) => getCommit(ctx, await target(request, params), params.sha), {
      response: { 200: CommitDetail, ...errors(401, 404) },
      detail: { summary: "One commit with parents, author, committer, message, context and changed paths" },
    })
    .get(`${base}/commits/:sha/checks`, async ({ request, params }) => commitChecks(ctx, await target(request, params), params.sha), {
      response: { 200: CheckList, ...errors(401, 404) },
      detail: {
        summary: "A commit's check results, by key",
        description:
          "{sha} is any revision the content API resolves (a branch, a tag, a full or abbreviated id). Each check is a CI job's latest state for the commit; 404 for an unknown revision.",
      },
    })
    .get(
      `${base}/tree/*`,
      async ({ request, params, query }) => {
        const { t, rest } = await targetAt(request, params);
        return jsonAnswer(await getTree(ctx, t, rest, query.path));
      },
      {
        query: PathQuery,
        response: { 200: Tree, ...errors(400, 401, 404) },
        detail: { summary: "Directory listing at a ref (branch, tag, full ref name, HEAD or sha) and path" },
      },
    )
    .get(
      `${base}/blob/*`,
      async ({ request, params, query }) => {
        const { t, rest } = await targetAt(request, params);
        const blob = await getBlob(ctx, t, rest, query.path);
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
      {
        query: PathQuery,
        response: {
          200: BlobBytes,
          206: BlobRange,
          304: t.Null({ description: "not modified: If-None-Match named the blob id" }),
          ...errors(400, 401, 404),
          416: t.Null({ description: "range not satisfiable; Content-Range: bytes */<size>" }),
        },
        detail: { summary: "Raw file bytes (ETag = blob id, If-None-Match, one Range); the path query is required" },
      },
    )
    .get(`${base}/refs`, async ({ request, params }) => listRefs(ctx, await target(request, params)), {
      response: { 200: RefList, ...errors(401, 404) },
      detail: { summary: "List refs by name" },
    })
    .put(
      `${base}/refs/*`,
      async ({ request, params, body }) => {
        const { t, rest } = await targetAt(request, params);
        return putRef(ctx, t, rest, body);
      },
      {
        body: RefPut,
        response: { 200: Ref, ...errors(400, 401, 402, 403, 404, 413, 422), 409: RefConflict },
        detail: {
          summary: "Create or move a ref with compare-and-swap",
          description:
            "409 with `current` when the ref is not at `expected` or the name clashes with an existing ref; 422 when the target is missing or of the wrong type; 403 when a branch protection refuses.",
        },
      },
    )
    .delete(
      `${base}/refs/*`,
      async ({ request, params, query, set }) => {
        const { t, rest } = await targetAt(request, params);
        await deleteRef(ctx, t, rest, query.expected);
        return noContent(set);
      },
      {
        query: RefDeleteQuery,
        response: { 204: noContent.schema, ...errors(400, 401, 402, 403, 404), 409: RefConflict },
        detail: { summary: "Delete a ref (?expected=SHA for compare-and-swap; 409 with `current`)" },
      },
    )
    .get(`${base}/protections`, async ({ request, params }) => listProtections(ctx, await target(request, params)), {
      response: { 200: ProtectionList, ...errors(401, 403, 404) },
      detail: { summary: "Branch protections, by pattern (repo admin)" },
    })
    .put(
      `${base}/protections/*`,
      async ({ request, params, body }) => {
        const { t, rest } = await targetAt(request, params);
        return putProtection(ctx, t, rest, body);
      },
      {
        body: ProtectionPut,
        response: { 200: Protection, ...errors(400, 401, 403, 404, 413) },
        detail: { summary: "Create or replace a branch protection (pattern like main or release/*; repo admin)" },
      },
    )
    .delete(
      `${base}/protections/*`,
      async ({ request, params, set }) => {
        const { t, rest } = await targetAt(request, params);
        await deleteProtection(ctx, t, rest);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(400, 401, 403, 404) }, detail: { summary: "Remove a branch protection (repo admin)" } },
    );
}
