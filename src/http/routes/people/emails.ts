// A person's email addresses (SPEC §4.2).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { addEmail, deleteEmail, listEmails, makePrimaryEmail, resendEmailClaim, verifyEmail } from "../../../services/people/emails.ts";
import { EmailList, EmailPatch, EmailPending, EmailRecord, EmailRequest, EmailVerified, LinkRequest } from "../../../services/people/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";
import { JSON_BODY, documentedBody } from "./bodies.ts";
import { policy } from "../../policy.ts";

/** Email address routes: the person themself only. */
export function emailRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.emails" })
    .get("/v1/users/:handle/emails", ({ request, params }) => listEmails(ctx, callerOf(request), params.handle), {
      response: { 200: EmailList, ...errors(401, 403, 404) },
      detail: { summary: "Your addresses, the sign-in address first" },
    })
    .post(
      "/v1/users/:handle/emails",
      async ({ request, params, body, set }) => {
        const out = await addEmail(ctx, callerOf(request), params.handle, body);
        set.status = 202;
        return out;
      },
      {
        ...JSON_BODY,
        body: EmailRequest,
        response: { 202: EmailPending, ...errors(400, 401, 403, 404, 409) },
        detail: { summary: "Add an address; a confirmation link is mailed to it, never returned" },
      },
    )
    .post("/v1/users/:handle/emails/verify", ({ request, params, body }) => verifyEmail(ctx, callerOf(request), params.handle, body), {
      response: { 200: EmailVerified, ...errors(401, 403, 404) },
      detail: {
        summary: "Prove an address with its svce_ link",
        description: "404 for every bad token: malformed, unknown, expired, spent, issued to another account, or no token at all.",
        requestBody: documentedBody(LinkRequest, "the svce_ token of the mailed link"),
        ...policy({ body: "uniform" }),
      },
    })
    .post(
      "/v1/users/:handle/emails/:email/resend",
      async ({ request, params, set }) => {
        const out = await resendEmailClaim(ctx, callerOf(request), params.handle, params.email);
        set.status = 202;
        return out;
      },
      {
        response: { 202: EmailPending, ...errors(401, 403, 404) },
        detail: { summary: "Mail a fresh confirmation link for an unconfirmed address (the previous one is spent)" },
      },
    )
    .patch("/v1/users/:handle/emails/:email", ({ request, params, body }) => makePrimaryEmail(ctx, callerOf(request), params.handle, params.email, body), {
      ...JSON_BODY,
      body: EmailPatch,
      response: { 200: EmailRecord, ...errors(400, 401, 403, 404) },
      detail: { summary: "Make a confirmed address the sign-in address ({ primary: true })" },
    })
    .delete(
      "/v1/users/:handle/emails/:email",
      async ({ request, params, set }) => {
        // The router decoded the parameter already (once: a second decode would turn %25 into %).
        await deleteEmail(ctx, callerOf(request), params.handle, params.email);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Remove an address (not the sign-in address)" } },
    );
}
