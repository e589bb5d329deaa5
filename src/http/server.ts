// The HTTP front door: Bun.serve dispatching git smart-HTTP and the /v1 application,
// with request ids and a JSON-lines access log.
import type { Server } from "bun";
import type { Ctx } from "../services/context.ts";
import { buildApp, requestIds, routeTemplates } from "./app.ts";
import { observeHttp } from "../services/ops/instrument.ts";
import { GIT_BODY_LIMIT } from "./body.ts";
import { newId } from "../util/ids.ts";

const ID_PREFIX = newId().slice(0, 6);
let sequence = 0;
/** A unique request id without touching the random source on the hot path. */
function nextRequestId(): string {
  return `${ID_PREFIX}-${(++sequence).toString(36)}`;
}
import { pathOf } from "./path.ts";
import { errorResponse } from "./errors.ts";

import { accessLine, writeLine } from "../log.ts";

/** Starts listening; resolves with the server once bound. */
export function startHttp(ctx: Ctx, opts: { hostname: string; port: number; git?: (req: Request) => Promise<Response | null> }): Server<undefined> {
  const app = buildApp(ctx);
  const logRequests = ctx.log.enabled("info");
  // Why: app.fetch is elysia's composed router (what its own listen() serves); app.handle only
  // wraps it in one more async call.
  const handle = app.fetch;
  return Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    // The largest body any route accepts; per-route limits are enforced while reading.
    maxRequestBodySize: GIT_BODY_LIMIT + 1024 * 1024,
    idleTimeout: 120,
    async fetch(request) {
      const started = performance.now();
      const id = nextRequestId();
      const path = pathOf(request.url);
      ctx.facts.fresh();
      requestIds.set(request, id);
      let response: Response;
      try {
        // The control plane never shares a path with git (which lives under /{org}/{repo}.git).
        const git = opts.git && !path.startsWith("/v1/") ? await opts.git(request) : null;
        response = git ?? (await handle(request));
      } catch (error) {
        response = errorResponse(error, ctx.log, id, request);
      }
      const elapsed = performance.now() - started;
      observeHttp(request.method, routeTemplates.get(request) ?? gitRouteOf(path), response.status, elapsed / 1000);
      if (logRequests) writeLine(accessLine(id, request.method, path, response.status, Math.round(elapsed * 10) / 10));
      return response;
    },
  });
}

const GIT_PATH = /^\/[^/]+\/[^/]+\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/** A bounded route label for a path no application route matched: the git endpoints, else "unrouted" (unknown paths, credentials refused before routing). */
function gitRouteOf(path: string): string {
  const m = GIT_PATH.exec(path);
  return m ? `/:org/:repo.git/${m[1]}` : "unrouted";
}
