// The error a failed verdict records (job-calls.ts verdictError): the step that failed the job,
// not an earlier one whose failure `continue-on-error: true` let the job go past.
import { expect, test } from "bun:test";
import { verdictError } from "../../../src/services/ci/job-calls.ts";

const job = (steps: [string, string, number | null, unknown?][]) =>
  ({
    cancelReason: null,
    spec: { steps: steps.map(([name, , , coe]) => (coe === undefined ? { name, run: "x" } : { name, run: "x", continueOnError: coe })) },
    steps: steps.map(([name, state, exit_code]) => ({ name, state, exit_code })),
  }) as never;

test("a continue-on-error step's failure is not the job's error", () => {
  expect(
    verdictError(
      job([
        ["soft", "failure", 3, true],
        ["hard", "failure", 1],
      ]),
      "failure",
    ),
  ).toBe('step "hard" failed with exit code 1');
  expect(
    verdictError(
      job([
        ["soft", "failure", null, true],
        ["ok", "success", 0],
        ["hard", "failure", 2, false],
      ]),
      "failure",
    ),
  ).toBe('step "hard" failed with exit code 2');
});

test("the first failed step otherwise; the last one when each may have continued", () => {
  expect(
    verdictError(
      job([
        ["a", "failure", 1],
        ["b", "skipped", null],
      ]),
      "failure",
    ),
  ).toBe('step "a" failed with exit code 1');
  expect(
    verdictError(
      job([
        ["a", "failure", 1, true],
        ["b", "failure", 4, "${{ matrix.n == 2 }}"],
      ]),
      "failure",
    ),
  ).toBe('step "b" failed with exit code 4');
  expect(verdictError(job([["a", "success", 0]]), "failure")).toBe("the job failed");
  expect(verdictError(job([["a", "success", 0]]), "success")).toBeNull();
});
