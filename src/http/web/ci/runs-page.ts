// CI pages: a repository's runs and one run with its jobs and steps.
import type { Run } from "../../../services/ci/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import { FINISHED_STATES, type DispatchChoices, type RunJob } from "../../../services/web/ci.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { buttonForm, csrfInput, timeOf } from "../kit/widgets.ts";
import { dispatchBox, type DispatchRefusal } from "./dispatch-form.ts";
import { jobColumns } from "./graph.ts";
import { artifactsSection } from "./artifacts-list.ts";
import type { ArtifactShown } from "../../../services/ci/artifacts.ts";
import type { RepoChrome } from "../../../services/web/views.ts";
import type { Frame } from "../kit/layout.ts";
import { repoTop } from "../repos/repo-layout.ts";

/** `/{org}/{repo}/runs` */
export function runsHref(repo: Pick<RepoBody, "org" | "name">): string {
  return `/${seg(repo.org)}/${seg(repo.name)}/runs`;
}

/** `/{org}/{repo}/runs/{id}` */
export function runHref(repo: Pick<RepoBody, "org" | "name">, runId: string): string {
  return `${runsHref(repo)}/${seg(runId)}`;
}

/** A span of time for people: `42s`, `3m 05s`, `1h 02m`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
}

/** How long something took, or has been going (measured against `now`); empty before it started. */
export function took(start: number | null, end: number | null, now: number): string {
  if (start === null) return "";
  return end === null ? `${duration(now - start)} so far` : duration(end - start);
}

/** A state as a coloured word (the colour repeats the word, never replaces it). */
export function stateBadge(state: string, id?: string): Html {
  return html`<span class="state state-${state}"${id ? html` id="${id}"` : ""}>${state}</span>`;
}

/** The top of the CI pages: the repository layout on its Runs tab, then the page's title (under a way back to the runs on a run's or job's page). */
export function ciHeader(frame: Frame, chrome: RepoChrome, title: Html | string, crumb = true): Html {
  return html`${repoTop(frame, chrome, "runs")}${crumb ? html`<p class="crumbs"><a href="${runsHref(chrome.repo)}">Runs</a></p>` : ""}<h2 class="ci-title">${title}</h2>`;
}

/** A run's commit, linked to the repository's tree; a fork change's commit is the fork's (not readable here until it lands), so it is not linked. */
function commitOf(repo: RepoBody, run: Pick<Run, "commit" | "trusted">, text: string): Html {
  return run.trusted ? html`<a class="sha" href="/${seg(repo.org)}/${seg(repo.name)}/tree/${run.commit}">${text}</a>` : html`<span class="sha">${text}</span>`;
}

