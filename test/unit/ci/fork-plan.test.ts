// A fork's planned workflow (trigger.ts fromFork): its jobs fetch from the fork and its
// concurrency groups are confined to the fork's runs, so a group named like the target's
// (`deploy` with cancel-in-progress) cannot cancel or hold the target's own runs.
import { describe, expect, test } from "bun:test";
import { fromFork } from "../../../src/services/ci/trigger.ts";
import { parseWorkflow } from "../../../src/services/ci/workflow.ts";

const text = `on: change
concurrency: { group: deploy, cancel-in-progress: true }
jobs:
  build:
    runs-on: [self-hosted]
    concurrency: build-\${{ github.ref }}
    steps: [{ run: make }]
  ship:
    needs: build
    runs-on: [self-hosted]
    concurrency: ship-\${{ needs.build.result }}
    steps: [{ run: make ship }]
  plain:
    runs-on: [self-hosted]
    steps: [{ run: true }]
`;

describe("fromFork", () => {
  test("every group, the run's and each job's (a template too), is prefixed with the fork; each job fetches from it", () => {
    const out = parseWorkflow(".svc/workflows/ci.yml", text, { sha: "a".repeat(40), ref: "refs/heads/topic", repository: "acme/widgets", event: "change" });
    if (!out.ok) throw new Error(out.error);
    const w = fromFork({ path: ".svc/workflows/ci.yml", jobs: out.jobs, run: out.run }, "fork123");
    if (!("jobs" in w)) throw new Error("expected jobs");
    expect(w.run?.concurrency?.group).toBe("fork:fork123/deploy");
    expect(w.run?.concurrency?.cancelInProgress).toBe(true);
    const byId = new Map(w.jobs.map((j) => [j.workflowJob ?? j.key, j]));
    expect(byId.get("build")?.concurrency?.group).toBe("fork:fork123/build-refs/heads/topic");
    expect(byId.get("ship")?.concurrency?.group).toBe("fork:fork123/ship-${{ needs.build.result }}");
    expect(byId.get("ship")?.concurrency?.dynamic).toBe(true);
    expect(byId.get("plain")?.concurrency).toBeUndefined();
    for (const j of w.jobs) expect(j.spec.checkoutRepoId).toBe("fork123");
  });

  test("a malformed workflow passes through", () => {
    const bad = { path: ".svc/workflows/x.yml", error: "x.yml:1:1: bad" };
    expect(fromFork(bad, "fork123")).toBe(bad);
  });
});
