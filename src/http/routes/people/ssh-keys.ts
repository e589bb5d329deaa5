// SSH keys (SPEC §4.6; DECISIONS §1 paging, §2).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createSshKey, deleteSshKey, listSshKeys } from "../../../services/people/ssh-keys.ts";
import { SshKey, SshKeyCreate, SshKeyList } from "../../../services/people/schemas.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";
import { JSON_BODY } from "./bodies.ts";

/** SSH key routes. */
export function sshKeyRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.ssh-keys" })
    .post(
      "/v1/orgs/:org/ssh-keys",
      async ({ request, params, body, set }) => {
        const out = await createSshKey(ctx, callerOf(request), params.org, body);
        set.status = 201;
        return out;
      },
      {
        ...JSON_BODY,
        body: SshKeyCreate,
        response: { 201: SshKey, ...errors(400, 401, 403, 404, 409) },
        detail: { summary: "Register a personal key, or a deploy key naming a token" },
      },
    )
    .get("/v1/orgs/:org/ssh-keys", ({ request, params, query }) => listSshKeys(ctx, callerOf(request), params.org, query), {
      query: PageQuery,
      response: { 200: SshKeyList, ...errors(400, 401, 403, 404) },
      detail: { summary: "List keys by creation (all for admins, own for members)" },
    })
    .delete(
      "/v1/orgs/:org/ssh-keys/:id",
      async ({ request, params, set }) => {
        await deleteSshKey(ctx, callerOf(request), params.org, params.id);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 403, 404) },
        detail: { summary: "Revoke a key (effective on the next connection); someone else's answers 404" },
      },
    );
}
