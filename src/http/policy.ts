// Route policy, declared beside each route (issue 26) instead of path strings in app.ts: who may
// call a route before any of its body is read, and how that body is read. The front door
// (app.ts onRequest/onParse) and the OpenAPI document (openapi.ts) read it from the routes.
//
//   .post("/v1/auth/login", h, { detail: { summary: "…", ...policy({ caller: "anonymous", body: "uniform" }) } })
//
// A route without a policy is `{ caller: "credential", body: "json" }`.

/** What a route declares. */
export interface RoutePolicy {
  /**
   * - `credential` (default): an anonymous caller is 401 before a byte of the body is read.
   * - `anonymous`: anyone may send a body (signing in, signup, the mailed links; signed webhooks),
   *   within the smaller anonymous body limit.
   * - `runner`: a runner credential; without one the 401 says "invalid or revoked token", as for a bad one (SPEC §4.1).
   * - `lenient`: the caller is resolved leniently before routing, never refused (logout answers 204 whatever came, SPEC §4.3).
   */
  caller?: "credential" | "anonymous" | "runner" | "lenient";
  /**
   * - `json` (default): application/json only (415 otherwise), within its size and depth limits.
   * - `uniform`: the route has one answer whatever arrives, so any unusable body (another type,
   *   malformed, not an object) reads as no body; its fields are checked by the service.
   * - `{ raw }`: the exact bytes (a signature is over them), up to `raw` bytes, read only after
   *   `admit` accepted the headers.
   * - `stream`: the handler reads `request.body` itself as it arrives (an upload of any size, to a
   *   file, bounded by the handler); the front door reads none of it.
   */
  body?: "json" | "uniform" | "stream" | RawBody;
}

/** A body read as its exact bytes. */
export interface RawBody {
  raw: number;
  /** Refuses the request from its headers before the body is read (no verifier configured, no signature of the right shape). */
  admit?: (headers: Headers) => void;
}

/** The key of a route's policy in its `detail` (never in the OpenAPI document: openapi.ts removes it). */
export const POLICY_KEY = "x-svc-policy";

/** A route's policy, to spread into its `detail`. */
export function policy(p: RoutePolicy): { [POLICY_KEY]: RoutePolicy } {
  return { [POLICY_KEY]: p };
}

/** A registered route as Elysia lists it (`app.routes`). */
export interface PolicyRoute {
  method: string;
  path: string;
  hooks?: unknown;
}

/** The policy a route declared, defaults filled in. */
export function policyOf(route: PolicyRoute): Required<RoutePolicy> {
  const declared = (route.hooks as { detail?: Record<string, unknown> } | undefined)?.detail?.[POLICY_KEY] as RoutePolicy | undefined;
  return { caller: declared?.caller ?? "credential", body: declared?.body ?? "json" };
}

/** Whether a body policy reads raw bytes. */
export function isRaw(body: Required<RoutePolicy>["body"]): body is RawBody {
  return typeof body === "object";
}

/** The policies of `routes` by method and route pattern (`POST /v1/orgs/:org/repos`). */
export function policyTable(routes: readonly PolicyRoute[]): (method: string, pattern: string) => Required<RoutePolicy> {
  const byRoute = new Map<string, Required<RoutePolicy>>();
  for (const r of routes) byRoute.set(`${r.method.toUpperCase()} ${r.path}`, policyOf(r));
  const none = policyOf({ method: "", path: "" });
  return (method, pattern) => byRoute.get(`${method.toUpperCase()} ${pattern}`) ?? none;
}
