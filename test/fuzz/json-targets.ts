// Fuzzing the JSON routes of a running server: every documented route (from /v1/openapi.json),
// called with random parameters, bodies of random shapes, depths, sizes and encodings, under
// every kind of caller. Invariants: never a 500, always an answer within the time cap (JSON where
// it says JSON), and the repository the calls aim at stays whole (cloned and checked by git).
import { basicAuth } from "../helpers/git.ts";
import type { RunningServer } from "../helpers/server.ts";
import { mutate, type Rand, type Target } from "./lib.ts";

/** What the JSON fuzzer works against: a server with an org, a repository and credentials. */
export interface JsonWorld {
  server: RunningServer;
  org: string;
  repo: string;
  /** A repository the fuzzer may delete or rename. */
  scratch: string;
  handle: string;
  token: string;
  cookie: string;
  /** Checks the repository (clone/fetch and git fsck); throws when it is not whole. */
  checkRepository(): Promise<void>;
}

interface Route {
  method: string;
  path: string;
  bodyProps: string[];
  /** The statuses each method of this path documents (a documented 502/503 is an answer, not a failure). */
  statuses: Map<string, Set<number>>;
}

/** The documented routes, from the server's own OpenAPI document. */
export async function routesOf(server: RunningServer): Promise<Route[]> {
  const doc = await (await fetch(`${server.url}/v1/openapi.json`)).json();
  const out: Route[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    const statuses = new Map<string, Set<number>>();
    for (const [method, op] of Object.entries<any>(item)) statuses.set(method.toUpperCase(), new Set(Object.keys(op.responses ?? {}).map(Number)));
    for (const [method, op] of Object.entries<any>(item)) {
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      out.push({ method: method.toUpperCase(), path, bodyProps: Object.keys(schema?.properties ?? {}), statuses });
    }
  }
  return out;
}

const STRINGS = [
  "",
  "a",
  "acme",
  "app",
  "main",
  "refs/heads/main",
  "x".repeat(300),
  "ü",
  "\u0000",
  "\ud800",
  "../..",
  "%zz",
  "%2F",
  "<script>",
  "' OR 1=1 --",
  "__proto__",
  "svc_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
  "a@b.c",
  "http://127.0.0.1:1/",
  "-1",
  "1e400",
  "null",
  " ",
];
const KEYS = [
  "name",
  "email",
  "password",
  "handle",
  "scopes",
  "label",
  "public",
  "description",
  "message",
  "operations",
  "op",
  "path",
  "content",
  "branch",
  "expected_parent",
  "target",
  "expected",
  "role",
  "token",
  "invite",
  "new_password",
  "context",
  "__proto__",
  "constructor",
  "prototype",
  "public_key",
  "token_id",
  "members",
  "team",
  "user",
  "expires_at",
  "limit",
  "cursor",
];

/** A random JSON value: shapes, depths (sometimes past the limit), sizes and odd numbers. */
function value(r: Rand, depth: number): unknown {
  const k = r.int(depth > 8 ? 6 : 9);
  switch (k) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -0, 1, -1, 2 ** 53, 1.5, 1e308, -1e-308, 10000, 10001, 3653, 101]);
    case 3:
    case 4:
      return r.chance(0.9) ? r.pick(STRINGS) : "y".repeat(r.int(r.chance(0.1) ? 3_000_000 : 5000));
    case 5:
      return r.pick(["repo:read", "repo:write", "org:read", "org:admin", "owner", "member", "viewer", "admin", "put", "delete", "put_base64"]);
    case 6: {
      const a: unknown[] = [];
      for (let i = 0; i < r.int(r.chance(0.05) ? 12000 : 5); i++) a.push(value(r, depth + 1));
      return a;
    }
    default: {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < r.int(6); i++) o[r.pick(KEYS)] = value(r, depth + 1);
      return o;
    }
  }
}

