// Issue 29, compatibility: a change run's github context as GitHub names it — event_name as `on:`
// spells it, the workflow's name, head_ref/base_ref and github.event.pull_request — fixed at plan
// time (the parse), carried in each job's spec, and laid over the run row's by every reader.
import { describe, expect, test } from "bun:test";
import { plannedGithub, plannedStrings, withPlannedGithub, type PullRequestFacts } from "../../../src/services/ci/github-context.ts";
import { parseWorkflow } from "../../../src/services/ci/workflow.ts";

const change: PullRequestFacts = {
  number: 7,
  title: "Fix it",
  head: { ref: "feature", sha: "b".repeat(40), repo: { full_name: "someone/api", fork: true } },
  base: { ref: "main", sha: "c".repeat(40), repo: { full_name: "acme/api" } },
};
const changeRun = { sha: "b".repeat(40), ref: "refs/heads/feature", repository: "acme/api", event: "change" as const, change };
const pushRun = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };

function ok(text: string, t: Parameters<typeof parseWorkflow>[2]) {
  const r = parseWorkflow(".svc/workflows/ci.yml", text, t);
  if (!r.ok) throw new Error(r.error);
  return r;
}

// Plan-time values read the same github a job's description gives: run-name, job names, concurrency.
const FILE = (on: string, name = "name: Checks\n") => `${name}run-name: "\${{ github.event_name }} \${{ github.workflow }} #\${{ github.event.number }}"
on: ${on}
concurrency: { group: "\${{ github.workflow }}-\${{ github.head_ref || github.ref }}-\${{ github.event.pull_request.head.repo.fork }}" }
jobs:
  test:
    name: "t \${{ github.base_ref }} \${{ github.event_name == 'pull_request' }}"
    runs-on: x
    steps: [ { run: y } ]
`;

describe("the github context of a change run", () => {
  test("on: pull_request: event_name pull_request, the workflow's name, head/base, the pull request; in the spec and at plan time", () => {
    const w = ok(FILE("pull_request"), changeRun);
    expect(w.run.runName).toBe("pull_request Checks #7");
    expect(w.run.concurrency?.group).toBe("Checks-feature-true");
    expect(w.jobs[0]!.key).toBe("t main true");
    expect(w.jobs[0]!.spec.github).toEqual({
      workflow: "Checks",
      event_name: "pull_request",
      head_ref: "feature",
      base_ref: "main",
      event: { number: 7, pull_request: change },
    });
  });

  test("on: change keeps change; a file without a name is its path; a push run has empty head_ref and no pull request", () => {
    const w = ok(FILE("change", ""), changeRun);
    expect(w.run.runName).toBe("change .svc/workflows/ci.yml #7");
    expect(w.jobs[0]!.key).toBe("t main false");
    expect(w.jobs[0]!.spec.github).toEqual({ head_ref: "feature", base_ref: "main", event: { number: 7, pull_request: change } });
    const p = ok(FILE("[push, pull_request]"), pushRun);
    expect(p.run.runName).toBe("push Checks #");
    expect(p.run.concurrency?.group).toBe("Checks-refs/heads/main-");
    expect(p.jobs[0]!.spec.github).toEqual({ workflow: "Checks" });
    // Both keys: the later one is the one that counts (its filter too).
    expect(ok(FILE("{ change: {}, pull_request: {} }"), changeRun).jobs[0]!.spec.github?.event_name).toBe("pull_request");
    expect(ok(FILE("{ pull_request: {}, change: {} }"), changeRun).jobs[0]!.spec.github?.event_name).toBeUndefined();
  });

  test("a v1 job (strings expanded when planned) reads event_name as on: spells it too", () => {
    const text = "on: pull_request\njobs:\n  a:\n    runs-on: x\n    steps: [ { run: 'echo ${{ github.event_name }}' } ]\n";
    const w = ok(text, changeRun);
    expect(w.jobs[0]!.spec.v).toBeUndefined();
    expect(w.jobs[0]!.spec.steps[0]!.run).toBe("echo pull_request");
    expect(ok(text, pushRun).jobs[0]!.spec.steps[0]!.run).toBe("echo push");
    expect(ok(text.replace("pull_request", "change"), changeRun).jobs[0]!.spec.steps[0]!.run).toBe("echo change");
  });

  test("laid over the run row's fields: event merged, head_ref/base_ref empty without a change", () => {
    const row = { event_name: "change", workflow: ".svc/workflows/ci.yml", event: { ref: "refs/heads/feature", after: "b".repeat(40) } };
    const planned = plannedGithub("Checks", "change", "pull_request", change);
    expect(withPlannedGithub(row, planned) as Record<string, unknown>).toEqual({
      event_name: "pull_request",
      workflow: "Checks",
      head_ref: "feature",
      base_ref: "main",
      event: { ref: "refs/heads/feature", after: "b".repeat(40), number: 7, pull_request: change },
    });
    expect(withPlannedGithub(row, undefined)).toEqual({ ...row, head_ref: "", base_ref: "" });
    expect(plannedGithub(null, "push", undefined, null)).toBeNull();
    expect(plannedStrings(planned)).toEqual({ head_ref: "feature", base_ref: "main", event_name: "pull_request", workflow: "Checks" });
    expect(plannedStrings(undefined)).toEqual({ head_ref: "", base_ref: "" });
  });
});