function refName(ref: string): string {
  return ref.replace(/^refs\/(heads|tags)\//, "");
}

function workflowName(path: string): string {
  return path.split("/").pop() ?? path;
}

/** The runs, newest first, with a link to the next page, and the "Run workflow" forms for writers. */
export function runsPage(
  frame: Frame,
  chrome: RepoChrome,
  runs: Run[],
  next: string | null,
  now: number,
  o: { dispatch?: DispatchChoices | null; csrf?: string | null; refused?: DispatchRefusal | null } = {},
): Html {
  const repo = chrome.repo;
  const rows = runs.map(
    (
      r,
    ) => html`<tr><td>${stateBadge(r.state)}</td><td><a href="${runHref(repo, r.id)}">${workflowName(r.workflow)}</a></td><td>${commitOf(repo, r, r.commit.slice(0, 10))}</td>
<td>${refName(r.ref)}</td><td>${r.event}${r.trusted ? "" : html` <span class="muted">from a fork</span>`}${r.attempt > 1 ? html` <span class="muted">attempt ${r.attempt}</span>` : ""}</td><td>${timeOf(r.created_at)}</td><td>${took(r.created_at, r.finished_at, now)}</td></tr>`,
  );
  const base = `/${seg(repo.org)}/${seg(repo.name)}/settings`;
  const settings = repo.viewer_write
    ? html`<p class="muted">${repo.viewer_admin ? html`<a href="${base}/secrets">Secrets</a> · ` : ""}<a href="${base}/variables">Variables</a> for workflows</p>`
    : "";
  return html`${ciHeader(frame, chrome, "Runs", false)}<div class="ul">${settings}
${o.refused && !o.dispatch?.workflows.some((w) => w.path === o.refused!.workflow) ? html`<p class="error notice" role="alert">${o.refused.error}</p>` : ""}${
  o.dispatch ? dispatchBox(repo, o.dispatch.workflows, o.dispatch.branches, o.csrf ?? null, o.refused ?? null, o.dispatch.unreadable) : ""
}
<section class="box" aria-label="Runs">${
    rows.length
      ? html`<div class="scroll"><table class="grid"><thead><tr><th scope="col">State</th><th scope="col">Workflow</th><th scope="col">Commit</th><th scope="col">Ref</th><th scope="col">Event</th><th scope="col">Started</th><th scope="col">Duration</th></tr></thead><tbody>${rows}</tbody></table></div>`
      : html`<p class="pad muted">No runs yet. Workflows in <code>.svc/workflows/*.yml</code> run on every push.</p>`
  }</section>
${next ? html`<nav class="pager" aria-label="More"><a href="${runsHref(repo)}?cursor=${seg(next)}">Older runs</a></nav>` : ""}</div>`;
}

/** A job's steps in order with their states (`data-step` lets the live view update them). */
export function stepList(job: RunJob): Html {
  return html`<ol class="steps">${job.steps.map((s, i) => html`<li data-step="${i}">${s.name || `step ${i + 1}`} ${stateBadge(s.state)}${s.exit_code !== null && s.exit_code !== 0 ? html` <span class="muted">exit ${s.exit_code}</span>` : ""}</li>`)}</ol>`;
}

/** `?attempt=N` of a run's page (the latest attempt has the plain address). */
function attemptHref(repo: RepoBody, run: Run, attempt: number): string {
  const latest = run.attempts.at(-1)?.attempt ?? run.attempt;
  return attempt === latest ? runHref(repo, run.id) : `${runHref(repo, run.id)}?attempt=${attempt}`;
}

/** One job in the graph: its state, what it needs, its `if`, why it was skipped or waits, and the job it reuses. */
function jobCard(repo: RepoBody, run: Run, j: RunJob, now: number): Html {
  const href = `${runHref(repo, run.id)}/jobs/${seg(j.id)}`;
  return html`<li class="job-card" id="card-${j.id}"><div><a href="${href}">${j.key}</a> ${stateBadge(j.state)} <span class="muted">${took(j.started_at, j.finished_at, now)}</span></div>
${j.needs.length ? html`<p class="muted">needs ${j.needs.join(", ")}</p>` : ""}${j.condition ? html`<p><code class="data">if: ${j.condition}</code></p>` : ""}${
  j.skip_reason ? html`<p class="skip">skipped: ${j.skip_reason}</p>` : ""
}${j.waiting ? html`<p class="notice" role="status">${j.waiting}</p>` : ""}${
  j.reused_from ? html`<p class="muted">not run again: <a href="${runHref(repo, run.id)}/jobs/${seg(j.reused_from)}">the earlier attempt's job</a></p>` : ""
}</li>`;
}

/** The jobs as columns by topological level (CSS grid, no script). */
function jobGraph(repo: RepoBody, run: Run, jobs: RunJob[], now: number): Html {
  const { columns } = jobColumns(jobs);
  return html`<div class="graph">${columns.map(
    (col, i) => html`<ol class="stage" aria-label="Stage ${i + 1} of ${columns.length}">${col.map((j) => jobCard(repo, run, j, now))}</ol>`,
  )}</div>`;
}

/** Links to each attempt of a re-run run, the one shown marked. */
function attemptSwitcher(repo: RepoBody, run: Run): Html {
  if (run.attempts.length < 2) return html``;
  const shown = run.attempt;
  return html`<nav class="attempts" aria-label="Attempts">${run.attempts.map(
    (a) =>
      html`<a href="${attemptHref(repo, run, a.attempt)}"${a.attempt === shown ? html` aria-current="page"` : ""}>Attempt ${a.attempt}</a> ${stateBadge(a.state)}`,
  )}</nav>`;
}

/** A form of one button posting `failed_only` to the run's re-run route. */
function rerunForm(repo: RepoBody, run: Run, csrf: string | null, failedOnly: boolean): Html {
  return html`<form class="inline" method="post" action="${runHref(repo, run.id)}/rerun">${csrfInput(csrf)}<input type="hidden" name="failed_only" value="${failedOnly ? "1" : "0"}"><button type="submit">${failedOnly ? "Re-run failed jobs" : "Re-run all jobs"}</button></form>`;
}

/** "Re-run all jobs" / "Re-run failed jobs": writers, on the latest attempt of a finished run that started (what the re-run service accepts). */
function rerunForms(repo: RepoBody, run: Run, csrf: string | null): Html {
  const latest = run.attempts.at(-1)?.attempt ?? run.attempt;
  if (!repo.viewer_write || !FINISHED_STATES.includes(run.state) || run.attempt !== latest || run.error !== null || !run.jobs.length) return html``;
  const failed = run.jobs.some((j) => j.state === "failure" || j.state === "cancelled");
  return html`<div class="actions">${rerunForm(repo, run, csrf, false)}${failed ? rerunForm(repo, run, csrf, true) : ""}</div>`;
}

/** One run: what it ran on, its job graph, its jobs with their steps, and cancelling (for writers, while it runs). */
export function runPage(frame: Frame, chrome: RepoChrome, run: Run, now: number, error?: string, artifacts: readonly ArtifactShown[] = []): Html {
  const repo = chrome.repo;
  const csrf = frame.csrf;
  const shown = run.jobs;
  const jobs = shown.map(
    (
      j,
    ) => html`<section class="box" aria-labelledby="job-${j.id}"><header><h2 class="inh" id="job-${j.id}"><a href="${runHref(repo, run.id)}/jobs/${seg(j.id)}">${j.key}</a></h2>${stateBadge(j.state)}
<span class="muted">${j.runner ? `on ${j.runner.name}` : j.state === "queued" ? (j.waiting ? "waiting: see the job graph" : `waiting for a runner with ${j.runs_on.join(", ")}`) : ""}</span><span class="muted">${took(j.started_at, j.finished_at, now)}</span></header>
${j.error ? html`<p class="pad error">${j.error}</p>` : ""}${stepList(j)}<p class="pad"><a href="${runHref(repo, run.id)}/jobs/${seg(j.id)}">Log of ${j.key}</a></p></section>`,
  );
  const cancel =
    repo.viewer_write && !FINISHED_STATES.includes(run.state) ? buttonForm(`${runHref(repo, run.id)}/cancel`, "Cancel run", "Cancel this run", csrf) : "";
  const controls = html`${cancel}${rerunForms(repo, run, csrf)}`;
  return html`${ciHeader(frame, chrome, html`${workflowName(run.workflow)} ${stateBadge(run.state)}`)}<div class="ul">
${error ? html`<p class="error notice" role="alert">${error}</p>` : ""}<dl class="facts box"><dt>Commit</dt><dd>${commitOf(repo, run, run.commit)}</dd><dt>Ref</dt><dd>${refName(run.ref)}</dd><dt>Event</dt><dd>${run.event}${run.trusted ? "" : " from a fork (no secrets)"}</dd>
<dt>Workflow</dt><dd>${run.workflow}</dd>${run.actor ? html`<dt>By</dt><dd><a href="/${seg(run.actor.handle)}">${run.actor.handle}</a></dd>` : ""}${
    run.inputs ? html`<dt>Inputs</dt><dd>${Object.entries(run.inputs).map(([k, v]) => html`<code class="data">${k}=${String(v)}</code> `)}</dd>` : ""
  }<dt>Started</dt><dd>${timeOf(run.created_at)}</dd><dt>Duration</dt><dd>${took(run.created_at, run.finished_at, now) || "—"}</dd></dl>
${run.error ? html`<p class="error">${run.error}</p>` : ""}${run.waiting ? html`<p class="notice" role="status">${run.waiting}</p>` : ""}${controls}
${
  shown.length
    ? html`<section class="box" aria-labelledby="graph-h"><header><h2 id="graph-h" class="inh">Jobs</h2>${attemptSwitcher(repo, run)}</header>${jobGraph(repo, run, shown, now)}</section>${jobs}`
    : html`<p class="muted">This run has no jobs.</p>`
}${artifactsSection(repo, run.id, artifacts)}</div>`;
}
