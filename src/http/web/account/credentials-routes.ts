// Tokens and SSH keys in the account settings. A new token's secret reaches the page that follows
// the create form once, through a short-lived cookie that page clears: reloading shows it no more,
// and the server never keeps it (only its hash is stored, as for every token).
import { Elysia } from "elysia";
import type { AppError } from "../../../errors.ts";
import type { Ctx } from "../../../services/context.ts";
import { parseToken } from "../../../services/people/auth.ts";
import { mintToken, revokeToken } from "../../../services/people/tokens.ts";
import { createSshKey, deleteSshKey } from "../../../services/people/ssh-keys.ts";
import { keySettingsView, tokenSettingsView } from "../../../services/web/account-settings.ts";
import { readCookie } from "../../principal.ts";
import { HIDE } from "../kit/draw.ts";
import { field, me, postForm, seeOther, type FormInput } from "../kit/forms.ts";
import { settingsAgain, settingsDrawer } from "./settings-routes.ts";
import { keySettings, tokenSettings } from "./credentials-page.ts";

/** The cookie carrying a new token's secret to the next page only. */
export const NEW_TOKEN_COOKIE = "svc_new_token";
const TOKENS_PATH = "/settings/tokens";

/**
 * Why these attributes: HttpOnly (no script reads it), SameSite=Strict and the settings path (sent
 * to nothing else), two minutes at most (a page that never loads leaves no secret behind).
 */
function newTokenCookie(ctx: Ctx, value: string, maxAge: number): string {
  const secure = ctx.baseUrl.startsWith("https:") ? "; Secure" : "";
  return `${NEW_TOKEN_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=${TOKENS_PATH}; Max-Age=${maxAge}${secure}`;
}

/** The token routes and the SSH key routes. */
export function accountCredentialRoutes(ctx: Ctx) {
  const settings = settingsDrawer(ctx);
  const tokensAgain = async (i: FormInput, error: AppError) => {
    const v = await tokenSettingsView(ctx, i.actor);
    const values = { org: field(i.form, "org"), label: field(i.form, "label"), repo: field(i.form, "repo") };
    return settingsAgain(
      "tokens",
      i.frame,
      error.status,
      tokenSettings({ csrf: i.frame.csrf, ...v, secret: null, error: error.message, values, scopes: i.form.getAll("scope") }),
    );
  };
  const keysAgain = async (i: FormInput, error: AppError) => {
    const v = await keySettingsView(ctx, i.actor);
    const values = { label: field(i.form, "label"), public_key: field(i.form, "public_key") };
    return settingsAgain("keys", i.frame, error.status, keySettings({ csrf: i.frame.csrf, keys: v.keys, error: error.message, values }));
  };

  return new Elysia({ name: "routes.web.account.credentials" })
    .get(
      TOKENS_PATH,
      ({ request, query }) => {
        const flash = readCookie(request, NEW_TOKEN_COOKIE);
        // The cookie is cleared by this answer whatever it held, so the secret shows at most once.
        const clear: Record<string, string> = flash === null ? {} : { "set-cookie": newTokenCookie(ctx, "", 0) };
        return settings(
          request,
          query,
          "tokens",
          async (actor, frame) => {
            const v = await tokenSettingsView(ctx, actor);
            // Why the check: the secret is shown only to the person whose token it is (a shared browser may have changed hands).
            const id = flash ? parseToken(flash)?.id : undefined;
            const secret = id && v.tokens.some((g) => g.items.some((t) => t.id === id)) ? flash : null;
            return tokenSettings({ csrf: frame.csrf, ...v, secret });
          },
          clear,
        );
      },
      HIDE,
    )
    .post(
      TOKENS_PATH,
      ({ request, body }) =>
        // "lookup": the form names an org and a repository, whose 404 is the form again.
        postForm(ctx, request, body, {
          back: TOKENS_PATH,
          kind: "lookup",
          again: tokensAgain,
          act: async (i) => {
            me(i);
            const repo = field(i.form, "repo");
            const minted = await mintToken(ctx, i.actor, field(i.form, "org"), {
              kind: "personal",
              label: field(i.form, "label"),
              scopes: i.form.getAll("scope").slice(0, 10),
              repo: repo || null,
            });
            return seeOther(TOKENS_PATH, { "set-cookie": newTokenCookie(ctx, minted.token, 120) });
          },
        }),
      HIDE,
    )
    .post(
      `${TOKENS_PATH}/revoke`,
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: TOKENS_PATH,
          act: async (i) => {
            me(i);
            await revokeToken(ctx, i.actor, field(i.form, "org"), field(i.form, "id"));
            return `${TOKENS_PATH}?done=revoked`;
          },
        }),
      HIDE,
    )
    .get(
      "/settings/keys",
      ({ request, query }) =>
        settings(request, query, "keys", async (actor, frame) => keySettings({ csrf: frame.csrf, keys: (await keySettingsView(ctx, actor)).keys })),
      HIDE,
    )
    .post(
      "/settings/keys",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/keys",
          again: keysAgain,
          act: async (i) => {
            // A personal key is registered in the person's own namespace; it acts for them in every org.
            await createSshKey(ctx, i.actor, me(i), { label: field(i.form, "label"), public_key: field(i.form, "public_key") });
            return "/settings/keys?done=key-added";
          },
        }),
      HIDE,
    )
    .post(
      "/settings/keys/remove",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          back: "/settings/keys",
          act: async (i) => {
            me(i);
            await deleteSshKey(ctx, i.actor, field(i.form, "org"), field(i.form, "id"));
            return "/settings/keys?done=key-removed";
          },
        }),
      HIDE,
    );
}
