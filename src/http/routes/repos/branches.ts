// Branch and tag lists and archive downloads (DECISIONS §5): GET …/branches, …/tags and
// …/archive/{ref}?format=tar.gz|zip. Read access; a repository the caller may not see is 404.
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { Invalid } from "../../../errors.ts";
import { ARCHIVE_FORMATS, getArchive, type Archive, type ArchiveFormat } from "../../../services/repos/archive.ts";
import { BranchList, listBranches, listTags, TagList } from "../../../services/repos/branches.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { errors, PageQuery } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

const EXAMPLE_SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8";

/** `attachment; filename=…` for an archive name (any ref: quotes and non-ASCII are replaced in the plain form). */
export function archiveDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * The answer that streams `archive`: its file name, and caching by what it is of. Why immutable
 * only at a full commit id: a branch or tag may move, so its archive is revalidated (the ETag is
 * the commit, format and file name, so an unchanged branch answers 304 without a byte made).
 */
export async function archiveResponse(request: Request, archive: Archive, format: ArchiveFormat): Promise<Response> {
  // The file name too: the same commit under another ref or repository name has another top directory.
  const etag = `"${archive.commit}.${format}.${Bun.hash(archive.filename).toString(36)}"`;
  const headers: Record<string, string> = {
    "content-type": archive.contentType,
    "content-disposition": archiveDisposition(archive.filename),
    etag,
    "cache-control": archive.immutable ? "private, max-age=31536000, immutable" : "private, no-cache",
    "x-content-type-options": "nosniff",
    vary: "Cookie, Authorization",
  };
  const inm = request.headers.get("if-none-match");
  if (inm?.split(",").some((v) => v.trim().replace(/^W\//, "") === etag)) return new Response(null, { status: 304, headers });
  return new Response(await archive.open(), { headers });
}

/** The format query: `tar.gz` (default) or `zip`; anything else 400. */
export function archiveFormat(raw: string | undefined): ArchiveFormat {
  if (raw === undefined || raw === "") return "tar.gz";
  if (!(ARCHIVE_FORMATS as readonly string[]).includes(raw)) throw Invalid(`format must be one of ${ARCHIVE_FORMATS.join(", ")}`);
  return raw as ArchiveFormat;
}

/** A path's `*` percent-decoded; a malformed escape is 400. */
function decodeRest(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw Invalid("malformed percent-escape in the path");
  }
}

const ArchiveQuery = t.Object({ format: t.Optional(t.String({ description: "tar.gz (default) or zip", examples: ["zip"] })) });

const ArchiveBytes = t.String({
  format: "binary",
  description:
    "The tree at the ref, every path under `{repo}-{ref}/` (slashes in the ref as `-`): application/gzip (a tar) or application/zip. Content-Disposition names `{repo}-{ref}.{ext}`. Git LFS files are their pointers, as stored; submodules are left out. Streamed; a tree over SVC_ARCHIVE_MAX bytes or SVC_ARCHIVE_MAX_ENTRIES entries answers 413 first.",
  examples: ["(binary)"],
  headers: {
    "content-disposition": t.String({ examples: [`attachment; filename="app-main.tar.gz"; filename*=UTF-8''app-main.tar.gz`] }),
    etag: t.String({ description: "the quoted commit id, format and a hash of the file name", examples: [`"${EXAMPLE_SHA}.tar.gz.1x2y3z"`] }),
    "cache-control": t.String({ description: "immutable when the ref is a full commit id", examples: ["private, no-cache"] }),
  },
});

/** Branches, tags and archives. */
export function branchRoutes(ctx: Ctx) {
  const base = "/v1/orgs/:org/repos/:repo";
  const target = (request: Request, params: { org: string; repo: string }) => openRepo(ctx, callerOf(request), params.org, params.repo);
  return new Elysia({ name: "routes.branches" })
    .get(`${base}/branches`, async ({ request, params, query }) => listBranches(ctx, await target(request, params), query), {
      query: PageQuery,
      response: { 200: BranchList, ...errors(400, 401, 404) },
      detail: { summary: "Branches by name, with their commit and its time", description: "limit (1-100, default 30) and cursor page the list." },
    })
    .get(`${base}/tags`, async ({ request, params, query }) => listTags(ctx, await target(request, params), query), {
      query: PageQuery,
      response: { 200: TagList, ...errors(400, 401, 404) },
      detail: { summary: "Tags by name, with the commit each peels to and its time", description: "limit (1-100, default 30) and cursor page the list." },
    })
    .get(
      `${base}/archive/*`,
      async ({ request, params, query }) => {
        const ref = decodeRest(params["*"]);
        const format = archiveFormat(query.format);
        const archive = await getArchive(ctx, await target(request, params), ref, format);
        return archiveResponse(request, archive, format);
      },
      {
        query: ArchiveQuery,
        response: {
          200: ArchiveBytes,
          304: t.Null({ description: "not modified: If-None-Match named this archive's ETag" }),
          ...errors(400, 401, 404, 413, 422),
        },
        detail: {
          summary: "The tree at a ref (branch, tag, full ref, HEAD or commit id) as a .tar.gz or .zip",
          description:
            "Made without the git binary; as `git archive` (tree order, executable bits, symlinks) except that submodules are left out, .gitattributes export rules are not applied and Git LFS files are their pointers. 413 when the tree is over the server's caps; 422 when a name cannot be written to a zip.",
        },
      },
    );
}
