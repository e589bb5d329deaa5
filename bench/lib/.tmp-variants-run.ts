import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { BUN, ROOT, cleanEnv, spawnServer } from "./proc.ts";
import { runLoad } from "./load.ts";
const dir = mkdtempSync(join(tmpdir(), "var-"));
for (const m of (process.env.MODES ?? "hello wrapper wrapper:warn elysia elysia-openapi elysia-openapi-wrapper hello").split(" ")) {
  const [mode, lvl = "info"] = m.split(":");
  const cmd = mode === "hello" ? [BUN, join(ROOT, "bench/lib/hello-server.ts")] : [BUN, join(ROOT, "bench/lib/.tmp-variant.ts"), mode!, lvl];
  const s = await spawnServer(cmd, { env: { ...cleanEnv(), DB: process.env.DB ?? "" }, stderrFile: join(dir, `${mode}.log`) });
  const o = { url: s.url + "/v1/orgs/bench/repos/widgets", connections: 50, threads: 2, headers: { authorization: "Bearer svc_x" }, tmpDir: dir };
  await runLoad("wrk", { ...o, durationS: 2 });
  const r = await runLoad("wrk", { ...o, durationS: 8 });
  console.log(m.padEnd(26), r.rps, "req/s", "p50", r.p50_ms, "p99", r.p99_ms, "non2xx", r.non2xx);
  await s.stop();
}
