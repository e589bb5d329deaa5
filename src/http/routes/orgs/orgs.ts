// Organizations, members and billing (SPEC §4.4; DECISIONS §1, §3).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createOrg, getBilling, listMembers, removeMember, setMemberRole } from "../../../services/orgs/orgs.ts";
import { Billing, MemberList, MemberRoleChange, MemberUpdated, OrgCreate, OrgCreated } from "../../../services/orgs/schemas.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

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
      {
        body: OrgCreate,
        response: { 201: OrgCreated, ...errors(400, 401, 403, 409) },
        detail: { summary: "Create an organization (caller becomes owner; 403 until the email address is confirmed, and for service tokens)" },
      },
    )
    .get("/v1/orgs/:org/members", ({ request, params, query }) => listMembers(ctx, callerOf(request), params.org, query), {
      query: PageQuery,
      response: { 200: MemberList, ...errors(400, 401, 403, 404) },
      detail: { summary: "List members by handle, a page at a time (addresses for org admins only)" },
    })
    .put("/v1/orgs/:org/members/:user", ({ request, params, body }) => setMemberRole(ctx, callerOf(request), params.org, params.user, body), {
      body: MemberRoleChange,
      response: { 200: MemberUpdated, ...errors(400, 401, 403, 404, 409, 422) },
      detail: { summary: "Change a member's role (409 when no owner would remain; only owners make or unmake owners)" },
    })
    .delete(
      "/v1/orgs/:org/members/:user",
      async ({ request, params, set }) => {
        await removeMember(ctx, callerOf(request), params.org, params.user);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404, 409) }, detail: { summary: "Remove a member, or leave (409 for the last owner)" } },
    )
    .get("/v1/orgs/:org/billing", ({ request, params }) => getBilling(ctx, callerOf(request), params.org), {
      response: { 200: Billing, ...errors(401, 403, 404) },
      detail: { summary: "Billing state of the organization (org admins; 404 for everyone else)" },
    });
}
