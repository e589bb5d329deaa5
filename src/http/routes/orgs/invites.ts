// Invitations to an organization (SPEC §4.5; DECISIONS §1, §3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createInvite, listInvites, revokeInvite } from "../../../services/orgs/invites.ts";
import { InviteCreate, InviteCreated, InviteList } from "../../../services/orgs/schemas.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** Invitation routes. */
export function inviteRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.invites" })
    .post(
      "/v1/orgs/:org/invites",
      async ({ request, params, body, set }) => {
        const out = await createInvite(ctx, callerOf(request), params.org, body);
        set.status = 201;
        return out;
      },
      {
        body: InviteCreate,
        response: { 201: InviteCreated, ...errors(400, 401, 403, 404, 409, 422) },
        detail: { summary: "Invite an address with a role; the svcinv_ link is returned and mailed (only owners invite owners)" },
      },
    )
    .get("/v1/orgs/:org/invites", ({ request, params, query }) => listInvites(ctx, callerOf(request), params.org, query), {
      query: PageQuery,
      response: { 200: InviteList, ...errors(400, 401, 403, 404) },
      detail: { summary: "Invitations not yet accepted, newest first, a page at a time" },
    })
    .delete(
      "/v1/orgs/:org/invites/:id",
      async ({ request, params, set }) => {
        await revokeInvite(ctx, callerOf(request), params.org, params.id);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Revoke an invitation" } },
    );
}
