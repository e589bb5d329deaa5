// The account area of the web interface (issue 19): signing in and out, sign-up and the mailed links' pages, settings
// (profile, addresses, tokens, SSH keys), following people, and the site icon. Home and a
// person's page share `/` and `/{name}` with other pages; web.ts draws them with account-pages.ts.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { HIDE } from "../kit/draw.ts";
import { ICON } from "../kit/icon.ts";
import { accountCredentialRoutes } from "./credentials-routes.ts";
import { accountLinkRoutes } from "./links-routes.ts";
import { signInRoutes } from "./sign-in-routes.ts";
import { accountSettingsRoutes } from "./settings-routes.ts";

function icon(cache: string): Response {
  return new Response(ICON.body, { headers: { "content-type": ICON.type, "cache-control": cache, "x-content-type-options": "nosniff" } });
}

/** The account pages. */
export function accountWebRoutes(ctx: Ctx) {
  return (
    new Elysia({ name: "routes.web.account" })
      .get(ICON.url, () => icon("public, max-age=31536000, immutable"), HIDE)
      // Not immutable: the address stays the same when the icon changes.
      .get("/favicon.ico", () => icon("public, max-age=86400"), HIDE)
      .use(signInRoutes(ctx))
      .use(accountLinkRoutes(ctx))
      .use(accountSettingsRoutes(ctx))
      .use(accountCredentialRoutes(ctx))
  );
}
