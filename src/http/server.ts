// The HTTP front door: Bun.serve dispatching git smart-HTTP and the /v1 application,
// with request ids and a JSON-lines access log.
import type { Server } from "bun";
import type { Ctx } from "../services/context.ts";
import { buildApp, requestIds } from "./app.ts";
import { GIT_BODY_SLACK, JSON_BODY_LIMIT } from "./body.ts";
import { newId } from "../util/ids.ts";

const ID_PREFIX = newId().slice(0, 6);
let sequence = 0;
/** A unique request id without touching the random source on the hot path. */
function nextRequestId(): string {
  return `${ID_PREFIX}-${(++sequence).toString(36)}`;
}
import { pathOf } from "./path.ts";
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
    // Above every route's own limit (enforced while reading, with a message): Bun's own limit
    // resets the connection, which git reports as "RPC failed; curl 65" with no reason.
    maxRequestBodySize: Math.max(ctx.config.gitMaxPush, JSON_BODY_LIMIT) + 2 * GIT_BODY_SLACK,
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
        ctx.log.error("unhandled error", { request_id: id, error: String(error) });
        response = new Response(JSON.stringify({ error: "internal error", request_id: id }), { status: 500, headers: { "content-type": "application/json" } });
      }
      if (logRequests) writeLine(accessLine(id, request.method, path, response.status, Math.round((performance.now() - started) * 10) / 10));
      return response;
    },
  });
}
