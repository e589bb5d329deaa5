// A person's picture (issue 33): PUT /v1/user/avatar with the image as the raw body
// (content-type image/png, image/jpeg or image/webp; at most 1 MiB, refused by its declared
// length before a byte is read) and DELETE /v1/user/avatar (back to the identicon).
import { Elysia } from "elysia";
import { UnsupportedMediaType } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { AVATAR_MAX_BYTES, removeAvatar, setAvatar } from "../../../services/people/avatar.ts";
import { AvatarBody } from "../../../services/people/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { readBodyLimited } from "../../body.ts";
import { policy } from "../../policy.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** The avatar routes. */
export function avatarRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.avatar" })
    .put(
      "/v1/user/avatar",
      async ({ request }) => {
        const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
        // Why only a hint: the bytes decide what the picture is (avatar-sniff.ts), never the header.
        if (!type.startsWith("image/"))
          throw UnsupportedMediaType(`unsupported content type ${JSON.stringify(type || "none")}: send the picture as image/png, image/jpeg or image/webp`);
        return setAvatar(ctx, callerOf(request), await readBodyLimited(request, AVATAR_MAX_BYTES));
      },
      {
        response: { 200: AvatarBody, ...errors(401, 403, 413, 415, 422) },
        detail: {
          summary: "Set your picture: the raw PNG, JPEG or WebP bytes (at most 1 MiB and 4096×4096), sent as image/*",
          ...policy({ body: "stream" }),
        },
      },
    )
    .delete(
      "/v1/user/avatar",
      async ({ request, set }) => {
        await removeAvatar(ctx, callerOf(request));
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403) }, detail: { summary: "Remove your picture: pages draw your identicon again" } },
    );
}
