// A person's picture (issue 33): an uploaded PNG, JPEG or WebP of at most 1 MiB and 4096×4096
// (avatar-sniff.ts decides what is one), stored in the object store at
// `avatars/{user id}/{sha256}.{ext}` and named by `users.avatar`; without one, pages draw the
// identicon of the handle. The object is written before the row moves (a crash between leaves an
// unnamed object, never a row naming nothing), and the replaced object is deleted after the
// row's transaction commits.
import { createHash } from "node:crypto";
import { TooLarge } from "../../errors.ts";
import { authorizeAccount } from "../access/access.ts";
import { personOf, type Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { AVATAR_MAX_BYTES, sniffImage, type SniffedImage } from "./avatar-sniff.ts";
import { avatarByHandle, swapAvatar } from "./store-avatar.ts";

export { AVATAR_MAX_BYTES, AVATAR_MAX_SIDE } from "./avatar-sniff.ts";

/** The content types of the three accepted formats, by key extension. */
const TYPE_OF_EXT: Readonly<Record<string, SniffedImage["type"]>> = { png: "image/png", jpg: "image/jpeg", webp: "image/webp" };

/** What PUT /v1/user/avatar answers: the picture's address (versioned by its hash) and what it was recognised as. */
export interface AvatarBody {
  url: string;
  type: SniffedImage["type"];
  width: number;
  height: number;
  size: number;
}

/** The version a key gives a picture's address: the first 16 hex digits of its hash. */
export function avatarKeyVersion(key: string): string {
  const file = key.slice(key.lastIndexOf("/") + 1);
  return file.slice(0, 16);
}

/** The signed-in person a caller speaks for, after the account rule (401 anonymous; 403 service or repository-bound tokens). */
function self(actor: Principal): { id: string; handle: string } {
  const user = personOf(actor);
  authorizeAccount(actor, { kind: "account:person" });
  authorizeAccount(actor, { kind: "account:self", userId: user?.id ?? "" });
  return { id: user!.id, handle: user!.handle };
}

/** Deletes a replaced picture; a failure only leaves an unnamed object behind (logged). */
async function dropObject(ctx: Ctx, key: string | null, keep: string | null): Promise<void> {
  if (!key || key === keep) return;
  await ctx.store.delete(key).catch((error) => ctx.log.warn("old avatar not deleted", { key, error: String(error) }));
}

/**
 * PUT /v1/user/avatar and the settings form: the caller's picture becomes `bytes` (413 over
 * 1 MiB, 415 when not PNG/JPEG/WebP, 422 when damaged or larger than 4096×4096).
 */
export async function setAvatar(ctx: Ctx, actor: Principal, bytes: Uint8Array): Promise<AvatarBody> {
  const me = self(actor);
  if (bytes.length > AVATAR_MAX_BYTES) throw TooLarge(`the picture is larger than ${AVATAR_MAX_BYTES / 1024 / 1024} MiB`);
  const image = sniffImage(bytes);
  const hash = createHash("sha256").update(bytes).digest("hex");
  const key = `avatars/${me.id}/${hash}.${image.ext}`;
  await ctx.store.put(key, bytes);
  const old = await ctx.db.transaction((tx) => swapAvatar(tx, me.id, key));
  await dropObject(ctx, old, key);
  return {
    url: `${ctx.baseUrl}/avatars/${encodeURIComponent(me.handle.toLowerCase())}?v=${avatarKeyVersion(key)}`,
    type: image.type,
    width: image.width,
    height: image.height,
    size: bytes.length,
  };
}

/** DELETE /v1/user/avatar and the settings form's Remove: back to the identicon (idempotent). */
export async function removeAvatar(ctx: Ctx, actor: Principal): Promise<void> {
  const me = self(actor);
  const old = await ctx.db.transaction((tx) => swapAvatar(tx, me.id, null));
  await dropObject(ctx, old, null);
}

/** The uploaded picture of the live person called `handle`: its version and a reader of its bytes; null without one (the identicon). */
export async function avatarPicture(
  ctx: Ctx,
  handle: string,
): Promise<{ type: SniffedImage["type"]; version: string; bytes: () => Promise<Uint8Array | null> } | null> {
  const row = await avatarByHandle(ctx.db.read, handle);
  const key = row?.avatar;
  const type = key ? TYPE_OF_EXT[key.slice(key.lastIndexOf(".") + 1)] : undefined;
  if (!key || !type) return null;
  return { type, version: avatarKeyVersion(key), bytes: () => ctx.store.get(key) };
}
