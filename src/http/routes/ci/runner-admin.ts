// Runner policy, groups and machines of an organization (SPEC §4.1).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createGroup, deleteGroup, listGroups, patchGroup } from "../../../services/ci/groups.ts";
import { getRunnerPolicy, patchRunnerPolicy } from "../../../services/ci/policy.ts";
import { createRegistrationToken, listRunners, removeRunner } from "../../../services/ci/runners.ts";
import {
  RegistrationToken,
  RegistrationTokenCreate,
  RunnerGroup,
  RunnerGroupCreate,
  RunnerGroupList,
  RunnerGroupPatch,
  RunnerList,
  RunnerPolicy,
  RunnerPolicyPatch,
} from "../../../services/ci/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** Policy, group and machine routes under /v1/orgs/{org}. */
export function runnerAdminRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ci.runner-admin" })
    .get("/v1/orgs/:org/runner-policy", ({ request, params }) => getRunnerPolicy(ctx, callerOf(request), params.org), {
      response: { 200: RunnerPolicy, ...errors(401, 403, 404) },
      detail: { summary: "The organization's runner policy" },
    })
    .patch("/v1/orgs/:org/runner-policy", ({ request, params, body }) => patchRunnerPolicy(ctx, callerOf(request), params.org, body), {
      body: RunnerPolicyPatch,
      response: { 200: RunnerPolicy, ...errors(400, 401, 403, 404, 422) },
      detail: { summary: "Change the runner policy (org admin; 404 to others)" },
    })
    .get("/v1/orgs/:org/runner-groups", ({ request, params }) => listGroups(ctx, callerOf(request), params.org), {
      response: { 200: RunnerGroupList, ...errors(401, 403, 404) },
      detail: { summary: "List runner groups (never empty: the default group is created lazily)" },
    })
    .post(
      "/v1/orgs/:org/runner-groups",
      async ({ request, params, body, set }) => {
        const out = await createGroup(ctx, callerOf(request), params.org, body);
        set.status = 201;
        return out;
      },
      {
        body: RunnerGroupCreate,
        response: { 201: RunnerGroup, ...errors(400, 401, 403, 404, 409, 422) },
        detail: { summary: "Create a runner group (org admin)" },
      },
    )
    .patch("/v1/orgs/:org/runner-groups/:id", ({ request, params, body }) => patchGroup(ctx, callerOf(request), params.org, params.id, body), {
      body: RunnerGroupPatch,
      response: { 200: RunnerGroup, ...errors(400, 401, 403, 404, 409, 422) },
      detail: { summary: "Change a runner group (org admin); repos are replaced wholesale" },
    })
    .delete(
      "/v1/orgs/:org/runner-groups/:id",
      async ({ request, params, set }) => {
        await deleteGroup(ctx, callerOf(request), params.org, params.id);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404, 422) },
        detail: { summary: "Delete a runner group; its machines move to the default group" },
      },
    )
    .get("/v1/orgs/:org/runners", ({ request, params }) => listRunners(ctx, callerOf(request), params.org), {
      response: { 200: RunnerList, ...errors(401, 403, 404) },
      detail: { summary: "List live machines with their derived state" },
    })
    .post(
      "/v1/orgs/:org/runners/registration-token",
      async ({ request, params, body, set }) => {
        const out = await createRegistrationToken(ctx, callerOf(request), params.org, body ?? {});
        set.status = 201;
        return out;
      },
      {
        body: RegistrationTokenCreate,
        response: { 201: RegistrationToken, ...errors(400, 401, 403, 404, 422) },
        detail: { summary: "Mint a one-hour, one-machine registration token (org admin)" },
      },
    )
    .delete(
      "/v1/orgs/:org/runners/:id",
      async ({ request, params, set }) => {
        await removeRunner(ctx, callerOf(request), params.org, params.id);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Remove a machine (tombstoned); its running job fails" } },
    );
}
