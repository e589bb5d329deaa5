// API tokens (SPEC §4.6; DECISIONS §1 paging, §2).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { listTokens, mintToken, revokeToken } from "../../../services/people/tokens.ts";
import { MintedToken, TokenList, TokenMint } from "../../../services/people/schemas.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";
import { JSON_BODY } from "./bodies.ts";

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
      {
        ...JSON_BODY,
        body: TokenMint,
        response: { 201: MintedToken, ...errors(400, 401, 403, 404, 422) },
        detail: { summary: "Mint a token; the secret is shown once" },
      },
    )
    .get("/v1/orgs/:org/tokens", ({ request, params, query }) => listTokens(ctx, callerOf(request), params.org, query), {
      query: PageQuery,
      response: { 200: TokenList, ...errors(400, 401, 403, 404) },
      detail: { summary: "List tokens by creation (all for admins, own for members)" },
    })
    .delete(
      "/v1/orgs/:org/tokens/:id",
      async ({ request, params, set }) => {
        await revokeToken(ctx, callerOf(request), params.org, params.id);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Revoke a token at once; someone else's answers 404" } },
    );
}
