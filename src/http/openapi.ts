// GET /v1/openapi.json (OpenAPI 3.1, generated from the route schemas) and GET /v1/docs (a reader
// for it, served from the binary). The generator is @elysiajs/openapi's; this module completes what it leaves out: request
// bodies (our own JSON body parser hides their content type from it), bodiless 204 answers, the
// `*` tail of a path as a declared parameter, and the statuses the front door answers on any route.
import { toOpenAPISchema } from "@elysiajs/openapi";
import { unwrapSchema } from "@elysiajs/openapi/openapi";
import { Elysia, type AnyElysia } from "elysia";
import { ErrorBody } from "../services/schemas.ts";
import { POLICY_KEY, policyOf, type RoutePolicy } from "./policy.ts";
import { DOCS_PAGE } from "./routes/ops/docs-page.ts";

export const OPENAPI_PATH = "/v1/openapi.json";
export const DOCS_PATH = "/v1/docs";
const VERSION = "3.1.2";
const INFO = { title: "svc", version: "1.0.0", description: "Control plane of the svc git host" } as const;

type Json = Record<string, any>;

const TAIL = "rest";
const errorSchema = (description: string) => ({
  description,
  content: { "application/json": { schema: { ...JSON.parse(JSON.stringify(ErrorBody)), description } } },
});
const serverError = {
  description: "internal error: logged with its request id and stack",
  content: {
    "application/json": {
      schema: {
        type: "object",
        required: ["error", "request_id"],
        properties: { error: { type: "string", const: "internal error" }, request_id: { type: "string", description: "quote it when reporting the problem" } },
        examples: [{ error: "internal error", request_id: "k3x9m2-1f" }],
      },
    },
  },
} as const;

/** The OpenAPI document of `app`'s visible routes. */
export function buildDocument(app: AnyElysia): Json {
  const { paths, components } = toOpenAPISchema(app, undefined, undefined, undefined, VERSION) as { paths: Json; components: Json };
  // What the front door does before routing, by each route's declared policy (policy.ts), so the
  // document can say which statuses it adds.
  const policies = new Map<string, Required<RoutePolicy>>();
  for (const route of app.routes) policies.set(`${route.method.toLowerCase()} ${docPath(route.path)}`, policyOf(route));
  // Request bodies, from the routes' own body schemas: every JSON route reads application/json.
  for (const route of app.routes) {
    const body = (route.hooks as { body?: unknown } | undefined)?.body;
    const op = paths[docPath(route.path)]?.[route.method.toLowerCase()];
    if (!op || !body || !op.requestBody) continue;
    op.requestBody.content = { "application/json": { schema: unwrapSchema(body as never, undefined, "input", VERSION) } };
  }
  const out: Json = {};
  for (const [path, item] of Object.entries(paths)) {
    const tail = path.endsWith("/*");
    const key = tail ? `${path.slice(0, -1)}{${TAIL}}` : path;
    for (const [method, op] of Object.entries(item as Json)) {
      if (tail) {
        op.parameters = [
          ...(op.parameters ?? []).filter((p: Json) => p.name !== "*"),
          { name: TAIL, in: "path", required: true, description: "the rest of the path; may contain slashes", schema: { type: "string" } },
        ];
      }
      delete op[POLICY_KEY];
      completeResponses(op, method, policies.get(`${method} ${path}`) ?? policyOf({ method, path }));
    }
    out[key] = item;
  }
  return { openapi: VERSION, info: INFO, paths: out, components: { schemas: { ...(components?.schemas ?? {}) } } };
}

/** A route path as the document keys it (`:org` → `{org}`; the `*` tail is renamed later). */
function docPath(path: string): string {
  return path.replace(/:([^/]+)/g, "{$1}");
}

/** Fixes bodiless answers and adds what the front door can answer before the route runs. */
function completeResponses(op: Json, method: string, policy: Required<RoutePolicy>): void {
  const responses: Json = (op.responses ??= {});
  for (const r of Object.values(responses) as Json[]) {
    // A `null` (204) schema comes out as a bogus content map; such an answer has no content.
    if (r.content && typeof r.content.type === "string") delete r.content;
  }
  const add = (status: string, value: Json) => {
    if (!(status in responses)) responses[status] = value;
  };
  const hasBody = !!op.requestBody;
  const hasQuery = (op.parameters ?? []).some((p: Json) => p.in === "query");
  if (policy.caller !== "lenient") {
    add("401", errorSchema("no or unusable credential (checked before routing)"));
    if (method !== "get" && method !== "head") add("403", errorSchema("cross-site request refused: a cookie session needs a JSON body or our Origin"));
    add("429", errorSchema("too many unusable credentials from this address; Retry-After says when to try again"));
  }
  if (hasBody || hasQuery) add("400", errorSchema("malformed JSON body (or nested deeper than 64) or invalid parameters"));
  if (hasBody) add("413", errorSchema("request body over 25 MiB"));
  if (hasBody && policy.body !== "uniform") add("415", errorSchema("the body is not application/json"));
  add("500", serverError);
}

/** The document and its reader as routes, built from the final application on first request. */
export function openapiRoutes(app: () => AnyElysia) {
  let cached: { routes: number; doc: Json } | null = null;
  const document = () => {
    const a = app();
    if (!cached || cached.routes !== a.routes.length) cached = { routes: a.routes.length, doc: buildDocument(a) };
    return cached.doc;
  };
  return (
    new Elysia({ name: "routes.openapi" })
      .get(OPENAPI_PATH, () => document(), { detail: { hide: true } })
      // Why our own page: the plugin's readers load their scripts from a CDN; this one is in the
      // binary and works offline (routes/ops/docs-page.ts).
      .get(DOCS_PATH, () => new Response(DOCS_PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }), { detail: { hide: true } })
  );
}
