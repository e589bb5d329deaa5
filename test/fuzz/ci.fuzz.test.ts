// Fuzzing the CI parsers of issue 29 in `npm test` (the expression language; the workflow and
// cron parsers of the later parts join ciTargets), a bounded number of seeded cases each
// (FUZZ_CASES_SCALE scales them; bench/fuzz.ts runs many more). Invariants: test/fuzz/ci-targets.ts.
import { describe, expect, test } from "bun:test";
import { ciTargets } from "./ci-targets.ts";
import { runTarget } from "./lib.ts";

const SCALE = Number(process.env.FUZZ_CASES_SCALE ?? "1");
const SEED = Number(process.env.FUZZ_SEED ?? "20261127");
/** Cases per target in the test suite. */
export const CI_CASES: Record<string, number> = {
  "ci expressions": 3000,
  "log masking": 3000,
  cron: 3000,
  "runner file commands": 3000,
  "workflow corpus constructs": 400,
};
/** A case longer than this fails (the machine is shared; real cases take milliseconds). */
const CAP_MS = 5_000;

describe("fuzzing the CI parsers (seeded)", () => {
  for (const target of ciTargets()) {
    test(`${target.name}: ${Math.round(CI_CASES[target.name]! * SCALE)} cases, no crash, no hang`, async () => {
      const report = await runTarget(target, { seed: SEED, cases: Math.round(CI_CASES[target.name]! * SCALE), capMs: CAP_MS });
      expect(report.failures).toEqual([]);
    }, 240_000);
  }
});
