// Invitations to an organization (SPEC §4.5; DECISIONS §3).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createInvite, listInvites, revokeInvite } from "../../../services/orgs/invites.ts";
import { callerOf } from "../../principal.ts";

const InviteBody = t.Object({ email: t.Unknown(), role: t.Unknown({ description: "viewer, member, admin or owner" }) });

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
      { body: InviteBody, detail: { summary: "Invite an address with a role; the svcinv_ link is returned and mailed" } },
    )
    .get("/v1/orgs/:org/invites", ({ request, params }) => listInvites(ctx, callerOf(request), params.org), {
      detail: { summary: "Invitations not yet accepted" },
    })
    .delete(
      "/v1/orgs/:org/invites/:id",
      async ({ request, params, set }) => {
        await revokeInvite(ctx, callerOf(request), params.org, params.id);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Revoke an invitation" } },
    );
}
