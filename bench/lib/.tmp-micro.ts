// temp: attribute per-request cost of GET /v1/orgs/{org}/repos/{repo} in-process
import { join } from "node:path";
import { mkdtempSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { Database } from "bun:sqlite";
import { BUN, ROOT, cleanEnv } from "./proc.ts";
import { startSvc, bootstrap } from "./svc.ts";
import { loadConfig } from "../../src/config.ts";
import { openContext } from "../../src/main.ts";
import { resolvePrincipal } from "../../src/services/auth.ts";
import { requireRepo } from "../../src/services/lookup.ts";
import { authorize } from "../../src/services/access.ts";
import { getRepo, repoBody } from "../../src/services/repos.ts";
import { buildApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/log.ts";

const dir = mkdtempSync(join(tmpdir(), "micro-"));
const s = await startSvc(dir, { SVC_LOG: "warn" });
const fx = await bootstrap(s, { org: "bench", repo: "widgets" });
await s.stop();

const ctx = await openContext(loadConfig({ SVC_DATA_DIR: s.dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "warn" }));
// count prepares / statement executions
let prepares = 0;
const sqliteProto = Database.prototype as any;
const origPrepare = sqliteProto.prepare;
sqliteProto.prepare = function (...a: any[]) { prepares++; return origPrepare.apply(this, a); };

const N = Number(process.env.N ?? 20000);
function time(label: string, fn: () => unknown) {
  for (let i = 0; i < 2000; i++) fn();
  prepares = 0;
  const t = performance.now();
  for (let i = 0; i < N; i++) fn();
  const us = ((performance.now() - t) * 1000) / N;
  console.log(`${label.padEnd(52)} ${us.toFixed(1).padStart(7)} µs/op  ${(prepares / N).toFixed(1)} prepares/op`);
  return us;
}
async function timeAsync(label: string, fn: () => Promise<unknown>) {
  for (let i = 0; i < 2000; i++) await fn();
  prepares = 0;
  const t = performance.now();
  for (let i = 0; i < N; i++) await fn();
  const us = ((performance.now() - t) * 1000) / N;
  console.log(`${label.padEnd(52)} ${us.toFixed(1).padStart(7)} µs/op  ${(prepares / N).toFixed(1)} prepares/op`);
  return us;
}
const cred = { authorization: `Bearer ${fx.token}`, session: null };
const p = resolvePrincipal(ctx, cred);
const { org, repo } = requireRepo(ctx, p, "bench", "widgets");

time("resolvePrincipal (verifyToken: token+user)", () => resolvePrincipal(ctx, cred));
time("requireRepo (findOrg+findRepo)", () => requireRepo(ctx, p, "bench", "widgets"));
time("authorize repo:read (loadPersonInOrg)", () => authorize(ctx, p, org, "repo:read", repo));
time("repoBody (loadPersonInOrg again + 2 counts)", () => repoBody(ctx, p, org, repo));
time("getRepo (service total, principal given)", () => getRepo(ctx, p, "bench", "widgets"));

// raw sqlite: one typical lookup, prepared per call vs cached
const raw = (ctx.db as any).$client as Database;
const q = 'select "id", "org_id", "name" from "repos" where ("repos"."org_id" = ? and lower("repos"."name") = lower(?)) limit ?';
time("bun:sqlite prepare()+get per call (what drizzle does)", () => { const st = raw.prepare(q); const r = st.get(org.id, "widgets", 1); st.finalize(); return r; });
const cached = raw.query(q);
time("bun:sqlite cached statement get", () => cached.get(org.id, "widgets", 1));

const app = buildApp(ctx);
const url = `http://127.0.0.1:1${fx.path}`;
const hdr = { authorization: `Bearer ${fx.token}` };
await timeAsync("elysia app.handle (whole /v1 app, no access log)", async () => { const r = await app.handle(new Request(url, { headers: hdr })); await r.text(); });

const nul = createLogger("info");
time("access log line (info) JSON.stringify + stderr write", () => nul.info("request", { request_id: "x".repeat(26), method: "GET", path: fx.path, status: 200, ms: 0.5 }));
const warnLog = createLogger("warn");
time("access log line (warn level: filtered)", () => warnLog.info("request", { request_id: "x", method: "GET", path: fx.path, status: 200, ms: 0.5 }));
ctx.close();
