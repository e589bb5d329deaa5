// People's pictures on the web (issue 33): GET /avatars/{handle} serves the uploaded picture, else
// the identicon of the name (for any well-formed name, person or not, so the address says nothing
// about who exists: an org or an unknown name gets its identicon too). The settings form uploads
// (multipart, at most 1 MiB of picture, refused by its declared length before the body is read)
// and removes one.
import { Elysia } from "elysia";
import { AppError, Invalid, TooLarge } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { AVATAR_MAX_BYTES, avatarPicture, removeAvatar, setAvatar } from "../../../services/people/avatar.ts";
import { isNamespaceName } from "../../../services/names.ts";
import { readBodyLimited } from "../../body.ts";
import { policy } from "../../policy.ts";
import { identicon } from "../kit/avatar.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import { pageDrawer, queryParam } from "../kit/draw.ts";
import { me, postForm, signInRequired, type FormInput } from "../kit/forms.ts";

/** What serves a picture: no script, no plugin, no same-origin powers even if opened as a page; the type is the sniffed one. */
export const AVATAR_HEADERS = { "content-security-policy": "default-src 'none'; sandbox", "x-content-type-options": "nosniff" } as const;
/** A picture at a versioned address never changes; at the plain one it may, so it is kept briefly. */
const FOREVER = "public, max-age=31536000, immutable";
const BRIEFLY = "public, max-age=300";
/** Room in a multipart body beyond the picture itself: boundaries, part headers, the form token. */
const MULTIPART_SLACK = 16 * 1024;

function picture(body: Uint8Array | string | null, type: string, cache: string, etag: string): Response {
  const headers = { "content-type": type, "cache-control": cache, etag, ...AVATAR_HEADERS };
  return body === null ? new Response(null, { status: 304, headers }) : new Response(body as BodyInit, { headers });
}

/**
 * The picture of `name`: uploaded (immutable when `v` is its version) or the identicon (immutable
 * at `v=i`). The ETag is the version, so a revalidation is answered 304 before the object is read.
 */
async function avatarResponse(ctx: Ctx, request: Request, name: string, v: string | undefined): Promise<Response> {
  if (!isNamespaceName(name)) return new Response("not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8", ...AVATAR_HEADERS } });
  const seen = request.headers.get("if-none-match");
  const up = await avatarPicture(ctx, name);
  if (up) {
    const etag = `"${up.version}"`;
    const cache = v === up.version ? FOREVER : BRIEFLY;
    if (seen === etag) return picture(null, up.type, cache, etag);
    const bytes = await up.bytes();
    if (bytes) return picture(bytes, up.type, cache, etag);
  }
  const etag = `"i"`;
  const cache = v === "i" ? FOREVER : BRIEFLY;
  return picture(seen === etag ? null : identicon(name), "image/svg+xml", cache, etag);
}

/** The multipart form's token and picture, or an empty form when the body is not one. */
async function readUpload(request: Request, bytes: Uint8Array): Promise<{ form: URLSearchParams; file: Uint8Array | null }> {
  const form = new URLSearchParams();
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data")) return { form, file: null };
  let parts: FormData;
  try {
    parts = await new Response(bytes as BodyInit, { headers: { "content-type": type } }).formData();
  } catch {
    return { form, file: null };
  }
  const token = parts.get(CSRF_FIELD);
  if (typeof token === "string") form.set(CSRF_FIELD, token);
  const file = parts.get("avatar");
  return { form, file: file && typeof file !== "string" && file.size > 0 ? new Uint8Array(await file.arrayBuffer()) : null };
}

type Again = (i: FormInput, error: AppError, which: "avatarError") => Promise<Response>;

/** GET /avatars/{handle} and the settings form's upload and removal. */
export function avatarSettingsRoutes(ctx: Ctx, again: Again) {
  const draw = pageDrawer(ctx);
  const limit = AVATAR_MAX_BYTES + MULTIPART_SLACK;
  const tooLarge = TooLarge(`the picture is larger than ${AVATAR_MAX_BYTES / 1024 / 1024} MiB`);
  return new Elysia({ name: "routes.web.account.avatar" })
    .get("/avatars/:handle", ({ request, params, query }) => avatarResponse(ctx, request, params.handle, queryParam(query, "v")), { detail: { hide: true } })
    .post(
      "/settings/profile/avatar",
      async ({ request }) => {
        let bytes: Uint8Array;
        try {
          bytes = await readBodyLimited(request, limit);
        } catch (error) {
          if (!(error instanceof AppError && error.code === "too_large")) throw error;
          // Nothing changes, so no form token is needed to say so; the body was never read.
          return draw(request, async (actor, frame) => {
            if (!frame.viewer) return signInRequired(request, frame, "/settings/profile");
            return again({ actor, frame, form: new URLSearchParams() }, tooLarge, "avatarError");
          });
        }
        const { form, file } = await readUpload(request, bytes);
        return postForm(ctx, request, form, {
          back: "/settings/profile",
          again: (i, e) => again(i, e, "avatarError"),
          act: async (i) => {
            me(i);
            if (!file) throw Invalid("choose a picture to upload");
            await setAvatar(ctx, i.actor, file);
            return "/settings/profile?done=avatar";
          },
        });
      },
      // Why a stream: the front door reads nothing, so a body over the limit is refused by its declared length unread.
      { detail: { hide: true, ...policy({ body: "stream" }) } },
    )
    .post(
      "/settings/profile/avatar/remove",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/profile",
          again: (i, e) => again(i, e, "avatarError"),
          act: async (i) => {
            me(i);
            await removeAvatar(ctx, i.actor);
            return "/settings/profile?done=avatar-removed";
          },
        }),
      { detail: { hide: true } },
    );
}
