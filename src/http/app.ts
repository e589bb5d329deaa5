// The control-plane application: one elysia plugin per resource, errors rendered once.
import { Elysia, type AnyElysia } from "elysia";
import { AppError, NotFound, Unauthorized, UnsupportedMediaType } from "../errors.ts";
import type { Ctx } from "../services/context.ts";
import { ANONYMOUS_BODY_LIMIT, JSON_BODY_LIMIT, parseJsonBody, readBodyLimited } from "./body.ts";
import { errorResponse, json, validationMessage } from "./errors.ts";
import { openapiRoutes } from "./openapi.ts";
import { pathOf } from "./path.ts";
import { callerOf, resolveCaller } from "./principal.ts";
import { isRaw, policyOf, policyTable, type RoutePolicy } from "./policy.ts";
import { methodTable, patternOf } from "./routing.ts";
import { authRoutes } from "./routes/people/auth.ts";
import { changeRoutes } from "./routes/changes/changes.ts";
import { reviewRoutes } from "./routes/changes/reviews.ts";
import { commentRoutes } from "./routes/changes/comments.ts";
import { issueRoutes } from "./routes/issues/issues.ts";
import { suggestionRoutes } from "./routes/changes/suggestions.ts";
import { contentRoutes } from "./routes/repos/content.ts";
import { branchRoutes } from "./routes/repos/branches.ts";
import { blameRoutes } from "./routes/repos/blame.ts";
import { emailRoutes } from "./routes/people/emails.ts";
import { avatarRoutes } from "./routes/people/avatar.ts";
import { inboundRoutes } from "./routes/mirrors/inbound.ts";
import { webhookRoutes } from "./routes/hooks/webhooks.ts";
import { mirrorRoutes } from "./routes/mirrors/sync.ts";
import { grantRoutes } from "./routes/orgs/grants.ts";
import { inviteRoutes } from "./routes/orgs/invites.ts";
import { orgRoutes } from "./routes/orgs/orgs.ts";
import { repoRoutes } from "./routes/repos/repos.ts";
import { forkRoutes } from "./routes/repos/forks.ts";
import { sshKeyRoutes } from "./routes/people/ssh-keys.ts";
import { teamRoutes } from "./routes/orgs/teams.ts";
import { tokenRoutes } from "./routes/people/tokens.ts";
import { runnerAdminRoutes } from "./routes/ci/runner-admin.ts";
import { secretRoutes } from "./routes/ci/secrets.ts";
import { runnerActionRoutes } from "./routes/ci/runner-actions.ts";
import { runnerAgentRoutes } from "./routes/ci/runner-agent.ts";
import { runnerCacheRoutes } from "./routes/ci/runner-caches.ts";
import { runRoutes } from "./routes/ci/runs.ts";
import { artifactRoutes } from "./routes/ci/artifacts.ts";
import { runnerArtifactRoutes } from "./routes/ci/runner-artifacts.ts";
import { dispatchRoutes } from "./routes/ci/dispatch.ts";
import { billingRoutes } from "./routes/billing/billing.ts";
import { profileRoutes } from "./routes/discovery/profiles.ts";
import { followRoutes } from "./routes/discovery/follows.ts";
import { pinRoutes } from "./routes/discovery/pins.ts";
import { contributionRoutes } from "./routes/discovery/contributions.ts";
import { watchingRoutes } from "./routes/discovery/watching.ts";
import { searchRoutes } from "./routes/discovery/search.ts";
import { metricsRoutes } from "./routes/metrics/metrics.ts";
import { lfsLockRoutes } from "./routes/lfs/locks.ts";
import { auditRoutes } from "./routes/audit/audit.ts";
import { opsRoutes } from "./routes/ops/ops.ts";
import { notificationRoutes } from "./routes/notify/notifications.ts";
import { lfsRequests } from "./routes/lfs/lfs.ts";
import { isReservedSegment } from "./web/kit/draw.ts";
import { webRoutes } from "./web/index.ts";
import { readForm } from "./web/kit/forms.ts";

const noop = () => undefined;

/** Request ids assigned by the server, looked up when an error must be logged. */
export const requestIds = new WeakMap<Request, string>();

/** The route template each request matched (`/v1/orgs/:org/repos`), for metrics. */
export const routeTemplates = new WeakMap<Request, string>();

/** The request id the front door gave `request` ("unknown" in-process, where nobody gave one). */
function idOf(request: Request): string {
  return requestIds.get(request) ?? "unknown";
}