/** Bodies the routes accept, so that a share of the calls reaches the services and the repository. */
const VALID: Record<string, (r: Rand) => unknown> = {
  "POST /v1/orgs/{org}/repos": (r) => ({ name: `r${r.int(1000)}`, public: r.chance(0.5), description: "fuzz" }),
  "PATCH /v1/orgs/{org}/repos/{repo}": (r) => ({ description: `d${r.int(100)}` }),
  "POST /v1/orgs/{org}/repos/{repo}/commits": (r) => ({
    message: `fuzz ${r.int(1e6)}`,
    branch: r.pick(["main", "main", `f${r.int(5)}`]),
    context: r.chance(0.3) ? value(r, 0) : undefined,
    operations: Array.from({ length: 1 + r.int(3) }, (_, i) => ({
      op: "put",
      path: r.pick([`d${r.int(4)}/f${i}.txt`, `top${i}.md`, "ü/ß.txt", "a b/c d"]),
      content: "x".repeat(r.int(100)),
    })),
  }),
  "PUT /v1/orgs/{org}/repos/{repo}/refs/{rest}": () => ({ target: "main" }),
  "POST /v1/orgs/{org}/tokens": (r) => ({ scopes: [r.pick(["repo:read", "repo:write", "org:read"])], label: `t${r.int(100)}` }),
  "POST /v1/orgs/{org}/teams": (r) => ({ name: `team${r.int(50)}` }),
  "PUT /v1/orgs/{org}/repos/{repo}/protections/{rest}": (r) => ({ allow_force_push: r.chance(0.5) }),
};

/** A body near the route's own shape (its documented fields, values of any type), or anything at all. */
function bodyFor(route: Route, r: Rand): string {
  const valid = VALID[`${route.method} ${route.path}`];
  if (valid && r.chance(0.5)) return JSON.stringify(valid(r));
  if (r.chance(0.08)) return `${"[".repeat(r.pick([63, 64, 65, 1000, 100_000]))}${"]".repeat(r.pick([63, 64, 65, 1000, 100_000]))}`;
  if (r.chance(0.1)) return JSON.stringify(value(r, 0));
  const o: Record<string, unknown> = {};
  for (const p of route.bodyProps) if (r.chance(0.8)) o[p] = value(r, 0);
  if (route.bodyProps.includes("operations") && r.chance(0.7)) {
    o.operations = Array.from({ length: 1 + r.int(4) }, () => ({
      op: r.pick(["put", "delete", "put_base64", "x"]),
      path: r.pick(["a.txt", "d/e.txt", ".gitmodules", ".git/config", "../x", "GIT~1/x", "a//b", "", "ü/ß.txt"]),
      content: r.pick(["x", "aGVsbG8=", "!!", '[submodule "../../x"]\n\turl = ./x\n']),
    }));
  }
  if (r.chance(0.1)) o[r.pick(KEYS)] = value(r, 0);
  return JSON.stringify(o);
}

/** Percent-encoding that never throws (a lone surrogate is sent as its replacement). */
function encode(s: string): string {
  return encodeURIComponent(s.toWellFormed());
}

/** Routes that would delete or rename the repository the invariant checks: aimed at a scratch one. */
const DESTRUCTIVE = new Set(["DELETE /v1/orgs/{org}/repos/{repo}", "PATCH /v1/orgs/{org}/repos/{repo}"]);

/** A path with its parameters filled, mostly with real names, sometimes with hostile ones. */
function pathFor(route: Route, w: JsonWorld, r: Rand): string {
  const repo = DESTRUCTIVE.has(`${route.method} ${route.path}`) ? w.scratch : w.repo;
  const fill = (name: string): string => {
    if (r.chance(0.15)) return r.pick(["%2e%2e", "%00", "x".repeat(300), "%E2%80%8C", "ACME", "-", "%25", "a%2Fb", encode(r.pick(STRINGS)) || "z"]);
    switch (name) {
      case "org":
        return w.org;
      case "repo":
        return repo;
      case "handle":
        return w.handle;
      case "rest":
        return r.pick(["heads/main", "refs/heads/main", "main", "refs/heads/fuzz-x", "heads/new", "refs/tags/v1", "a/b/c"]);
      default:
        return r.pick(["0", "1", "someone", "nobody@example.com", "01JBADID"]);
    }
  };
  let path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => fill(name));
  // Why: a URL parser reads `%2e%2e` as `..` (fetch resolves it before sending), so a
  // sub-resource path can climb to the repository itself (DELETE …/refs/%2e%2e is DELETE of the
  // repository): such a path is aimed at the scratch repository too.
  if (repo === w.repo && new URL(path, "http://x").pathname.replace(/\/+$/, "") === `/v1/orgs/${w.org}/repos/${w.repo}`) {
    path = path.replace(`/repos/${w.repo}/`, `/repos/${w.scratch}/`);
  }
  const query = r.chance(0.3)
    ? `?${r.pick(["limit", "cursor", "path", "ref", "expected", "service"])}=${encode((JSON.stringify(value(r, 5)) ?? "").slice(0, 200))}`
    : "";
  return path + query;
}

