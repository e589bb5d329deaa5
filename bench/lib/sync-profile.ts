// Where a mirror's initial sync spends its time, server side: svc (`bun src/main.ts serve`, run
// under `bun --cpu-prof-md` with --prof) creates a mirror of the bench origin that
// bench/mirrors.ts builds (bench/work/mirrors/served/git.git, run that first), served by C git's
// http-backend; prints the wall time, the server's CPU seconds and the sync's own phases
// (`mirror synced … phases_ms`). The profile lands in --out-dir.
//
//   bun bench/lib/sync-profile.ts [--prof] [--out-dir /tmp/sync-profile]
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BUN, ROOT, spawnServer } from "./proc.ts";
import { bootstrap, startSvc } from "./svc.ts";

const { values: args } = parseArgs({ options: { prof: { type: "boolean", default: false }, "out-dir": { type: "string", default: "/tmp/sync-profile" } } });
const WORK = join(ROOT, "bench/work/mirrors");
const SERVED = join(WORK, "served");
const RUN = join(WORK, "profile-run");
rmSync(RUN, { recursive: true, force: true });
mkdirSync(RUN, { recursive: true });
mkdirSync(args["out-dir"]!, { recursive: true });

const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
};
const backend = await spawnServer([BUN, join(ROOT, "bench/lib/http-backend-server.ts"), SERVED], {
  env: process.env as Record<string, string>,
  stderrFile: join(RUN, "origin.log"),
});
const svc = await startSvc(
  join(RUN, "svc"),
  { SVC_LOG: "info", SVC_MIRROR_ALLOW_PRIVATE: "1" },
  args.prof ? ["--cpu-prof-md", `--cpu-prof-dir=${args["out-dir"]}`] : [],
);
try {
  const fx = await bootstrap(svc, { org: "bench", repo: "unused" });
  const headers = { authorization: `Bearer ${fx.token}`, "content-type": "application/json" };
  const want = Bun.spawnSync(["git", "rev-parse", "refs/heads/main"], { cwd: join(SERVED, "git.git") })
    .stdout.toString()
    .trim();
  const c0 = cpuOf(svc.pid);
  const t0 = performance.now();
  const created = await fetch(`${svc.url}/v1/orgs/bench/repos`, {
    method: "POST",
    headers,
    body: JSON.stringify({ name: "m", kind: "mirror", origin_url: `${backend.url}/git.git` }),
  });
  if (created.status !== 201) throw new Error(await created.text());
  for (;;) {
    const r = (await (await fetch(`${svc.url}/v1/orgs/bench/repos/m`, { headers })).json()) as { last_synced_commit: string | null; sync_error: string | null };
    if (r.sync_error) throw new Error(r.sync_error);
    if (r.last_synced_commit === want) break;
    await Bun.sleep(50);
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuOf(svc.pid) - c0;
  // The sync logs its phases just after the commit the poll saw.
  let phases: string | undefined;
  for (let k = 0; k < 100 && !phases; k++) {
    phases = readFileSync(join(RUN, "svc", "stderr.log"), "utf8")
      .split("\n")
      .find((l) => l.includes("mirror synced"));
    if (!phases) await Bun.sleep(20);
  }
  process.stdout.write(
    `${JSON.stringify({ wall_s: Math.round(wall * 1000) / 1000, svc_cpu_s: Math.round(cpu * 100) / 100, load: readFileSync("/proc/loadavg", "utf8").trim(), synced: phases ? JSON.parse(phases) : null })}\n`,
  );
} finally {
  await svc.stop();
  await backend.stop();
}
