// Fuzzing the text parsers of issue 25 in `npm test`: the workflow parser, the branch glob matcher
// and the Markdown renderer, a bounded number of seeded cases each (FUZZ_CASES_SCALE scales them;
// bench/fuzz.ts runs many more). Invariants: no crash, no case over its time cap, the budgets and
// the sanitizer's allowlist hold, the glob agrees with its backtracking reference.
import { describe, expect, test } from "bun:test";
import { runTarget } from "./lib.ts";
import { textTargets } from "./text-targets.ts";

const SCALE = Number(process.env.FUZZ_CASES_SCALE ?? "1");
const SEED = Number(process.env.FUZZ_SEED ?? "20261125");
/** Cases per target in the test suite. */
export const TEXT_CASES: Record<string, number> = {
  "workflow parser": 400,
  "branch globs": 3000,
  "Markdown renderer": 400,
  "suggestion parser": 2000,
  "comment references": 400,
  "comment ranges": 2000,
  "issue references": 1000,
};
/** A case longer than this fails (the machine is shared; real cases take milliseconds). */
const CAP_MS = 5_000;

describe("fuzzing the text parsers (seeded)", () => {
  for (const target of textTargets()) {
    test(`${target.name}: ${Math.round(TEXT_CASES[target.name]! * SCALE)} cases, no crash, no hang`, async () => {
      const report = await runTarget(target, { seed: SEED, cases: Math.round(TEXT_CASES[target.name]! * SCALE), capMs: CAP_MS });
      expect(report.failures).toEqual([]);
    }, 240_000);
  }
});
