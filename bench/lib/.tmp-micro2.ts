import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { Database } from "bun:sqlite";
import { and, eq, sql } from "drizzle-orm";
import { startSvc, bootstrap } from "./svc.ts";
import { loadConfig } from "../../src/config.ts";
import { openContext } from "../../src/main.ts";
import { orgs, repos, tokens, users, memberships, subscriptions } from "../../src/db/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "micro-"));
const s = await startSvc(dir, { SVC_LOG: "warn" });
const fx = await bootstrap(s, { org: "bench", repo: "widgets" });
await s.stop();
const ctx = await openContext(loadConfig({ SVC_DATA_DIR: s.dataDir, SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: "warn" }));
const raw = (ctx.db as any).$client as Database;
const N = 20000;
function time(label: string, fn: () => unknown) {
  for (let i = 0; i < 2000; i++) fn();
  const t = performance.now();
  for (let i = 0; i < N; i++) fn();
  const us = ((performance.now() - t) * 1000) / N;
  console.log(`${label.padEnd(60)} ${us.toFixed(1).padStart(7)} µs/op`);
}
const org = ctx.db.select().from(orgs).where(sql`lower(${orgs.name}) = lower(${"bench"})`).get()!;
const tokId = fx.token.split("_")[1]!;
const cases: [string, () => any][] = [
  ["tokens by id (select *)", () => ctx.db.select().from(tokens).where(eq(tokens.id, tokId))],
  ["orgs by lower(name) (select *)", () => ctx.db.select().from(orgs).where(sql`lower(${orgs.name}) = lower(${"bench"})`)],
  ["repos by org+lower(name) (select *)", () => ctx.db.select().from(repos).where(and(eq(repos.orgId, org.id), sql`lower(${repos.name}) = lower(${"widgets"})`))],
  ["membership role", () => ctx.db.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.userId, "x")))],
  ["count subscriptions", () => ctx.db.select({ n: sql<number>`count(*)` }).from(subscriptions).where(and(eq(subscriptions.repoId, "r"), eq(subscriptions.level, "all")))],
];
for (const [label, build] of cases) {
  const q = build().toSQL();
  time(`${label}: drizzle build+get`, () => build().get());
  time(`${label}: drizzle build only (toSQL)`, () => build().toSQL());
  time(`${label}: raw prepare+get+finalize`, () => { const st = raw.prepare(q.sql); const r = st.get(...q.params); st.finalize(); return r; });
  const c = raw.query(q.sql);
  time(`${label}: raw cached get`, () => c.get(...q.params));
  const prep = build().prepare();
  time(`${label}: drizzle .prepare() reused`, () => prep.get());
}
console.log(Object.keys(tokens).length, Object.keys(repos).length);
ctx.close();
