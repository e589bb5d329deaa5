// temp: variant servers to isolate framework overhead (mode in argv[2])
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import { newId } from "../../src/util/ids.ts";
import { createLogger } from "../../src/log.ts";
const mode = process.argv[2]!;
const log = createLogger(process.argv[3] === "warn" ? "warn" : "info");
const body = { hello: "world" };
let fetchFn: (r: Request) => Response | Promise<Response>;
const requestIds = new WeakMap<Request, string>();
const wrap = (inner: (r: Request) => Response | Promise<Response>) => async (request: Request) => {
  const started = performance.now();
  const id = newId();
  requestIds.set(request, id);
  const response = await inner(request);
  const url = new URL(request.url);
  log.info("request", { request_id: id, method: request.method, path: url.pathname, status: response.status, ms: Math.round((performance.now() - started) * 10) / 10 });
  return response;
};
if (mode === "wrapper") fetchFn = wrap(() => Response.json(body));
else if (mode === "elysia") {
  const app = new Elysia().get("/v1/orgs/:org/repos/:repo", ({ params }) => ({ ...body, ...params }));
  fetchFn = app.handle.bind(app);
} else if (mode === "elysia-openapi") {
  const app = new Elysia().use(openapi({ path: "/v1/docs", specPath: "/v1/openapi.json" }))
    .onTransform(({ request }) => { new URL(request.url).pathname.startsWith("/v1/"); })
    .get("/v1/orgs/:org/repos/:repo", ({ params }) => ({ ...body, ...params }));
  fetchFn = app.handle.bind(app);
} else if (mode === "elysia-openapi-wrapper") {
  const app = new Elysia().use(openapi({ path: "/v1/docs", specPath: "/v1/openapi.json" }))
    .onTransform(({ request }) => { new URL(request.url).pathname.startsWith("/v1/"); })
    .get("/v1/orgs/:org/repos/:repo", ({ params }) => ({ ...body, ...params }));
  fetchFn = wrap(app.handle.bind(app));
} else if (mode.startsWith("sql")) {
  // elysia+openapi+wrapper and N SQLite lookups per request: "sqlN-cached" or "sqlN-prepare"
  const { Database } = await import("bun:sqlite");
  const db = new Database(process.env.DB!, { readonly: true });
  const [, n, how] = /^sql(\d+)-(cached|prepare)$/.exec(mode)!;
  const q = 'select "id", "org_id", "name", "kind", "public", "default_branch", "description" from "repos" where ("repos"."org_id" = ? and lower("repos"."name") = lower(?)) limit ?';
  const st = db.query(q);
  const orgId = (db.query("select id from orgs").get() as any).id;
  const app = new Elysia().use(openapi({ path: "/v1/docs", specPath: "/v1/openapi.json" }))
    .onTransform(({ request }) => { new URL(request.url).pathname.startsWith("/v1/"); })
    .get("/v1/orgs/:org/repos/:repo", ({ params }) => {
      let r: any;
      for (let i = 0; i < Number(n); i++) {
        if (how === "cached") r = st.get(orgId, params.repo, 1);
        else { const p = db.prepare(q); r = p.get(orgId, params.repo, 1); p.finalize(); }
      }
      return { ...body, ...r };
    });
  fetchFn = wrap(app.handle.bind(app));
} else throw new Error(mode);
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: fetchFn });
process.stdout.write(`listening http=http://127.0.0.1:${server.port}\n`);
