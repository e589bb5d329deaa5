// A job's page: its steps and its log so far. Without JavaScript the page is complete as it
// stands (a refresh link reads more); js-ci.ts follows the live log from `data-next` on.
import type { Run } from "../../../services/ci/schemas.ts";
import type { RepoChrome } from "../../../services/web/views.ts";
import type { Frame } from "../kit/layout.ts";
import { FINISHED_STATES, type RunJob } from "../../../services/web/ci.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { ciHeader, runHref, stateBadge, stepList, took } from "./runs-page.ts";

/** The job page. */
export function jobPage(frame: Frame, chrome: RepoChrome, run: Run, job: RunJob, log: { text: string; truncated: boolean; next: number }, now: number): Html {
  const repo = chrome.repo;
  const here = `${runHref(repo, run.id)}/jobs/${seg(job.id)}`;
  const raw = `/v1/orgs/${seg(repo.org)}/repos/${seg(repo.name)}/runs/${seg(run.id)}/jobs/${seg(job.id)}/logs`;
  const live = !FINISHED_STATES.includes(job.state);
  return html`${ciHeader(frame, chrome, html`${job.key}`)}<div class="ul">
<p><a href="${runHref(repo, run.id)}">Back to the run</a> · <span role="status" class="live-state">${stateBadge(job.state, "job-state")}</span> <span class="muted">${job.runner ? `on ${job.runner.name} · ` : ""}${took(job.started_at, job.finished_at, now)}</span></p>
${job.error ? html`<p class="error">${job.error}</p>` : ""}${job.waiting ? html`<p class="notice">${job.waiting}</p>` : ""}
<section class="box" aria-labelledby="steps-h"><header><h2 id="steps-h" class="inh">Steps</h2></header>${stepList(job)}</section>
<section class="box" aria-labelledby="log-h"><header><h2 id="log-h" class="inh">Log</h2><a href="${raw}">Raw log</a>${live ? html`<a href="${here}" class="refresh">Refresh</a>` : ""}</header>
${log.truncated ? html`<p class="pad muted">Showing the end of a long log; the raw log has all of it.</p>` : ""}
<pre class="log" id="log" tabindex="0" aria-label="Log of ${job.key}" data-events="${here}/events" data-next="${log.next}" data-live="${live ? "1" : "0"}">${log.text}</pre></section></div>`;
}
