// Which methods a path accepts, derived from the application's own route list, so a known path
// asked with the wrong method answers 405 with an `Allow` header (RFC 9110 §15.5.6) instead of 404.

/** A registered route as Elysia lists it (`app.routes`). */
export interface RouteEntry {
  method: string;
  path: string;
}

/** The order methods are listed in `Allow`. */
const ORDER: readonly string[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** A route path (`/v1/orgs/:org/teams`, `…/refs/*`) as an anchored regular expression. */
export function patternOf(path: string): RegExp {
  let source = "";
  for (const segment of path.split("/").slice(1)) {
    if (segment === "*") source += "/.*";
    else if (segment.startsWith(":")) source += segment.endsWith("?") ? "(?:/[^/]+)?" : "/[^/]+";
    else source += "/" + segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source || "/"}$`);
}

/**
 * Builds the lookup from the routes: the methods a request path is routed for (HEAD wherever GET
 * is, as the router answers it), or an empty list for a path no route matches.
 */
export function methodTable(routes: readonly RouteEntry[]): (path: string) => string[] {
  const byPattern = new Map<string, { re: RegExp; methods: Set<string> }>();
  for (const r of routes) {
    const entry = byPattern.get(r.path) ?? { re: patternOf(r.path), methods: new Set<string>() };
    entry.methods.add(r.method.toUpperCase());
    if (r.method.toUpperCase() === "GET") entry.methods.add("HEAD");
    byPattern.set(r.path, entry);
  }
  const entries = [...byPattern.values()];
  return (path) => {
    // The router ignores one trailing slash (`/v1/orgs/` is `/v1/orgs`); so does this lookup.
    const p = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    const methods = new Set<string>();
    for (const e of entries) if (e.re.test(p)) for (const m of e.methods) methods.add(m);
    return [...methods].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
  };
}

function rank(method: string): number {
  const i = ORDER.indexOf(method);
  return i < 0 ? ORDER.length : i;
}
