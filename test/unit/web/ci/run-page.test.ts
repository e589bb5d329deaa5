// The run page as drawn (src/http/web/ci/runs-page.ts) from a run in the API's shape: the job graph
// in columns by level, each job with what it needs, its `if`, its skip reason, its waiting sentence
// and the earlier attempt's job it reuses; the attempt switcher; everything escaped.
import { describe, expect, test } from "bun:test";
import { runPage } from "../../../../src/http/web/ci/runs-page.ts";
import type { Run } from "../../../../src/services/ci/schemas.ts";
import type { RepoBody } from "../../../../src/services/repos/repos.ts";

const repo = { org: "acme", name: "app", viewer_write: true, viewer_admin: false } as RepoBody;

function job(id: string, name: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    key: name,
    runs_on: ["self-hosted"],
    state: "success",
    verdict: null,
    error: null,
    waiting: null,
    runner: null,
    started_at: 1000,
    finished_at: 5000,
    steps: [],
    name,
    needs: [],
    condition: null,
    skip_reason: null,
    attempt: 2,
    reused_from: null,
    ...extra,
  };
}

const run = {
  id: "r1",
  repo: "app",
  workflow: ".svc/workflows/ci.yml",
  commit: "a".repeat(40),
  ref: "refs/heads/main",
  event: "push",
  state: "failure",
  error: null,
  created_at: 1000,
  finished_at: 9000,
  attempt: 2,
  attempts: [
    { attempt: 1, state: "failure", created_at: 1000, finished_at: 4000 },
    { attempt: 2, state: "failure", created_at: 5000, finished_at: 9000 },
  ],
  jobs: [
    job("j1", "build", { reused_from: "old1" }),
    job("j2", "test", { needs: ["build"], state: "failure" }),
    job("j3", "deploy", { needs: ["test"], state: "skipped", condition: "github.ref == 'refs/heads/main' && <x>", skip_reason: "needs test failed" }),
    job("j4", "cleanup", {
      needs: ["test"],
      condition: "always()",
      state: "queued",
      started_at: null,
      finished_at: null,
      waiting: "no runner here has <ubuntu-latest>",
    }),
  ],
} as unknown as Run & { attempts: unknown[] };

describe("the run page", () => {
  const text = runPage({ viewer: null, csrf: "tok" }, { repo }, run, 10_000).value;

  test("jobs in columns by level, the columns in order", () => {
    const stages = [...text.matchAll(/<ol class="stage" aria-label="Stage (\d) of 3">(.*?)<\/ol>/gs)].map((m) => [
      m[1],
      [...m[2]!.matchAll(/id="card-(\w+)"/g)].map((c) => c[1]),
    ]);
    expect(stages).toEqual([
      ["1", ["j1"]],
      ["2", ["j2"]],
      ["3", ["j3", "j4"]],
    ]);
  });

  test("each job says what it needs, its if, why it was skipped, why it waits, and the job it reuses; all escaped", () => {
    expect(text).toContain(`<p class="muted">needs build</p>`);
    expect(text).toContain(`<code class="data">if: github.ref == &#39;refs/heads/main&#39; &amp;&amp; &lt;x&gt;</code>`);
    expect(text).toContain(`<p class="skip">skipped: needs test failed</p>`);
    expect(text).toContain(`<p class="notice" role="status">no runner here has &lt;ubuntu-latest&gt;</p>`);
    expect(text).toContain(`<a href="/acme/app/runs/r1/jobs/old1">the earlier attempt's job</a>`);
    expect(text).not.toContain("<x>");
  });

  test("the attempt switcher links each attempt, the latest at the plain address, the shown one marked", () => {
    expect(text).toContain(`<a href="/acme/app/runs/r1?attempt=1">Attempt 1</a>`);
    expect(text).toContain(`<a href="/acme/app/runs/r1" aria-current="page">Attempt 2</a>`);
    const single = runPage({ viewer: null, csrf: "tok" }, { repo }, { ...run, attempts: [run.attempts[0]] } as unknown as Run, 10_000).value;
    expect(single).not.toContain(`aria-label="Attempts"`);
  });

  test("a run without needs is one column of its jobs in their order", () => {
    const flat = { ...run, jobs: run.jobs.map((j) => ({ ...j, needs: [] })) } as unknown as Run;
    const t = runPage({ viewer: null, csrf: "tok" }, { repo }, flat, 10_000).value;
    expect(t).toContain(`aria-label="Stage 1 of 1"`);
    expect([...t.matchAll(/id="card-(\w+)"/g)].map((m) => m[1])).toEqual(["j1", "j2", "j3", "j4"]);
    expect(t).not.toContain(`<p class="muted">needs`);
  });
});
