// Fuzzing the JSON routes of the running server in `npm test` (bench/fuzz.ts runs many more):
// random routes, parameters, shapes, depths, sizes, encodings and callers. Never a 500, always an
// answer within the cap, bounded server memory, and the repository whole (fetched into a mirror
// with fetch.fsckObjects and checked with git fsck --strict) every 50 calls and at the end.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { jsonRouteTarget } from "../../fuzz/json-targets.ts";
import { openJsonWorld } from "../../fuzz/json-world.ts";
import { runTarget } from "../../fuzz/lib.ts";

const CASES = Math.round(1500 * Number(process.env.FUZZ_CASES_SCALE ?? "1"));
const SEED = Number(process.env.FUZZ_SEED ?? "20261124");
/** Growth of the server's resident memory the run may cause. */
const RSS_GROWTH_LIMIT = 768 * 1024 * 1024;

let world: Awaited<ReturnType<typeof openJsonWorld>>;
beforeAll(async () => {
  world = await openJsonWorld();
}, 120_000);
afterAll(async () => {
  await world?.close();
});

test(`${CASES} calls to the JSON routes: no 500, no hang, bounded memory, the repository whole`, async () => {
  const rssBefore = world.serverRss();
  const target = await jsonRouteTarget(world);
  const report = await runTarget(target, { seed: SEED, cases: CASES, capMs: 30_000 });
  expect(report.failures).toEqual([]);
  console.log(
    `fuzz-json: ${report.cases} calls in ${report.ms} ms, slowest ${report.slowestMs} ms, statuses ${JSON.stringify(Object.fromEntries([...target.statuses].sort((a, b) => a[0] - b[0])))}`,
  );
  expect(world.serverRss() - rssBefore).toBeLessThan(RSS_GROWTH_LIMIT);
  expect(world.server.stderr()).not.toMatch(/unhandled error|Maximum call stack/);
  expect(world.server.proc.exitCode).toBeNull();
  // The calls reached past the front door: successes and refusals of many kinds.
  expect([...target.statuses.keys()].filter((s) => s < 300).length).toBeGreaterThan(0);
  expect([...target.statuses.keys()].filter((s) => s >= 400).length).toBeGreaterThan(3);
}, 600_000);
