// Benchmark: what the /metrics instrumentation adds per event, side by side in one run:
// observeHttp (one request's counter and histogram), a SQLite statement through drizzle's path
// (prepare + all) with and without the timing wrapper, and an object-store getRange with and
// without the timing proxy. Rounds alternate plain and instrumented; medians are reported.
//
//   bun bench/metrics-overhead.ts [--rounds 7]
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Database } from "bun:sqlite";
import { timeStatements } from "../src/db/database.ts";
import { instrumentStore } from "../src/services/ops/instrument.ts";
import { Telemetry } from "../src/services/telemetry/instrument.ts";
import { createFsStore } from "../src/storage/index.ts";
import { machine } from "./lib/machine.ts";

const { values: opt } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: "string", default: "7" } } });
const ROUNDS = Number(opt.rounds);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perCall = (n: number, fn: () => void) => {
  const t = performance.now();
  fn();
  return ((performance.now() - t) * 1e6) / n;
};
const perCallAsync = async (n: number, fn: () => Promise<void>) => {
  const t = performance.now();
  await fn();
  return ((performance.now() - t) * 1e6) / n;
};

const dir = mkdtempSync(join(tmpdir(), "svc-bench-metrics-"));
try {
  const plainDb = new Database(":memory:");
  const timedDb = new Database(":memory:");
  for (const db of [plainDb, timedDb]) {
    db.exec("CREATE TABLE t(x)");
    db.exec("INSERT INTO t VALUES (1)");
  }
  let sink = 0;
  timeStatements(timedDb, () => (s) => void (sink += s));
  const raw = createFsStore(join(dir, "store"));
  writeFileSync(join(dir, "blob"), new Uint8Array(1 << 20));
  await raw.putFile("bench/blob", join(dir, "blob"));
  const telemetry = new Telemetry();
  const timedStore = instrumentStore(telemetry.registry, raw);

  const r = {
    observe_http_ns: [] as number[],
    statement_plain_ns: [] as number[],
    statement_timed_ns: [] as number[],
    get_range_plain_ns: [] as number[],
    get_range_timed_ns: [] as number[],
  };
  for (let round = 0; round < ROUNDS; round++) {
    r.observe_http_ns.push(
      perCall(1_000_000, () => {
        for (let i = 0; i < 1_000_000; i++) telemetry.observeHttp("GET", "/v1/orgs/:org/repos/:repo", 200, 0.003);
      }),
    );
    const stmt = (db: Database) => () => {
      for (let i = 0; i < 100_000; i++) db.prepare("SELECT x FROM t").all();
    };
    r.statement_plain_ns.push(perCall(100_000, stmt(plainDb)));
    r.statement_timed_ns.push(perCall(100_000, stmt(timedDb)));
    const reads = (s: typeof raw) => async () => {
      for (let i = 0; i < 20_000; i++) await s.getRange("bench/blob", (i * 4096) % (1 << 20), 4096);
    };
    r.get_range_plain_ns.push(await perCallAsync(20_000, reads(raw)));
    r.get_range_timed_ns.push(await perCallAsync(20_000, reads(timedStore)));
  }
  const med = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(median(v))]));
  console.log(
    JSON.stringify(
      {
        machine: machine(),
        rounds: ROUNDS,
        median: med,
        statement_added_ns: med.statement_timed_ns! - med.statement_plain_ns!,
        get_range_added_ns: med.get_range_timed_ns! - med.get_range_plain_ns!,
        sink: sink > 0,
      },
      null,
      1,
    ),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