/** One call's headers: some caller, some content type. */
function headersFor(w: JsonWorld, r: Rand): Record<string, string> {
  const h: Record<string, string> = {};
  const who = r.int(10);
  if (who < 5) h.authorization = `Bearer ${w.token}`;
  else if (who < 7) {
    h.cookie = w.cookie;
    if (r.chance(0.8)) h.origin = w.server.url;
  } else if (who < 8)
    h.authorization = r.pick(["Bearer svc_aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "Basic %%%", basicAuth(w.token), "Bearer", "Digest x"]);
  h["content-type"] = r.chance(0.7)
    ? "application/json"
    : r.pick([
        "application/json; charset=utf-8",
        "application/json; charset=utf-16",
        "APPLICATION/JSON",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "",
      ]);
  if (!h["content-type"]) delete h["content-type"];
  return h;
}

/** The JSON-route fuzz target; `every` cases the repository is checked whole. */
export async function jsonRouteTarget(w: JsonWorld, opts: { every?: number; capMs?: number } = {}): Promise<Target & { statuses: Map<number, number> }> {
  const routes = (await routesOf(w.server)).filter((rt) => !rt.path.startsWith("/v1/docs"));
  const statuses = new Map<number, number>();
  const capMs = opts.capMs ?? 20_000;
  return {
    name: "JSON routes",
    statuses,
    every: opts.every ?? 50,
    invariant: () => w.checkRepository(),
    async run(r) {
      const route = r.pick(routes);
      const method =
        r.chance(0.9) || route.path === "/v1/orgs/{org}/repos/{repo}" ? route.method : r.pick(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
      const headers = headersFor(w, r);
      // Signing out would end the session every later cookie call relies on.
      if (route.path === "/v1/auth/logout") delete headers.cookie;
      let body: string | Uint8Array | undefined;
      if (method !== "GET" && method !== "HEAD" && r.chance(0.9)) {
        const text = bodyFor(route, r);
        // Encodings: as is, mutated bytes (invalid UTF-8 included), with a BOM, or UTF-16.
        const e = r.int(10);
        body = e < 6 ? text : e < 8 ? mutate(new TextEncoder().encode(text), r, 3) : e < 9 ? `\ufeff${text}` : new Uint8Array(Buffer.from(text, "utf16le"));
      }
      const url = w.server.url + pathFor(route, w, r);
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body: body as BodyInit | undefined, signal: AbortSignal.timeout(capMs) });
      } catch (e) {
        throw new Error(`${method} ${url}: no answer (${e instanceof Error ? e.message : String(e)})`);
      }
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      // Invariant: never a 500, and no other server-side status the route does not document
      // (billing's 503 without a payment provider is documented for the methods that answer it).
      const documented = route.statuses.get(method)?.has(res.status) ?? false;
      if (res.status === 500 || (res.status > 500 && !documented))
        throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 300)}\nbody: ${typeof body === "string" ? body.slice(0, 300) : "(bytes)"}`);
      if ((res.headers.get("content-type") ?? "").startsWith("application/json") && text) {
        try {
          JSON.parse(text);
        } catch {
          throw new Error(`${method} ${url} → ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
        }
      }
      if (text.length > 64 * 1024 && res.status >= 400) throw new Error(`${method} ${url} → ${res.status} with a ${text.length}-byte error`);
    },
  };
}
