// A person's email addresses (SPEC §4.2).
import { Elysia, t } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { addEmail, deleteEmail, listEmails, verifyEmail } from "../../../services/people/emails.ts";
import { callerOf } from "../../principal.ts";

/** Email address routes. */
export function emailRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.emails" })
    .get("/v1/users/:handle/emails", ({ request, params }) => listEmails(ctx, callerOf(request), params.handle), {
      detail: { summary: "Your addresses" },
    })
    .post(
      "/v1/users/:handle/emails",
      async ({ request, params, body, set }) => {
        const out = await addEmail(ctx, callerOf(request), params.handle, body);
        set.status = 202;
        return out;
      },
      { body: t.Object({ email: t.Unknown() }), detail: { summary: "Add an address; a confirmation link is mailed to it" } },
    )
    .post(
      "/v1/users/:handle/emails/verify",
      ({ request, params, body }) => verifyEmail(ctx, callerOf(request), params.handle, body),
      { body: t.Object({ token: t.Optional(t.Unknown({ description: "svce_… token" })) }), detail: { summary: "Prove an address with its svce_ link" } },
    )
    .delete(
      "/v1/users/:handle/emails/:email",
      async ({ request, params, set }) => {
        await deleteEmail(ctx, callerOf(request), params.handle, decodeURIComponent(params.email));
        set.status = 204;
        return null;
      },
      { detail: { summary: "Remove an address (not the sign-in address)" } },
    );
}
