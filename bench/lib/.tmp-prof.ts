// temp: profile svc under wrk load
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { BUN, ROOT, cleanEnv, spawnServer } from "./proc.ts";
import { bootstrap } from "./svc.ts";
import { runLoad } from "./load.ts";
const dir = mkdtempSync(join(tmpdir(), "prof-"));
const extra = (process.env.PROF_ARGS ?? "").split(" ").filter(Boolean);
const env = { SVC_DATA_DIR: join(dir, "data"), SVC_HTTP_ADDR: "127.0.0.1:0", SVC_LOG: process.env.PROF_LOG ?? "info" };
const s = await spawnServer([BUN, ...extra, join(ROOT, "src/main.ts"), "serve"], { env: { ...cleanEnv(), ...env }, stderrFile: join(dir, "stderr.log") });
const fx = await bootstrap({ ...s, dataDir: env.SVC_DATA_DIR, env }, { org: "bench", repo: "widgets" });
const r = await runLoad("wrk", { url: s.url + fx.path, connections: 50, threads: 2, durationS: Number(process.env.PROF_D ?? 8), headers: { authorization: `Bearer ${fx.token}` }, tmpDir: dir });
console.log(JSON.stringify(r));
console.log(await s.stop());
