// The HTTP front door: Bun.serve dispatching git smart-HTTP and the /v1 application,
// with request ids and a JSON-lines access log.
import { noteApiRead } from "../services/metrics/record.ts";
import type { Server } from "bun";
import type { Ctx } from "../services/context.ts";
import { buildApp, requestIds, routeTemplates } from "./app.ts";
import { GIT_BODY_SLACK, JSON_BODY_LIMIT } from "./body.ts";
import { newId } from "../util/ids.ts";

/** Unique request ids without touching the random source on the hot path: a random prefix per server, then a counter. */
function requestIdSource(): () => string {
  const prefix = newId().slice(0, 6);
  let sequence = 0;
  return () => `${prefix}-${(++sequence).toString(36)}`;
}
import { pathOf, wellFormedPath } from "./path.ts";
import { errorResponse, json } from "./errors.ts";
import { rememberSource, sourceAddress } from "./source.ts";

import { accessLine, writeLine } from "../log.ts";

/** Starts listening; resolves with the server once bound. */
export function startHttp(ctx: Ctx, opts: { hostname: string; port: number; git?: (req: Request) => Promise<Response | null> }): Server<undefined> {
  const app = buildApp(ctx);
  const logRequests = ctx.log.enabled("info");
  // Why: app.fetch is elysia's composed router (what its own listen() serves); app.handle only
  // wraps it in one more async call.
  const handle = app.fetch;
  const nextRequestId = requestIdSource();
  return Bun.serve({
    hostname: opts.hostname,
    port: opts.port,
    // Above every route's own limit (enforced while reading, with a message): Bun's own limit
    // resets the connection, which git reports as "RPC failed; curl 65" with no reason.
    maxRequestBodySize: Math.max(ctx.config.gitMaxPush, ctx.config.lfsMaxObject, ctx.config.ciCacheMax, JSON_BODY_LIMIT) + 2 * GIT_BODY_SLACK,
    idleTimeout: 120,
    async fetch(received, server) {
      const started = performance.now();
      const id = nextRequestId();
      // Why: a Host header that is not a valid authority (`a b`, `x/y`, none under HTTP/1.0) gives
      // a URL without scheme and host; routing never depends on the host, so such a request is
      // routed by its path like any other.
      const request = received.url.charCodeAt(0) === 0x2f ? new Request(`http://localhost${received.url}`, received) : received;
      const path = pathOf(request.url);
      ctx.facts.fresh();
      requestIds.set(request, id);
      rememberSource(request, sourceAddress(request, server.requestIP(received)?.address, ctx.config.limits.trustProxy));
      let response: Response;
      try {
        // The path is decoded once, here: a malformed percent-escape never reaches a route.
        if (!wellFormedPath(path)) response = json(400, { error: "malformed percent-escape in the request path" });
        else {
          // The control plane never shares a path with git (which lives under /{org}/{repo}.git).
          const git = opts.git && !path.startsWith("/v1/") ? await opts.git(request) : null;
          response = git ?? (await handle(request));
        }
      } catch (error) {
        response = errorResponse(error, ctx.log, id, request);
      }
      if (response.status >= 400 && hasUnreadBody(request, response.status)) response = closing(response);
      const elapsed = performance.now() - started;
      noteApiRead(ctx, request.method, path, response.status, elapsed, Number(response.headers.get("content-length") ?? 0) || 0);
      ctx.telemetry.observeHttp(request.method, routeTemplates.get(request) ?? gitRouteOf(path), response.status, elapsed / 1000);
      if (logRequests) writeLine(accessLine(id, request.method, path, response.status, Math.round(elapsed * 10) / 10));
      return response;
    },
  });
}

/**
 * Whether a refused request may still have body bytes on the wire: it declared a body and the
 * answer came before it was read (a 413 also when reading stopped part way).
 */
function hasUnreadBody(request: Request, status: number): boolean {
  if (request.body === null || request.headers.get("content-length") === "0") return false;
  return status === 413 || !request.bodyUsed;
}

/**
 * The answer with `Connection: close`. Why: to keep the connection, the server would have to read
 * (and throw away) the rest of a body it refused; eight 24 MiB sign-in bodies refused at once
 * still cost the event loop their 192 MiB that way (issue 25 row 7). Closed, the sender stops.
 */
function closing(response: Response): Response {
  try {
    response.headers.set("connection", "close");
    return response;
  } catch {
    // Immutable headers (a redirect): copy them.
    const headers = new Headers(response.headers);
    headers.set("connection", "close");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

const GIT_PATH = /^\/[^/]+\/[^/]+\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/** The Git LFS paths answered ahead of routing (routes/lfs/lfs.ts). */
const LFS_PATH = /^\/[^/]+\/[^/]+\/info\/lfs\/(objects\/batch|objects\/[0-9a-f]{64}|verify)$/;

/** A bounded route label for a path no application route matched: the git and Git LFS endpoints, else "unrouted" (unknown paths, credentials refused before routing). */
function gitRouteOf(path: string): string {
  const m = GIT_PATH.exec(path);
  if (m) return `/:org/:repo.git/${m[1]}`;
  const lfs = LFS_PATH.exec(path);
  if (lfs) return `/:org/:repo.git/info/lfs/${lfs[1] === "objects/batch" || lfs[1] === "verify" ? lfs[1] : "objects/:oid"}`;
  return "unrouted";
}
