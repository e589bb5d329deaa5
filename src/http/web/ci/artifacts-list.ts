// The run page's artifacts (issue 30): each with its size, when it expires, and a download link
// (the page's own route, which answers as the API's zip does); an expired one is shown as such.
import type { ArtifactShown } from "../../../services/ci/artifacts.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { timeOf } from "../kit/widgets.ts";
import { sizeText } from "../repos/tree-page.ts";

/** `/{org}/{repo}/runs/{id}/artifacts/{artifact_id}`: the zip of one artifact. */
export function artifactHref(repo: Pick<RepoBody, "org" | "name">, runId: string, id: string): string {
  return `/${seg(repo.org)}/${seg(repo.name)}/runs/${seg(runId)}/artifacts/${seg(id)}`;
}

/** The artifacts section of a run's page; nothing when the run has none. */
export function artifactsSection(repo: RepoBody, runId: string, artifacts: readonly ArtifactShown[]): Html {
  if (!artifacts.length) return html``;
  const rows = artifacts.map((a) =>
    a.expired
      ? html`<tr><td>${a.name}</td><td>${sizeText(a.size)}</td><td><span class="state state-skipped">expired</span> ${timeOf(a.expires_at)}</td></tr>`
      : html`<tr><td><a href="${artifactHref(repo, runId, a.id)}" download="${a.name}.zip">${a.name}</a></td><td>${sizeText(a.size)}</td><td>until ${timeOf(a.expires_at)}</td></tr>`,
  );
  return html`<section class="box" aria-labelledby="artifacts-h"><header><h2 id="artifacts-h" class="inh">Artifacts</h2><span class="muted">${artifacts.length} produced by this run</span></header>
<div class="scroll"><table class="grid"><thead><tr><th scope="col">Name</th><th scope="col">Size</th><th scope="col">Kept</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}
