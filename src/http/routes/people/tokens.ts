// API tokens (SPEC §4.6; DECISIONS §2).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { listTokens, mintToken, revokeToken } from "../../../services/people/tokens.ts";
import { callerOf } from "../../principal.ts";

const MintBody = t.Object({
  scopes: t.Array(t.String(), { description: "repo:read, repo:write, org:read, org:admin" }),
  label: t.String(),
  repo: t.Optional(t.Nullable(t.String({ description: "bind the token to one repository of the org" }))),
  kind: t.Optional(t.String({ description: "personal (default for a person) or service (needs org:admin)" })),
});

/** Token routes. */
export function tokenRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.tokens" })
    .post(
      "/v1/orgs/:org/tokens",
      async ({ request, params, body, set }) => {
        const out = await mintToken(ctx, callerOf(request), params.org, body);
        set.status = 201;
        return out;
      },
      { body: MintBody, detail: { summary: "Mint a token; the secret is shown once" } },
    )
    .get("/v1/orgs/:org/tokens", ({ request, params }) => listTokens(ctx, callerOf(request), params.org), {
      detail: { summary: "List tokens (all for admins, own for members)" },
    })
    .delete(
      "/v1/orgs/:org/tokens/:id",
      async ({ request, params, set }) => {
        await revokeToken(ctx, callerOf(request), params.org, params.id);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Revoke a token at once" } },
    );
}
