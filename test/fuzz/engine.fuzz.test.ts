// Fuzzing the git engine in `npm test`: every target of engine-targets.ts for a bounded number of
// seeded cases (FUZZ_CASES scales them; bench/fuzz.ts runs many more). Invariants: no crash (only
// clean refusals), no case over its time cap, the receive-pack repository fully connected after
// every case, and the heap back near where it started.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineTargets, openFixture, type Fixture } from "./engine-targets.ts";
import { runTarget } from "./lib.ts";

const SCALE = Number(process.env.FUZZ_CASES_SCALE ?? "1");
const SEED = Number(process.env.FUZZ_SEED ?? "20261124");
/** Cases per target in the test suite (about a minute in all on a busy 2-core machine). */
const CASES: Record<string, number> = {
  "pkt-line reader": 400,
  "upload-pack requests": 300,
  "receive-pack requests": 150,
  "pack, idx and indexer": 120,
  "delta application": 400,
  "object parsers and fsck": 600,
  "path validation and tree editing": 200,
  "ref-name validation": 2000,
  "fsck on generated objects": 600,
};
/** A case longer than this fails (the machine is shared; real cases take milliseconds). */
const CAP_MS = 10_000;
/** Heap growth a target may leave behind. */
const HEAP_GROWTH_LIMIT = 256 * 1024 * 1024;

let fixture: Fixture;
beforeAll(async () => {
  fixture = await openFixture();
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

describe("fuzzing the git engine (seeded)", () => {
  for (const name of Object.keys(CASES)) {
    test(`${name}: ${Math.round(CASES[name]! * SCALE)} cases, no crash, no hang, bounded memory`, async () => {
      const target = engineTargets(fixture).find((t) => t.name === name)!;
      Bun.gc(true);
      const before = process.memoryUsage().heapUsed;
      const report = await runTarget(target, { seed: SEED, cases: Math.round(CASES[name]! * SCALE), capMs: CAP_MS });
      Bun.gc(true);
      const grown = process.memoryUsage().heapUsed - before;
      expect(report.failures).toEqual([]);
      expect(grown).toBeLessThan(HEAP_GROWTH_LIMIT);
    }, 240_000);
  }
});