/**
 * A failed response validation as an error worth logging: where the answer broke its schema and
 * the stack, without the value itself (it may be a secret shown once, such as a new token).
 */
function responseMismatch(error: unknown): Error {
  const first = (error as { all?: { path?: string; message?: string }[] }).all?.[0];
  const out = new Error(`response does not match its schema at ${first?.path || "/"}: ${first?.message ?? "invalid"}`);
  const frames = ((error as Error).stack ?? "").split("\n").filter((l) => l.trimStart().startsWith("at "));
  out.stack = [`Error: ${out.message}`, ...frames].join("\n");
  return out;
}

/** Whether a request carries a body (Bun gives a bodiless request a null body). */
function hasBody(request: Request): boolean {
  return request.body !== null && request.headers.get("content-length") !== "0";
}

/**
 * The body of a /v1 request, by the route's policy (policy.ts), in this order: the caller (an
 * anonymous caller on a route that needs a credential is 401 before a byte is read), the media
 * type (only JSON: 415 otherwise), then the JSON itself within its size and depth limits (413,
 * 400). Uniform routes (login, the mailed links) read any unusable body as no body, so every
 * failure gets their one answer; a body over the size limit (413) is refused everywhere.
 */
async function readApiBody(request: Request, p: Required<RoutePolicy>): Promise<unknown> {
  // Why: validation runs before the handler, so without this an anonymous request reached the
  // validator (and its cost) on routes that would refuse it anyway, and answered 400 before 401.
  if ((p.caller === "credential" || p.caller === "runner") && callerOf(request).kind === "anonymous") {
    throw Unauthorized(p.caller === "runner" ? "invalid or revoked token" : "authentication required");
  }
  if (!hasBody(request) || p.body === "stream") return null;
  const uniform = p.body === "uniform";
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    if (uniform) return null;
    throw UnsupportedMediaType(`unsupported content type ${JSON.stringify(type || "none")}: send application/json`);
  }
  const limit = p.caller === "anonymous" || p.caller === "lenient" ? ANONYMOUS_BODY_LIMIT : JSON_BODY_LIMIT;
  const unusable = (error: unknown): null => {
    if (uniform && error instanceof AppError && error.code === "invalid") return null;
    throw error;
  };
  return (await parseJsonBody(request, limit).catch(unusable)) ?? null;
}

