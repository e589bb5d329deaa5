// Organizations, members and billing (SPEC §4.4; DECISIONS §3).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createOrg, getBilling, listMembers, removeMember, setMemberRole } from "../../../services/orgs/orgs.ts";
import { callerOf } from "../../principal.ts";

/** Organization routes. */
export function orgRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.orgs" })
    .post(
      "/v1/orgs",
      async ({ request, body, set }) => {
        const out = await createOrg(ctx, callerOf(request), body);
        set.status = 201;
        return out;
      },
      { body: t.Object({ name: t.Unknown() }), detail: { summary: "Create an organization (caller becomes owner)" } },
    )
    .get("/v1/orgs/:org/members", ({ request, params }) => listMembers(ctx, callerOf(request), params.org), {
      detail: { summary: "List members" },
    })
    .put(
      "/v1/orgs/:org/members/:user",
      ({ request, params, body }) => setMemberRole(ctx, callerOf(request), params.org, params.user, body),
      { body: t.Object({ role: t.String() }), detail: { summary: "Change a member's role (409 when no owner would remain)" } },
    )
    .delete(
      "/v1/orgs/:org/members/:user",
      async ({ request, params, set }) => {
        await removeMember(ctx, callerOf(request), params.org, params.user);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Remove a member (409 for the last owner)" } },
    )
    .get("/v1/orgs/:org/billing", ({ request, params }) => getBilling(ctx, callerOf(request), params.org), {
      detail: { summary: "Billing state of the organization" },
    });
}
