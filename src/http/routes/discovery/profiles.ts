// Public profiles of people and organizations (SPEC §2.8, §2.11, §4.2).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { getOrgProfile, getUserProfile, patchOrgProfile, patchUserProfile } from "../../../services/discovery/profiles.ts";
import { OrgProfile, OrgProfilePatch, UserProfile, UserProfilePatch } from "../../../services/discovery/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";

/** Profile routes. */
export function profileRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.profiles" })
    .get("/v1/users/:handle", ({ params }) => getUserProfile(ctx, params.handle), {
      response: { 200: UserProfile, ...errors(404) },
      detail: { summary: "A person's public profile (anonymous; never an address or a private repository; 404 for a disabled account)" },
    })
    .patch("/v1/users/:handle", ({ request, params, body }) => patchUserProfile(ctx, callerOf(request), params.handle, body), {
      body: UserProfilePatch,
      response: { 200: UserProfile, ...errors(400, 401, 403, 404) },
      detail: { summary: "Edit your profile: absent keys untouched, null clears, links replaced (at most 5, http/https)" },
    })
    .get("/v1/orgs/:org/profile", ({ params }) => getOrgProfile(ctx, params.org), {
      response: { 200: OrgProfile, ...errors(404) },
      detail: { summary: "An organization's public profile (anonymous)" },
    })
    .patch("/v1/orgs/:org/profile", ({ request, params, body }) => patchOrgProfile(ctx, callerOf(request), params.org, body), {
      body: OrgProfilePatch,
      response: { 200: OrgProfile, ...errors(400, 401, 403, 404) },
      detail: { summary: "Edit the organization's profile (org:admin; null clears; website http/https; contact_email an address)" },
    });
}
