// The control-plane application: one elysia plugin per resource, errors rendered once.
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { AppError, NotFound } from "../errors.ts";
import type { Ctx } from "../services/context.ts";
import { JSON_BODY_LIMIT, parseJsonBody, readBodyLimited } from "./body.ts";
import { errorResponse, json, validationMessage } from "./errors.ts";
import { pathOf } from "./path.ts";
import { resolveCaller } from "./principal.ts";
import { authRoutes } from "./routes/people/auth.ts";
import { contentRoutes } from "./routes/repos/content.ts";
import { emailRoutes } from "./routes/people/emails.ts";
import { inboundRoutes } from "./routes/hooks/inbound.ts";
import { webhookRoutes } from "./routes/hooks/webhooks.ts";
import { mirrorRoutes } from "./routes/mirrors/sync.ts";
import { grantRoutes } from "./routes/orgs/grants.ts";
import { inviteRoutes } from "./routes/orgs/invites.ts";
import { orgRoutes } from "./routes/orgs/orgs.ts";
import { pageRoutes } from "./routes/people/link-pages.ts";
import { repoRoutes } from "./routes/repos/repos.ts";
import { sshKeyRoutes } from "./routes/people/ssh-keys.ts";
import { teamRoutes } from "./routes/orgs/teams.ts";
import { tokenRoutes } from "./routes/people/tokens.ts";

/** Request ids assigned by the server, looked up when an error must be logged. */
export const requestIds = new WeakMap<Request, string>();

/** Builds the /v1 application. */
export function buildApp(ctx: Ctx) {
  return new Elysia()
    .use(
      openapi({
        path: "/v1/docs",
        specPath: "/v1/openapi.json",
        documentation: { info: { title: "svc", version: "1.0.0", description: "Control plane of the svc git host" } },
      }),
    )
    // Why: the caller is resolved before routing and before any body is read, so a bad credential
    // is a 401 on every /v1 path (routes to come included), and an anonymous caller never reaches
    // a body parser on a route that needs a credential. Logout answers 204 whatever came with it.
    .onRequest(async ({ request }) => {
      const path = pathOf(request.url);
      if (!path.startsWith("/v1/")) return;
      if (path === "/v1/auth/logout") await resolveCaller(ctx, request).catch(() => undefined);
      else await resolveCaller(ctx, request);
    })
    .onParse(async ({ request, contentType }) => {
      // Why: inbound webhooks are verified by a signature over the exact bytes sent, so they get the raw body.
      if (pathOf(request.url).startsWith("/webhooks/")) return readBodyLimited(request, JSON_BODY_LIMIT);
      if (contentType?.toLowerCase().startsWith("application/json")) return (await parseJsonBody(request)) ?? null;
    })
    .onError(({ code, error, request }) => {
      if (code === "VALIDATION") return json(400, { error: validationMessage(error) });
      if (code === "PARSE") {
        // Elysia wraps what our parser throws (413, malformed JSON) in a ParseError.
        const cause = (error as { cause?: unknown }).cause;
        return cause instanceof AppError ? errorResponse(cause, ctx.log, "") : json(400, { error: "invalid request body" });
      }
      if (code === "NOT_FOUND") return errorResponse(NotFound("no such route"), ctx.log, "");
      if (error instanceof AppError) return errorResponse(error, ctx.log, "");
      return errorResponse(error, ctx.log, requestIds.get(request) ?? "unknown");
    })
    .use(authRoutes(ctx))
    .use(orgRoutes(ctx))
    .use(tokenRoutes(ctx))
    .use(repoRoutes(ctx))
    .use(contentRoutes(ctx))
    .use(sshKeyRoutes(ctx))
    .use(teamRoutes(ctx))
    .use(grantRoutes(ctx))
    .use(inviteRoutes(ctx))
    .use(emailRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(mirrorRoutes(ctx))
    .use(inboundRoutes(ctx))
    .use(pageRoutes());
}
