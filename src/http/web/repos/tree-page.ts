// What every repository page shares (heading, switcher, clone box, crumbs), and the tree page (with README).
import type { RepoBody } from "../../../services/repos/repos.ts";
import type { Tree } from "../../../services/repos/schemas.ts";
import { PAGE_ENTRIES, type RepoFrame } from "../../../services/web/views.ts";
import { html, seg, segs, type Html } from "../kit/html.ts";
import { MARKDOWN_LIMIT, renderMarkdownOffloaded, type LinkBase } from "../kit/markdown.ts";
import type { Threads } from "../../../threads.ts";

/** `/org/repo` */
export function repoHref(repo: RepoBody): string {
  return `/${seg(repo.org)}/${seg(repo.name)}`;
}

/** The open-issue count beside the nav's Issues ("1k+" beyond 999; "open" said to screen readers). */
export function openCount(n: number): Html {
  return html` <span class="tab-count">${n > 999 ? "1k+" : String(n)}</span><span class="sr"> open</span>`;
}

/** A byte count for people. */
export function sizeText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** The heading, switcher and clone box shared by the repository pages. */
export function repoHeader(f: RepoFrame, view: "tree" | "blob" | "commits" | "changes"): Html {
  const r = f.repo;
  const base = repoHref(r);
  const here = f.path ? `/${segs(f.path)}` : "";
  const switchTo = (name: string) => `${base}/${view === "commits" ? "commits" : "tree"}/${segs(name)}${view === "commits" || view === "tree" ? here : ""}`;
  const branches = f.choices.filter((c) => c.kind === "branch");
  const tags = f.choices.filter((c) => c.kind === "tag");
  const item = (c: { name: string }) => html`<li><a href="${switchTo(c.name)}"${c.name === f.ref.short ? html` aria-current="true"` : ""}>${c.name}</a></li>`;
  return html`<h1><a href="/${seg(r.org)}">${r.org}</a> / <a href="${base}">${r.name}</a> <span class="badge">${r.public ? "public" : "private"}</span></h1>
${r.description ? html`<p>${r.description}</p>` : ""}
<div class="box"><header>
<details class="menu"><summary class="button" aria-label="Switch branch or tag, now ${f.ref.short}">${f.ref.short.length > 40 ? f.ref.short.slice(0, 12) : f.ref.short} ▾</summary>
<ul>${branches.length ? html`<li class="muted group">Branches</li>${branches.map(item)}` : ""}${tags.length ? html`<li class="muted group">Tags</li>${tags.map(item)}` : ""}</ul></details>
<a href="${base}/tree/${segs(f.ref.short)}">Files</a>
<a href="${base}/commits/${segs(f.ref.short)}"${view === "commits" ? html` aria-current="page"` : ""}>History</a>
<a href="${base}/changes"${view === "changes" ? html` aria-current="page"` : ""}>Changes</a>
<a href="${base}/issues">Issues${typeof f.openIssues === "number" ? openCount(f.openIssues) : ""}</a>
<a href="${base}/runs">Runs</a>${r.viewer_admin ? html`<a href="${base}/settings/webhooks">Settings</a>` : ""}
</header>
<div class="clone pad">
<label for="clone-https" class="inl">HTTPS</label><input id="clone-https" type="text" readonly value="${r.clone_url}"><button type="button" data-copy="clone-https" hidden>Copy</button>
${r.ssh_clone_url ? html`<label for="clone-ssh" class="inl">SSH</label><input id="clone-ssh" type="text" readonly value="${r.ssh_clone_url}"><button type="button" data-copy="clone-ssh" hidden>Copy</button>` : ""}
</div></div>${f.notice ? html`<p class="notice" role="status">${f.notice}</p>` : ""}`;
}

/** Breadcrumbs for a path inside the repository. */
export function crumbs(f: RepoFrame): Html {
  if (!f.path) return html``;
  const base = `${repoHref(f.repo)}/tree/${segs(f.ref.short)}`;
  const parts = f.path.split("/");
  return html`<nav class="crumbs" aria-label="Path"><a href="${base}">${f.repo.name}</a>${parts.map((p, i) =>
    i === parts.length - 1 ? html` / <strong>${p}</strong>` : html` / <a href="${base}/${segs(parts.slice(0, i + 1).join("/"))}">${p}</a>`,
  )}</nav>`;
}

/** Where a README's relative links resolve. */
export function readmeBase(f: RepoFrame, path: string): LinkBase {
  return { repo: repoHref(f.repo), ref: segs(f.ref.short), dir: path.split("/").slice(0, -1).join("/") };
}

/** A README as the tree page shows it: rendered Markdown (big ones on a worker thread) or its text. */
export async function readmeMarkup(threads: Threads, f: RepoFrame, readme: { path: string; text: string }): Promise<Html> {
  if (/\.(md|markdown)$/i.test(readme.path) && readme.text.length <= MARKDOWN_LIMIT)
    return renderMarkdownOffloaded(threads, readme.text, readmeBase(f, readme.path));
  return html`<pre>${readme.text}</pre>`;
}

/** A directory listing with its README (`readme.html`: its markup, from readmeMarkup). */
export function treePage(f: RepoFrame, tree: (Tree & { total: number; offset: number }) | null, readme: { path: string; html: Html } | null): Html {
  const base = repoHref(f.repo);
  const ref = segs(f.ref.short);
  if (!tree) {
    return html`${repoHeader(f, "tree")}<section class="box"><header><strong>This repository is empty</strong></header>
<p class="pad">Push a first commit:</p><pre class="pad">git remote add origin ${f.repo.clone_url}
git push -u origin ${f.repo.default_branch}</pre></section>`;
  }
  const rows = tree.entries.map((e) => {
    const href = e.type === "tree" ? `${base}/tree/${ref}/${segs(e.path)}` : e.type === "blob" ? `${base}/blob/${ref}/${segs(e.path)}` : null;
    const label =
      e.type === "tree"
        ? html`<span aria-hidden="true">📁 </span>${e.name}/`
        : e.type === "commit"
          ? html`<span aria-hidden="true">↪ </span>${e.name} <span class="muted">(submodule)</span>`
          : html`<span aria-hidden="true">📄 </span>${e.name}`;
    return html`<tr><td>${href ? html`<a href="${href}">${label}</a>` : label}</td><td class="size">${e.size === null ? "" : sizeText(e.size)}</td></tr>`;
  });
  const here = `${base}/tree/${ref}${f.path ? `/${segs(f.path)}` : ""}`;
  const end = tree.offset + tree.entries.length;
  const pager =
    tree.total > tree.entries.length
      ? html`<nav class="pager" aria-label="Entries"><span class="muted">Entries ${(tree.offset + 1).toLocaleString("en")}–${end.toLocaleString("en")} of ${tree.total.toLocaleString("en")}</span>${tree.offset > 0 ? html`<a href="${here}?offset=${Math.max(0, tree.offset - PAGE_ENTRIES)}">Previous entries</a>` : ""}${end < tree.total ? html`<a href="${here}?offset=${end}">Next entries</a>` : ""}</nav>`
      : "";
  return html`${repoHeader(f, "tree")}${crumbs(f)}
<section class="box" aria-label="Files"><div class="scroll"><table class="files"><tbody>${rows}</tbody></table></div></section>${pager}
${
  readme
    ? html`<section class="box" aria-labelledby="readme-h"><header><h2 id="readme-h" class="inh">${readme.path.split("/").pop()}</h2></header>
<div class="markdown">${readme.html}</div></section>`
    : ""
}`;
}
