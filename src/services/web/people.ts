// What the org page shows of its people (issue 33): exactly what GET /v1/orgs/{org}/members
// answers the viewer (its own access rule: org:read, so the org's own people), else nothing.
import { AppError } from "../../errors.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { listMembers } from "../orgs/orgs.ts";

/** How many members the org page shows (the rest: a link to the members page). */
export const ORG_PAGE_MEMBERS = 24;

/** One member as the org page draws them. */
export interface OrgPageMember {
  handle: string;
  name: string;
  role: string;
}

/** The first members of the org the viewer may list, or null when the API would refuse them the list. */
export async function orgMembersView(ctx: Ctx, actor: Principal, orgName: string): Promise<{ members: OrgPageMember[]; more: boolean } | null> {
  try {
    const list = await listMembers(ctx, actor, orgName, { limit: ORG_PAGE_MEMBERS });
    return { members: list.members.map((m) => ({ handle: m.handle, name: m.name, role: m.role })), more: list.next_cursor !== null };
  } catch (error) {
    // Why these three: the API's refusals of the list (anonymous, outsider, token of another org); anything else is a failure.
    if (error instanceof AppError && (error.code === "unauthenticated" || error.code === "forbidden" || error.code === "not_found")) return null;
    throw error;
  }
}