/** Builds the /v1 application. */
export function buildApp(ctx: Ctx) {
  // The methods each path accepts, from the registered routes (built on the first unrouted request).
  // Paths under a reserved name (/v1, /webhooks, …) are never web pages: the pages' `/:org/…`
  // patterns are left out of their table, so they keep their 404 and 405 answers.
  let allowed: { routes: number; lookup: (path: string) => string[]; fixed: (path: string) => string[] } | null = null;
  const methodsFor = (path: string): string[] => {
    if (!allowed || allowed.routes !== app.routes.length) {
      allowed = {
        routes: app.routes.length,
        lookup: methodTable(app.routes),
        fixed: methodTable(app.routes.filter((r: { path: string }) => !r.path.startsWith("/:"))),
      };
    }
    return isReservedSegment(path.split("/")[1] ?? "") ? allowed.fixed(path) : allowed.lookup(path);
  };
  // The routes' declared policies (policy.ts), read from the registered routes on first use.
  let policies: { routes: number; of: ReturnType<typeof policyTable>; lenient: RegExp[] } | null = null;
  const declared = () => {
    if (!policies || policies.routes !== app.routes.length) {
      const routes = app.routes as { method: string; path: string; hooks?: unknown }[];
      policies = {
        routes: routes.length,
        of: policyTable(routes),
        lenient: routes.filter((r) => policyOf(r).caller === "lenient").map((r) => patternOf(r.path)),
      };
    }
    return policies;
  };
  // Why standardHostname off: Elysia otherwise assumes a host of at least four characters and
  // looks for the path from the 12th character on, so `Host: x` or `Host: a.b` routed nowhere.
  const app: AnyElysia = new Elysia({ handler: { standardHostname: false } })
    // Why: the caller is resolved before routing and before any body is read, so a bad credential
    // is a 401 on every /v1 path (routes to come included), and an anonymous caller never reaches
    // a body parser on a route that needs a credential. A lenient route (logout) answers whatever
    // came with it; its path is matched before routing, whatever the method.
    .onRequest(({ request }) => {
      const path = pathOf(request.url);
      if (!path.startsWith("/v1/")) return;
      if (declared().lenient.some((re) => re.test(path)))
        return Promise.resolve()
          .then(() => resolveCaller(ctx, request))
          .then(noop, noop);
      const caller = resolveCaller(ctx, request);
      if (caller instanceof Promise) return caller.then(noop);
    })
    // Git LFS (routes/lfs): its object paths answered before routing, so no parser reads an upload.
    .onRequest(lfsRequests(ctx))
    .onParse(({ request, contentType, route }) => {
      routeTemplates.set(request, route);
      const p = declared().of(request.method, route);
      // Signed routes get their exact bytes unparsed (the signature is over them), read only
      // after the headers could be refused (no verifier configured, no signature of the right
      // shape), within the size their sender documents (issue 25 row 7).
      if (isRaw(p.body)) {
        p.body.admit?.(request.headers);
        return readBodyLimited(request, p.body.raw);
      }
      if (route.startsWith("/v1/")) return readApiBody(request, p);
      // A web page that reads its own body (the avatar upload form): nothing read here.
      if (p.body === "stream") return null;
      // A web page's form (sign-in, settings, admin): read within its limit; CSRF is checked by the route.
      if (contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded")) return readForm(request);
      if (contentType?.toLowerCase().startsWith("application/json")) return parseJsonBody(request).then((v) => v ?? null);
    })
    .onTransform(({ request, route }) => {
      routeTemplates.set(request, route);
    })
    .onError(({ code, error, request }) => {
      if (code === "VALIDATION") {
        // Why: an answer that does not match its own schema is our fault, not the caller's: a 500, logged.
        if ((error as { type?: unknown }).type === "response") return errorResponse(responseMismatch(error), ctx.log, idOf(request), request);
        return json(400, { error: validationMessage(error) });
      }
      if (code === "PARSE") {
        // Elysia wraps what our parser throws (413, malformed JSON) in a ParseError.
        const cause = (error as { cause?: unknown }).cause;
        return cause instanceof AppError ? errorResponse(cause, ctx.log, "") : json(400, { error: "invalid request body" });
      }
      if (code === "NOT_FOUND") {
        // A known path asked with another method: 405 naming what it accepts (RFC 9110 §15.5.6).
        const methods = methodsFor(pathOf(request.url));
        if (methods.length)
          return json(405, { error: `${request.method} is not allowed here; this path accepts ${methods.join(", ")}` }, { allow: methods.join(", ") });
        return errorResponse(NotFound("no such route"), ctx.log, "");
      }
      if (error instanceof AppError) return errorResponse(error, ctx.log, "");
      return errorResponse(error, ctx.log, idOf(request), request);
    })
    .use(authRoutes(ctx))
    .use(orgRoutes(ctx))
    .use(tokenRoutes(ctx))
    .use(repoRoutes(ctx))
    .use(forkRoutes(ctx))
    .use(contentRoutes(ctx))
    .use(branchRoutes(ctx))
    .use(blameRoutes(ctx))
    .use(changeRoutes(ctx))
    .use(reviewRoutes(ctx))
    .use(commentRoutes(ctx))
    .use(suggestionRoutes(ctx))
    .use(issueRoutes(ctx))
    .use(sshKeyRoutes(ctx))
    .use(teamRoutes(ctx))
    .use(grantRoutes(ctx))
    .use(inviteRoutes(ctx))
    .use(emailRoutes(ctx))
    .use(avatarRoutes(ctx))
    .use(runnerAdminRoutes(ctx))
    .use(secretRoutes(ctx))
    .use(runnerAgentRoutes(ctx))
    .use(runnerActionRoutes(ctx))
    .use(runnerCacheRoutes(ctx))
    .use(runRoutes(ctx))
    .use(runnerArtifactRoutes(ctx))
    .use(artifactRoutes(ctx))
    .use(dispatchRoutes(ctx))
    .use(profileRoutes(ctx))
    .use(followRoutes(ctx))
    .use(pinRoutes(ctx))
    .use(contributionRoutes(ctx))
    .use(watchingRoutes(ctx))
    .use(searchRoutes(ctx))
    .use(metricsRoutes(ctx))
    .use(auditRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(mirrorRoutes(ctx))
    .use(inboundRoutes(ctx))
    .use(billingRoutes(ctx))
    .use(opsRoutes(ctx))
    .use(notificationRoutes(ctx))
    .use(lfsLockRoutes(ctx))
    .use(webRoutes(ctx))
    .use(openapiRoutes(() => app));
  return app;
}
