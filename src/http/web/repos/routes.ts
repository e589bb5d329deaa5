// The repository pages: tree, file, raw and download, history, commit; and the new-repository form.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { guessContentType, requireCommit, statBlob } from "../../../services/repos/content.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import {
  commitChecksView,
  commitView,
  createRepoFromForm,
  fileView,
  historyView,
  openRepoPage,
  repoChrome,
  repoFrame,
  treeView,
  type RepoFrame,
} from "../../../services/web/views.ts";
import type { RepoTarget } from "../../../services/access/target.ts";
import { pointedObject, pointedObjectSource } from "../../../services/lfs/lfs.ts";
import { MAX_POINTER_BYTES } from "../../../services/lfs/pointer.ts";
import { HIDE, orgParam, pageDrawer, queryParam, repoParam, restOf } from "../kit/draw.ts";
import { postForm } from "../kit/forms.ts";
import { immutablePage, isFullSha, notModified } from "../kit/etag.ts";
import { layout, page } from "../kit/layout.ts";
import { seg } from "../kit/html.ts";
import { readmeMarkup, treePage } from "./tree-page.ts";
import { fileLines, filePage } from "./file-page.ts";
import { highlightLines } from "./highlight.ts";
import { commitPage, historyPage } from "./history-page.ts";
import { newRepoPage } from "./new-page.ts";
import { chromeKey } from "./repo-layout.ts";

/** `attachment; filename=…` that survives any file name (quotes, non-ASCII, control characters). */
export function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** Which repository a page is of: a name reused after a deletion is another repository. */
function repoKey(r: RepoBody): string[] {
  return [r.org, r.name, String(r.created_at)];
}

/** Where a directory page starts (`?offset=`): a non-negative integer, else 0. */
function offsetOf(raw: string | undefined): number {
  return raw !== undefined && /^[0-9]{1,9}$/.test(raw) ? Number(raw) : 0;
}

