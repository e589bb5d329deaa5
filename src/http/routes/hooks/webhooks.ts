// Outbound webhook subscriptions of a repository (SPEC §4.6, §6.1; DECISIONS §2).
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { DeliveryList, Redelivered, Webhook, WebhookCreate, WebhookCreated, WebhookList, WebhookPatch } from "../../../services/hooks/schemas.ts";
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, redeliver, updateWebhook } from "../../../services/hooks/webhooks.ts";
import { openRepo } from "../../../services/repos/repos.ts";
import { PageQuery, errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** Webhook routes (repository admins). */
export function webhookRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.webhooks" })
    .post(
      "/v1/orgs/:org/repos/:repo/webhooks",
      async ({ request, params, body, set }) => {
        const out = await createWebhook(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), body);
        set.status = 201;
        return out;
      },
      {
        body: WebhookCreate,
        response: { 201: WebhookCreated, ...errors(400, 401, 403, 404, 422) },
        detail: { summary: "Subscribe a URL to the repository's events; the secret is shown once (repo admin)" },
      },
    )
    .get(
      "/v1/orgs/:org/repos/:repo/webhooks",
      async ({ request, params }) => listWebhooks(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo)),
      {
        response: { 200: WebhookList, ...errors(401, 403, 404) },
        detail: { summary: "List the subscriptions with their latest delivery attempt (repo admin)" },
      },
    )
    .patch(
      "/v1/orgs/:org/repos/:repo/webhooks/:id",
      async ({ request, params, body }) => updateWebhook(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id, body),
      {
        body: WebhookPatch,
        response: { 200: Webhook, ...errors(400, 401, 403, 404, 422) },
        detail: { summary: "Change which event kinds a subscription receives (repo admin)" },
      },
    )
    .post(
      "/v1/orgs/:org/repos/:repo/webhooks/:id/deliveries/:delivery/redeliver",
      async ({ request, params, set }) => {
        const out = await redeliver(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id, params.delivery);
        set.status = 202;
        return out;
      },
      {
        response: { 202: Redelivered, ...errors(401, 403, 404) },
        detail: { summary: "Send a stored delivery again, unchanged, as a new delivery (repo admin)" },
      },
    )
    .delete(
      "/v1/orgs/:org/repos/:repo/webhooks/:id",
      async ({ request, params, set }) => {
        await deleteWebhook(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 403, 404) }, detail: { summary: "Remove a subscription and its queued deliveries (repo admin)" } },
    )
    .get(
      "/v1/orgs/:org/repos/:repo/webhooks/:id/deliveries",
      async ({ request, params, query }) => listDeliveries(ctx, await openRepo(ctx, callerOf(request), params.org, params.repo), params.id, query),
      {
        query: PageQuery,
        response: { 200: DeliveryList, ...errors(400, 401, 403, 404) },
        detail: { summary: "Every delivery attempt, newest first (repo admin)" },
      },
    );
}
