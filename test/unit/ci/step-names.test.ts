// Step names as shown (step-names.ts planTimeText): plan-time expressions expanded, the runner's
// kept as written, a name that fails to evaluate kept whole.
import { expect, test } from "bun:test";
import { NAME_LIMITS, planTimeText, readsVars } from "../../../src/services/ci/step-names.ts";

const known = {
  github: { sha: "abc", ref: "refs/heads/main", ref_name: "main" },
  inputs: { level: "3" },
  matrix: { os: "linux", n: "2" },
  vars: { STAGE: "prod" },
};

test("plan-time expressions are expanded, the runner's kept as written", () => {
  expect(planTimeText("test on ${{ matrix.os }}", known)).toBe("test on linux");
  expect(planTimeText("${{ matrix.os }}-${{ inputs.level }}-${{ vars.STAGE }}-${{ github.ref_name }}", known)).toBe("linux-3-prod-main");
  expect(planTimeText("${{ format('{0} x{1}', matrix.os, matrix.n) }}", known)).toBe("linux x2");
  expect(planTimeText("v ${{ steps.a.outputs.v }} on ${{matrix.os}}", known)).toBe("v ${{ steps.a.outputs.v }} on linux");
  expect(planTimeText("${{ env.X }} ${{ secrets.T }} ${{ job.status }} ${{ runner.os }}", known)).toBe(
    "${{ env.X }} ${{ secrets.T }} ${{ job.status }} ${{ runner.os }}",
  );
  // github: only the fields it has, never the whole object or an index.
  expect(planTimeText("${{ github.run_id }} ${{ github['sha'] }} ${{ toJSON(github) }} ${{ github.sha }}", known)).toBe(
    "${{ github.run_id }} ${{ github['sha'] }} ${{ toJSON(github) }} abc",
  );
  // vars not read: kept.
  expect(planTimeText("to ${{ vars.STAGE }}", { ...known, vars: undefined })).toBe("to ${{ vars.STAGE }}");
  expect(planTimeText("plain name", known)).toBe("plain name");
});

test("a name whose known parts fail to evaluate, or that does not parse, keeps its text", () => {
  expect(planTimeText("bad ${{ fromJSON(github.ref_name) }} on ${{ matrix.os }}", known)).toBe("bad ${{ fromJSON(github.ref_name) }} on ${{ matrix.os }}");
  expect(planTimeText("open ${{ matrix.os", known)).toBe("open ${{ matrix.os");
  expect(planTimeText("${{ success() }}", known)).toBe("${{ success() }}");
});

test("one prepared map serves every matrix cell of a run", () => {
  const prepared = new Map();
  expect(planTimeText("on ${{ matrix.os }}", { ...known, matrix: { os: "linux" } }, prepared)).toBe("on linux");
  expect(planTimeText("on ${{ matrix.os }}", { ...known, matrix: { os: "mac" } }, prepared)).toBe("on mac");
  expect(planTimeText("open ${{ matrix.os", known, prepared)).toBe("open ${{ matrix.os");
  expect(prepared.size).toBe(2);
});

test("readsVars: only names with an expression that mentions vars", () => {
  expect(readsVars(["a ${{ vars.X }}"])).toBe(true);
  expect(readsVars(["vars are nice", "${{ matrix.os }}"])).toBe(false);
});

test("plan-time expansion is bounded far below EXPR_LIMITS: a heavy expression keeps its text, a long name is cut", () => {
  // Why: createRun expands up to 256 cells x 100 steps on the event loop, for a fork's workflow too.
  const list = Array.from({ length: NAME_LIMITS.steps * 2 }, (_, i) => String(i));
  const heavy = "${{ join(matrix.list, '-') }}";
  expect(planTimeText(heavy, { ...known, matrix: { list } })).toBe(heavy);
  const long = "${{ matrix.s }}".repeat(100);
  const out = planTimeText(long, { ...known, matrix: { s: "x".repeat(1000) } });
  expect(out.length).toBe(NAME_LIMITS.resultChars);
  expect(out).toBe("x".repeat(NAME_LIMITS.resultChars));
});
