// The one repository layout (issue 33): the heading, the fork or mirror banner and the nav every
// repository page draws above its content, with the tab it is on. Pages of a ref (tree, file,
// history, blame) add the branch switcher.
import type { RepoChrome } from "../../../services/web/views.ts";
import type { Frame } from "../kit/layout.ts";
import { html, seg, type Html } from "../kit/html.ts";

/** The nav's tabs. */
export type RepoTab = "code" | "issues" | "changes" | "runs" | "settings";

/** `/org/repo` */
export function repoBase(c: RepoChrome): string {
  return `/${seg(c.repo.org)}/${seg(c.repo.name)}`;
}

/** What a page may add to the layout. */
export interface RepoTopOptions {
  /** The branch switcher (pages of a ref), drawn at the start of the nav's row. */
  switcher?: Html;
}

/** The heading, banner and nav of a repository page, `tab` marked as current. */
export function repoTop(_frame: Frame, c: RepoChrome, tab: RepoTab, opts: RepoTopOptions = {}): Html {
  const r = c.repo;
  const base = repoBase(c);
  const cur = (t: RepoTab) => (t === tab ? html` aria-current="page"` : "");
  const count =
    typeof c.openIssues === "number"
      ? html` <span class="tab-count">${c.openIssues > 999 ? "1k+" : String(c.openIssues)}</span><span class="sr"> open</span>`
      : "";
  return html`<h1><a href="/${seg(r.org)}">${r.org}</a> / <a href="${base}">${r.name}</a> <span class="badge">${r.public ? "public" : "private"}</span></h1>
${r.description ? html`<p>${r.description}</p>` : ""}
<nav class="tabs" aria-label="Repository">${opts.switcher ?? ""}<a href="${base}"${cur("code")}>Code</a><a href="${base}/issues"${cur("issues")}>Issues${count}</a>${r.kind === "mirror" ? "" : html`<a href="${base}/changes"${cur("changes")}>Changes</a>`}<a href="${base}/runs"${cur("runs")}>Runs</a>${r.viewer_admin ? html`<a href="${base}/settings"${cur("settings")}>Settings</a>` : ""}</nav>`;
}
