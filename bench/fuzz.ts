// The long fuzzing run (issue 11): the same seeded targets as `npm test` (test/fuzz/*), with many
// more cases, plus the fsck differential against C git. Prints a JSON summary (cases, duration,
// failures per target) and exits 1 when anything failed. Record the figures in bench/README.md.
//
//   bun bench/fuzz.ts [--scale 40] [--seed N] [--minutes M] [--only NAME] [--out FILE]
//
// --scale multiplies the test suite's case counts; --minutes, when given, repeats the whole round
// with the next seed until the time is up.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { engineTargets, openFixture } from "../test/fuzz/engine-targets.ts";
import { textTargets } from "../test/fuzz/text-targets.ts";
import { ciTargets } from "../test/fuzz/ci-targets.ts";
import { jsonRouteTarget } from "../test/fuzz/json-targets.ts";
import { openJsonWorld } from "../test/fuzz/json-world.ts";
import { runTarget, type FuzzReport } from "../test/fuzz/lib.ts";
import { FsckOracle } from "../test/unit/git/fsck-oracle.ts";
import { differential } from "../test/fuzz/fsck-differential.ts";

const { values } = parseArgs({
  options: {
    scale: { type: "string", default: "40" },
    seed: { type: "string", default: "20261124" },
    minutes: { type: "string" },
    only: { type: "string" },
    out: { type: "string" },
  },
});
const scale = Number(values.scale);
const until = values.minutes ? Date.now() + Number(values.minutes) * 60_000 : 0;

/** The test suite's counts (engine.fuzz.test.ts, text.fuzz.test.ts, ci.fuzz.test.ts, fuzz-json.test.ts, fsck.test.ts), before scaling. */
const BASE: Record<string, number> = {
  "pkt-line reader": 400,
  "upload-pack requests": 300,
  "receive-pack requests": 150,
  "pack, idx and indexer": 120,
  "delta application": 400,
  "object parsers and fsck": 600,
  "path validation and tree editing": 200,
  "ref-name validation": 2000,
  "fsck on generated objects": 600,
  "workflow parser": 400,
  "branch globs": 3000,
  "Markdown renderer": 400,
  "suggestion parser": 2000,
  "comment references": 400,
  "comment ranges": 2000,
  "ci expressions": 3000,
  "log masking": 3000,
  cron: 3000,
  "runner file commands": 3000,
  "JSON routes": 1500,
  "fsck differential against git": 1500,
};

const started = Date.now();
const reports: FuzzReport[] = [];
let seed = Number(values.seed);
const wanted = (name: string) => !values.only || name.includes(values.only);

do {
  const fixture = await openFixture();
  try {
    for (const target of engineTargets(fixture)) {
      if (!wanted(target.name)) continue;
      Bun.gc(true);
      const heapBefore = process.memoryUsage().heapUsed;
      const report = await runTarget(target, { seed, cases: Math.round(BASE[target.name]! * scale), capMs: 10_000, maxFailures: 20 });
      Bun.gc(true);
      reports.push({ ...report, heapGrowthMB: Math.round((process.memoryUsage().heapUsed - heapBefore) / 2 ** 20) } as FuzzReport);
      console.error(`${target.name}: ${report.cases} cases, ${report.ms} ms, ${report.failures.length} failures`);
    }
  } finally {
    await fixture.close();
  }
  for (const target of [...textTargets(), ...ciTargets()]) {
    if (!wanted(target.name)) continue;
    const report = await runTarget(target, { seed, cases: Math.round(BASE[target.name]! * scale), capMs: 10_000, maxFailures: 20 });
    reports.push(report);
    console.error(`${target.name}: ${report.cases} cases, ${report.ms} ms, ${report.failures.length} failures`);
  }
  if (wanted("JSON routes")) {
    const world = await openJsonWorld();
    try {
      const rssBefore = world.serverRss();
      const target = await jsonRouteTarget(world, { every: 100 });
      const report = await runTarget(target, { seed, cases: Math.round(BASE["JSON routes"]! * scale), capMs: 30_000, maxFailures: 20 });
      const errors = world.server
        .stderr()
        .split("\n")
        .filter((l) => /unhandled error/.test(l));
      reports.push({
        ...report,
        failures: [...report.failures, ...errors.map((e) => `server log: ${e.slice(0, 500)}`)],
        statuses: Object.fromEntries([...target.statuses].sort((a, b) => a[0] - b[0])),
        serverRssGrowthMB: Math.round((world.serverRss() - rssBefore) / 2 ** 20),
      } as FuzzReport);
      console.error(`JSON routes: ${report.cases} calls, ${report.ms} ms, ${report.failures.length + errors.length} failures`);
    } finally {
      await world.close();
    }
  }
  if (wanted("fsck differential")) {
    const dir = await mkdtemp(join(tmpdir(), "svc-fuzz-fsck-"));
    const t0 = performance.now();
    try {
      const cases = Math.round(BASE["fsck differential against git"]! * scale);
      const failures: string[] = [];
      // In rounds of 2,000 objects (one git fsck per round).
      for (let done = 0, round = 0; done < cases; done += 2000, round++) {
        const roundDir = join(dir, `r${round}`);
        await mkdir(roundDir);
        const o = FsckOracle.create(roundDir);
        failures.push(...differential(o, seed * 1000 + round, Math.min(2000, cases - done)));
      }
      reports.push({
        target: "fsck differential against git",
        seed,
        cases,
        ms: Math.round(performance.now() - t0),
        slowestMs: 0,
        failures: failures.slice(0, 20),
      });
      console.error(`fsck differential: ${cases} objects, ${failures.length} disagreements`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  seed++;
} while (until && Date.now() < until);

const summary = {
  when: new Date().toISOString(),
  command: `bun bench/fuzz.ts ${process.argv.slice(2).join(" ")}`.trim(),
  machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, platform: process.platform },
  durationS: Math.round((Date.now() - started) / 1000),
  totalCases: reports.reduce((n, r) => n + r.cases, 0),
  failures: reports.reduce((n, r) => n + r.failures.length, 0),
  reports,
};
const text = JSON.stringify(summary, null, 2);
if (values.out) await Bun.write(values.out, text);
console.log(text);
process.exit(summary.failures > 0 ? 1 : 0);
