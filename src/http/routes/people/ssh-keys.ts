// SSH keys (SPEC §4.6; DECISIONS §2).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { createSshKey, deleteSshKey, listSshKeys } from "../../../services/people/ssh-keys.ts";
import { callerOf } from "../../principal.ts";

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
        body: t.Object({
          public_key: t.String({ description: "OpenSSH public key line" }),
          label: t.String(),
          token_id: t.Optional(t.Nullable(t.String({ description: "makes a deploy key acting as this token (admins)" }))),
        }),
        detail: { summary: "Register a personal key, or a deploy key naming a token" },
      },
    )
    .get("/v1/orgs/:org/ssh-keys", ({ request, params }) => listSshKeys(ctx, callerOf(request), params.org), {
      detail: { summary: "List keys (all for admins, own for members)" },
    })
    .delete(
      "/v1/orgs/:org/ssh-keys/:id",
      async ({ request, params, set }) => {
        await deleteSshKey(ctx, callerOf(request), params.org, params.id);
        set.status = 204;
        return null;
      },
      { detail: { summary: "Revoke a key (effective on the next connection)" } },
    );
}
