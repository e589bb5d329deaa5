// Job-level continue-on-error (GitHub's semantics): planned per matrix cell as a boolean from
// plan-time contexts, and a failure under it counted as a success by its run and by what needs it
// while the job itself stays failed (release.ts conclusionOf).
import { expect, test } from "bun:test";
import { parseWorkflow } from "../../../src/services/ci/workflow.ts";
import { runStateOf } from "../../../src/services/ci/finish.ts";
import { aggregateResult, conclusionOf } from "../../../src/services/ci/release.ts";

const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const, vars: { LAX: "true" } };
const plan = (jobBody: string) =>
  parseWorkflow(".svc/workflows/ci.yml", `on: push\njobs:\n  t:\n    runs-on: self-hosted\n${jobBody}    steps:\n      - run: make\n`, trigger);

test("continue-on-error is decided per matrix cell at plan time: literals, matrix values, vars, comparisons", () => {
  const cells = plan("    strategy: { matrix: { experimental: [false, true] } }\n    continue-on-error: ${{ matrix.experimental }}\n");
  if (!cells.ok) throw new Error(cells.error);
  expect(cells.jobs.map((j) => [j.key, j.spec.continueOnError])).toEqual([
    ["t (experimental=false)", false],
    ["t (experimental=true)", true],
  ]);
  const literal = plan("    continue-on-error: true\n");
  expect(literal.ok && literal.jobs[0]!.spec.continueOnError).toBe(true);
  const fromVars = plan("    continue-on-error: ${{ vars.LAX }}\n");
  expect(fromVars.ok && fromVars.jobs[0]!.spec.continueOnError).toBe(true);
  const compared = plan("    strategy: { matrix: { os: [linux, mac] } }\n    continue-on-error: ${{ matrix.os == 'mac' }}\n");
  expect(compared.ok && compared.jobs.map((j) => j.spec.continueOnError)).toEqual([false, true]);
});

test("continue-on-error refuses what is not known at plan time, and what is not a boolean or an expression", () => {
  const steps = plan("    continue-on-error: ${{ steps.x.outcome == 'failure' }}\n");
  expect(!steps.ok && steps.error).toContain("steps");
  const needs = plan("    continue-on-error: ${{ needs.a.result == 'success' }}\n");
  expect(!needs.ok && needs.error).toContain("needs");
  const word = plan("    continue-on-error: sometimes\n");
  expect(!word.ok && word.error).toContain("must be true, false or an expression");
});

test("a failure under continue-on-error concludes as success for its run and its dependents; nothing else changes", () => {
  expect(conclusionOf({ state: "failure", continues: true })).toBe("success");
  expect(conclusionOf({ state: "failure", continues: false })).toBe("failure");
  expect(conclusionOf({ state: "cancelled", continues: true })).toBe("cancelled");
  expect(runStateOf([{ state: "failure", continues: true }, { state: "success" }].map(conclusionOf))).toBe("success");
  expect(runStateOf([{ state: "failure", continues: true }, { state: "failure" }].map(conclusionOf))).toBe("failure");
  expect(aggregateResult([{ state: "failure", continues: true }, { state: "success" }].map(conclusionOf))).toBe("success");
  expect(aggregateResult([{ state: "failure", continues: true }, { state: "failure" }].map(conclusionOf))).toBe("failure");
});
