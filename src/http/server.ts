// The HTTP front door: Bun.serve dispatching git smart-HTTP and the /v1 application,
// with request ids and a JSON-lines access log.
import type { Server } from "bun";
import type { Ctx } from "../services/context.ts";
import { buildApp, requestIds } from "./app.ts";
import { GIT_BODY_LIMIT } from "./body.ts";
import { newId } from "../util/ids.ts";

/** Starts listening; resolves with the server once bound. */
export function startHttp(ctx: Ctx, opts: { hostname: string; port: number; git?: (req: Request) => Promise<Response | null> }): Server<undefined> {
  const app = buildApp(ctx);
  const handle = app.handle.bind(app);
  return Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    // The largest body any route accepts; per-route limits are enforced while reading.
    maxRequestBodySize: GIT_BODY_LIMIT + 1024 * 1024,
    idleTimeout: 120,
    async fetch(request) {
      const started = performance.now();
      const id = newId();
      requestIds.set(request, id);
      let response: Response;
      try {
        response = (opts.git && (await opts.git(request))) || (await handle(request));
      } catch (error) {
        ctx.log.error("unhandled error", { request_id: id, error: String(error) });
        response = new Response(JSON.stringify({ error: "internal error", request_id: id }), { status: 500, headers: { "content-type": "application/json" } });
      }
      const url = new URL(request.url);
      ctx.log.info("request", {
        request_id: id,
        method: request.method,
        path: url.pathname,
        status: response.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      });
      return response;
    },
  });
}
