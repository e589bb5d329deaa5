// Why a queued job is not taken, when svc can tell (issue 24): a workflow written for GitHub names
// GitHub's hosted runner labels (`runs-on: ubuntu-latest`), which no machine here answers to unless
// someone registered one with that label. Such a job would wait its whole day in silence; the run
// shows this sentence instead, saying how to run it here.
import type { Queryable } from "../../db/database.ts";
import * as store from "./store.ts";
import type { JobRow } from "./store-runs.ts";

/** GitHub's hosted runner labels: `ubuntu-latest`, `ubuntu-24.04-arm`, `windows-2022`, `macos-14-xlarge`, … */
const GITHUB_HOSTED = /^(ubuntu|windows|macos)-(latest|[0-9][0-9.]*)(-(arm|arm64|large|xlarge|intel))?$/;

/** Whether `label` is one of GitHub's hosted runner labels. */
export function isGithubHostedLabel(label: string): boolean {
  return GITHUB_HOSTED.test(label.toLowerCase());
}

/**
 * The message for a queued job whose runs-on names GitHub-hosted labels that no live machine it
 * could go to carries (instance runners for a hosted job, the org's for a self-hosted one), else null.
 */
export function waitingMessage(job: Pick<JobRow, "runsOn" | "hosted">, machines: string[][]): string | null {
  const github = job.runsOn.filter(isGithubHostedLabel);
  if (!github.length) return null;
  const want = job.runsOn.map((l) => l.toLowerCase());
  if (machines.some((labels) => want.every((l) => labels.some((m) => m.toLowerCase() === l)))) return null;
  const names = github.join(", ");
  const register = job.hosted
    ? `an instance runner (svc runner-token --hosted, then svc runner register … --labels ${github.join(",")})`
    : `a runner of the organization (svc runner register … --labels ${github.join(",")})`;
  return `no runner here has the label${github.length > 1 ? "s" : ""} ${names}: ${github.length > 1 ? "they are" : "it is"} GitHub's hosted runner label${github.length > 1 ? "s" : ""}, which this server does not provide. To run the job here, register ${register}, or change runs-on to self-hosted (with your runners' labels)`;
}

/**
 * The message for a queued hosted job (its runs-on names no `self-hosted`, so only instance
 * runners may take it) that no live instance runner could take, while a runner of its own
 * organization carries every label it names: the usual slip of writing `runs-on: linux` for
 * one's own machine. Null otherwise.
 */
export function selfHostedHint(job: Pick<JobRow, "runsOn" | "hosted">, instance: string[][], org: string[][]): string | null {
  if (!job.hosted || !job.runsOn.length) return null;
  const want = job.runsOn.map((l) => l.toLowerCase());
  const carries = (labels: string[]) => want.every((l) => labels.some((m) => m.toLowerCase() === l));
  if (instance.some(carries) || !org.some(carries)) return null;
  const list = job.runsOn.join(", ");
  return `runs-on names no self-hosted label, so this job waits for an instance runner, and none has ${list}; your organization's runners do: write runs-on: [self-hosted, ${list}] to run it on them`;
}

/** The waiting messages of `jobs` by job id (only queued ones can have one). */
export async function waitingMessages(q: Queryable, jobs: Pick<JobRow, "id" | "state" | "runsOn" | "hosted" | "orgId">[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const pools = new Map<string, string[][]>();
  const pool = async (orgId: string | null) => {
    const key = orgId ?? "*hosted";
    let machines = pools.get(key);
    if (!machines) pools.set(key, (machines = await store.liveRunnerLabels(q, orgId)));
    return machines;
  };
  for (const job of jobs) {
    if (job.state !== "queued") continue;
    if (job.runsOn.some(isGithubHostedLabel)) {
      const message = waitingMessage(job, await pool(job.hosted ? null : job.orgId));
      if (message) out.set(job.id, message);
    } else if (job.hosted) {
      const message = selfHostedHint(job, await pool(null), await pool(job.orgId));
      if (message) out.set(job.id, message);
    }
  }
  return out;
}