/** The repository pages. */
export function repoWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  ctx.highlighter.warm();
  return new Elysia({ name: "routes.web.repo" })
    .get(
      "/:org/:repo",
      ({ request, params }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor, frame) => {
          const t = await openRepoPage(ctx, actor, org, repoParam(params.repo));
          const f = await repoFrame(ctx, t, []);
          const { tree, readme } = await treeView(ctx, t, f);
          return page(
            layout(frame, `${f.repo.org}/${f.repo.name}`, treePage(frame, f, tree, readme && { path: readme.path, html: await readmeMarkup(ctx, f, readme) })),
          );
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/tree/*",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        const offset = offsetOf(queryParam(query, "offset"));
        return draw(request, async (actor, frame) => {
          const rest = restOf(params["*"]);
          const t = await openRepoPage(ctx, actor, org, params.repo);
          const f = await repoFrame(ctx, t, rest);
          const tag = isFullSha(f.ref.short) ? immutablePage(frame, ["tree", ...repoKey(f.repo), f.ref.short, f.path, String(offset), chromeKey(f)]) : null;
          if (tag && notModified(request, tag)) return reachable(t, f, tag.notModified);
          const { tree, readme } = await treeView(ctx, t, f, offset);
          return page(
            layout(
              frame,
              `${f.path || f.ref.short} · ${f.repo.org}/${f.repo.name}`,
              treePage(frame, f, tree, readme && { path: readme.path, html: await readmeMarkup(ctx, f, readme) }),
            ),
            200,
            tag?.headers,
          );
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/blob/*",
      ({ request, params }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor, frame) => {
          const rest = restOf(params["*"]);
          const t = await openRepoPage(ctx, actor, org, params.repo);
          const f = await repoFrame(ctx, t, rest);
          const tag = isFullSha(f.ref.short) ? immutablePage(frame, ["blob", ...repoKey(f.repo), f.ref.short, f.path, chromeKey(f)]) : null;
          if (tag && notModified(request, tag)) return reachable(t, f, tag.notModified);
          const file = await fileView(ctx, t, f);
          const shown = file.text ? await highlightLines(ctx.highlighter, file.oid, f.path, fileLines(file.text), { log: ctx.log }) : null;
          // Shown plain only for now (the highlighting thread was busy): no validator, so the next view draws it highlighted.
          return page(
            layout(frame, `${f.path} · ${f.repo.org}/${f.repo.name}`, filePage(frame, f, file, shown)),
            200,
            shown?.settled === false ? undefined : tag?.headers,
          );
        });
      },
      HIDE,
    )
    .get(
      "/:org/:repo/raw/*",
      ({ request, params, query }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor) => {
          const rest = restOf(params["*"]);
          const t = await openRepoPage(ctx, actor, org, params.repo);
          const f = await repoFrame(ctx, t, rest);
          // The id first: a revalidation is answered without reading the bytes, and big ones are
          // resolved off the event loop (issue 25 row 4).
          const blob = await statBlob(ctx, t, f.ref.full, f.path);
          const etag = `"${blob.oid}"`;
          // Why: a file at a commit id never changes; at a branch it may, so it is revalidated.
          const cache = isFullSha(f.ref.short) ? "private, max-age=31536000, immutable" : "private, no-cache";
          // Why sandbox: a stored file is someone else's content; even if a browser sniffed it as a
          // page it could run nothing on our origin.
          const headers: Record<string, string> = {
            etag,
            "cache-control": cache,
            "content-security-policy": "default-src 'none'; sandbox",
            "x-content-type-options": "nosniff",
            vary: "Cookie",
          };
          if (queryParam(query, "download") !== undefined) headers["content-disposition"] = attachment(f.path.split("/").pop()!);
          if (
            request.headers
              .get("if-none-match")
              ?.split(",")
              .some((t) => t.trim().replace(/^W\//, "") === etag)
          )
            return new Response(null, { status: 304, headers });
          const data = await blob.read();
          // A Git LFS pointer: the object's bytes (S3: the bucket serves them on a presigned URL; fs: streamed).
          const lfs = blob.size <= MAX_POINTER_BYTES ? await pointedObject(ctx, t.repo, data) : null;
          if (lfs?.stored) {
            const source = await pointedObjectSource(ctx, t.repo, lfs.oid, {
              contentType: guessContentType(blob.name, new Uint8Array(0)),
              disposition: headers["content-disposition"],
            });
            if (source.kind === "redirect") return new Response(null, { status: 302, headers: { location: source.url, "cache-control": "private, no-store" } });
            const sample = await Bun.file(source.path).slice(0, 8000).bytes();
            return new Response(Bun.file(source.path), {
              headers: { ...headers, "content-type": guessContentType(blob.name, sample), "content-length": String(source.size) },
            });
          }
          return new Response(data as Uint8Array<ArrayBuffer>, { headers: { ...headers, "content-type": guessContentType(blob.name, data) } });
        });
      },
      HIDE,
    )
    .get("/:org/:repo/commits", ({ request, params, query }) => history(request, orgParam(params.org), params.repo, [], query), HIDE)
    .get("/:org/:repo/commits/*", ({ request, params, query }) => history(request, orgParam(params.org), params.repo, restOf(params["*"]), query), HIDE)
    .get(
      "/:org/:repo/commit/:sha",
      ({ request, params }) => {
        const org = orgParam(params.org);
        return draw(request, async (actor, frame) => {
          // Only a full id is immutable: an abbreviation could become ambiguous as objects arrive.
          const t = await openRepoPage(ctx, actor, org, repoParam(params.repo));
          const chrome = await repoChrome(ctx, t);
          const repo = chrome.repo;
          // The commit never changes, its checks do: their states are part of the validator, so a
          // finished CI job draws the page again (one query, 304 or not).
          const full = isFullSha(params.sha);
          const early = full ? await commitChecksView(ctx, t, params.sha) : null;
          const tag = early
            ? immutablePage(frame, ["commit", ...repoKey(repo), params.sha, chromeKey(chrome), ...early.map((c) => `${c.job_id}:${c.state}:${c.key}`)])
            : null;
          if (tag && notModified(request, tag)) {
            // Why before the 304: a commit no longer reachable is a 404, cached or not.
            await requireCommit(ctx, t, params.sha);
            return tag.notModified;
          }
          const v = await commitView(ctx, t, params.sha);
          const checks = early ?? (await commitChecksView(ctx, t, v.commit.sha));
          let plain = false;
          const markup = await commitPage(frame, chrome, v.commit, v.diff, checks, ctx.highlighter, () => {
            plain = true;
          });
          // Drawn plain only for now (the highlighting thread was busy): no validator, so the next view draws it coloured.
          return page(
            layout(frame, `${v.commit.message.split("\n")[0]} · ${repo.org}/${repo.name}@${v.commit.sha.slice(0, 10)}`, markup),
            200,
            plain ? undefined : tag?.headers,
          );
        });
      },
      HIDE,
    )
    .post(
      "/:org/new",
      ({ request, params, body }) => {
        const org = orgParam(params.org);
        return postForm(ctx, request, body, {
          read: (form) => ({ name: form.get("name") ?? "", description: form.get("description") ?? "", public: form.get("visibility") === "public" }),
          act: async ({ actor }, values) => {
            const repo = await createRepoFromForm(ctx, actor, org, values);
            return `/${seg(repo.org)}/${seg(repo.name)}`;
          },
          // A refusal the person can fix (name, quota, taken, not allowed) re-renders the form with the reason.
          again: async ({ frame }, error, values) =>
            page(layout(frame, `New repository · ${org}`, newRepoPage(org, frame.csrf, values, error.message)), error.status),
        });
      },
      HIDE,
    );

  /**
   * `answer` (a 304) once the page's commit is readable: a commit no longer reachable is a 404,
   * cached or not (services/repos/content.ts requireCommit). A branch named like an id is a ref.
   */
  async function reachable(t: RepoTarget, f: RepoFrame, answer: Response): Promise<Response> {
    if (f.ref.full === f.ref.short) await requireCommit(ctx, t, f.ref.short);
    return answer;
  }

  function history(request: Request, org: string, repo: string, rest: string[], query: unknown): Promise<Response> {
    return draw(request, async (actor, frame) => {
      const t = await openRepoPage(ctx, actor, org, repo);
      const f = await repoFrame(ctx, t, rest);
      // The filter form sends ?path=; the path in the URL wins when both are given.
      const filter = (queryParam(query, "path") ?? "").replace(/^\/+|\/+$/g, "");
      if (!f.path && filter)
        return new Response(null, {
          status: 303,
          headers: {
            location: `/${seg(f.repo.org)}/${seg(f.repo.name)}/commits/${f.ref.short.split("/").map(seg).join("/")}/${filter.split("/").map(seg).join("/")}`,
          },
        });
      const list = await historyView(ctx, t, f, queryParam(query, "cursor"));
      return page(layout(frame, `History · ${f.repo.org}/${f.repo.name}`, historyPage(frame, f, list)));
    });
  }
}
