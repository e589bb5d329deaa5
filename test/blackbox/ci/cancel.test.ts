// Cancel reaches every job of a run (issue 29 "cancel that reaches every job"; plan-29 §3 C
// "Cancel"), with the built server and a real agent: queued and pending jobs end at once, the
// running one is stopped at its next heartbeat, then cleanup jobs (`if: always()`,
// `if: cancelled()`) still run once their needs end; a second cancel ends those too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Api, type CiServer, finishedRun, jobsBy as byName, pushWorkflow, startCiServer, waitForRun, waitForRunById } from "./helpers.ts";

let ci: CiServer;
let api: Api;

beforeAll(async () => {
  ci = await startCiServer({ env: { SVC_RUNNER_CLAIM_WAIT_MS: "5000" }, repos: ["app"] });
  ({ api } = ci);
  await ci.machine({ name: "m1", labels: ["cancel"] });
}, 60_000);

afterAll(() => ci?.[Symbol.asyncDispose]());

const FOREVER = "while true; do sleep 0.2; done";

test("a cancel ends running, queued and pending jobs; cleanup jobs still run; a second cancel ends them", async () => {
  const wf = [
    "on: push",
    "jobs:",
    "  slow:",
    "    runs-on: [self-hosted, cancel]",
    `    steps: [ { run: "${FOREVER}" } ]`,
    "  nobody:",
    "    runs-on: [self-hosted, no-such-machine]",
    "    steps: [ { run: echo never } ]",
    "  after:",
    "    needs: slow",
    "    runs-on: [self-hosted, cancel]",
    "    steps: [ { run: echo never } ]",
    "  cleanup:",
    "    needs: slow",
    "    if: always()",
    "    runs-on: [self-hosted, cancel]",
    "    steps: [ { run: echo cleaned } ]",
    "  on-cancel:",
    "    needs: [slow, cleanup]",
    "    if: cancelled()",
    "    runs-on: [self-hosted, cancel]",
    `    steps: [ { run: "${FOREVER}" } ]`,
  ].join("\n");
  const sha = await pushWorkflow(api, "app", `${wf}\n`);
  const run = await waitForRun(api, "app", sha, "slow running", (r) => byName(r).slow.state === "running");
  expect(byName(run)).toMatchObject({ nobody: { state: "queued" }, after: { state: "pending" }, cleanup: { state: "pending" } });

  const cancel = await api.post(`/v1/orgs/acme/repos/app/runs/${run.id}/cancel`, {});
  expect(cancel.status).toBe(202);
  // At once: the queued and the pending job whose if cannot hold after a cancel; the cleanup jobs wait for their needs.
  expect(byName(cancel.body)).toMatchObject({
    slow: { state: "running" },
    nobody: { state: "cancelled", error: "cancelled" },
    after: { state: "cancelled", error: "cancelled" },
    cleanup: { state: "pending" },
    "on-cancel": { state: "pending" },
  });

  // slow is stopped at its next heartbeat; cleanup (always()) runs, then on-cancel (cancelled()) starts.
  const later = await waitForRunById(api, "app", run.id, "on-cancel running", (r) => byName(r)["on-cancel"].state === "running");
  expect(byName(later)).toMatchObject({ slow: { state: "cancelled" }, cleanup: { state: "success" } });

  // A second cancel ends everything.
  expect((await api.post(`/v1/orgs/acme/repos/app/runs/${run.id}/cancel`, {})).status).toBe(202);
  const done = await finishedRun(api, "app", sha);
  expect(done.state).toBe("cancelled");
  expect(Object.fromEntries(done.jobs.map((j: any) => [j.name, j.state]))).toEqual({
    slow: "cancelled",
    nobody: "cancelled",
    after: "cancelled",
    cleanup: "success",
    "on-cancel": "cancelled",
  });
  expect((await api.post(`/v1/orgs/acme/repos/app/runs/${run.id}/cancel`, {})).status).toBe(409);
});
