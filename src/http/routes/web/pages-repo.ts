// The org page and the repository pages: tree (with README), file (line anchors), history.
import type { OrgProfile } from "../../../services/discovery/schemas.ts";
import type { RepoBody } from "../../../services/repos/repos.ts";
import type { CommitList, Tree } from "../../../services/repos/schemas.ts";
import type { RepoFrame } from "../../../services/web/views.ts";
import { html, seg, segs, type Html } from "./html.ts";
import { MARKDOWN_LIMIT, renderMarkdown } from "./markdown.ts";

/** `/org/repo` */
export function repoHref(repo: RepoBody): string {
  return `/${seg(repo.org)}/${seg(repo.name)}`;
}

/** A byte count for people. */
function sizeText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** One repository in a list. */
export function repoItem(repo: RepoBody): Html {
  return html`<li><a href="${repoHref(repo)}"><strong>${repo.org}/${repo.name}</strong></a> <span class="badge">${repo.public ? "public" : "private"}</span>${repo.kind === "mirror" ? html` <span class="badge">mirror</span>` : ""}
${repo.description ? html`<div class="muted">${repo.description}</div>` : ""}</li>`;
}

/** The org page. */
export function orgPage(profile: OrgProfile, repos: RepoBody[], next: string | null, signedIn = false): Html {
  const title = profile.display_name ?? profile.org;
  return html`<h1>${title} <span class="muted">${profile.display_name ? profile.org : ""}</span></h1>
${signedIn ? html`<p><a href="/settings/orgs/${seg(profile.org)}">Settings</a></p>` : ""}
${profile.description ? html`<p>${profile.description}</p>` : ""}
<p class="muted">${[profile.location, profile.website].filter(Boolean).join(" · ")}</p>
<section class="box" aria-labelledby="repos-h"><header><h2 id="repos-h" class="inh">Repositories</h2></header>
${repos.length ? html`<ul class="list">${repos.map(repoItem)}</ul>` : html`<p class="pad muted">No repositories you can see.</p>`}
</section>
${next ? html`<nav class="pager"><a href="/${seg(profile.org)}?cursor=${seg(next)}">More repositories</a></nav>` : ""}`;
}

/** The heading, switcher and clone box shared by the repository pages. */
function repoHeader(f: RepoFrame, view: "tree" | "blob" | "commits"): Html {
  const r = f.repo;
  const base = repoHref(r);
  const here = f.path ? `/${segs(f.path)}` : "";
  const switchTo = (name: string) => `${base}/${view === "blob" ? "tree" : view}/${segs(name)}${view === "commits" ? here : view === "tree" ? here : ""}`;
  const branches = f.choices.filter((c) => c.kind === "branch");
  const tags = f.choices.filter((c) => c.kind === "tag");
  const item = (c: { name: string }) => html`<li><a href="${switchTo(c.name)}"${c.name === f.ref.short ? html` aria-current="true"` : ""}>${c.name}</a></li>`;
  return html`<h1><a href="/${seg(r.org)}">${r.org}</a> / <a href="${base}">${r.name}</a> <span class="badge">${r.public ? "public" : "private"}</span></h1>
${r.description ? html`<p>${r.description}</p>` : ""}
<div class="box"><header>
<details class="menu"><summary class="button" aria-label="Switch branch or tag, now ${f.ref.short}">${f.ref.short.length > 40 ? f.ref.short.slice(0, 12) : f.ref.short} ▾</summary>
<ul>${branches.length ? html`<li class="muted group">Branches</li>${branches.map(item)}` : ""}${tags.length ? html`<li class="muted group">Tags</li>${tags.map(item)}` : ""}</ul></details>
<a href="${base}/tree/${segs(f.ref.short)}">Files</a>
<a href="${base}/commits/${segs(f.ref.short)}">History</a>
<a href="${base}/runs">Runs</a>${r.viewer_admin ? html`<a href="${base}/settings/webhooks">Settings</a>` : ""}
</header>
<div class="clone pad">
<label for="clone-https" class="inl">HTTPS</label><input id="clone-https" type="text" readonly value="${r.clone_url}"><button type="button" data-copy="clone-https" hidden>Copy</button>
${r.ssh_clone_url ? html`<label for="clone-ssh" class="inl">SSH</label><input id="clone-ssh" type="text" readonly value="${r.ssh_clone_url}"><button type="button" data-copy="clone-ssh" hidden>Copy</button>` : ""}
</div></div>`;
}

/** Breadcrumbs for a path inside the repository. */
function crumbs(f: RepoFrame): Html {
  if (!f.path) return html``;
  const base = `${repoHref(f.repo)}/tree/${segs(f.ref.short)}`;
  const parts = f.path.split("/");
  return html`<nav class="crumbs" aria-label="Path"><a href="${base}">${f.repo.name}</a>${parts.map((p, i) =>
    i === parts.length - 1 ? html` / <strong>${p}</strong>` : html` / <a href="${base}/${segs(parts.slice(0, i + 1).join("/"))}">${p}</a>`,
  )}</nav>`;
}

/** A directory listing with its README. */
export function treePage(f: RepoFrame, tree: Tree | null, readme: { path: string; text: string } | null): Html {
  const base = repoHref(f.repo);
  const ref = segs(f.ref.short);
  if (!tree) {
    return html`${repoHeader(f, "tree")}<section class="box"><header><strong>This repository is empty</strong></header>
<p class="pad">Push a first commit:</p><pre class="pad">git remote add origin ${f.repo.clone_url}
git push -u origin ${f.repo.default_branch}</pre></section>`;
  }
  const rows = tree.entries.map((e) => {
    const href = e.type === "tree" ? `${base}/tree/${ref}/${segs(e.path)}` : e.type === "blob" ? `${base}/blob/${ref}/${segs(e.path)}` : null;
    const label = e.type === "tree" ? html`<span aria-hidden="true">📁 </span>${e.name}/` : e.type === "commit" ? html`<span aria-hidden="true">↪ </span>${e.name} <span class="muted">(submodule)</span>` : html`<span aria-hidden="true">📄 </span>${e.name}`;
    return html`<tr><td>${href ? html`<a href="${href}">${label}</a>` : label}</td><td class="size">${e.size === null ? "" : sizeText(e.size)}</td></tr>`;
  });
  const dir = readme ? readme.path.split("/").slice(0, -1).join("/") : "";
  return html`${repoHeader(f, "tree")}${crumbs(f)}
<section class="box" aria-label="Files"><div class="scroll"><table class="files"><tbody>${rows}</tbody></table></div></section>
${readme
    ? html`<section class="box" aria-labelledby="readme-h"><header><h2 id="readme-h" class="inh">${readme.path.split("/").pop()}</h2></header>
<div class="markdown">${/\.(md|markdown)$/i.test(readme.path) && readme.text.length <= MARKDOWN_LIMIT ? renderMarkdown(readme.text, { repo: base, ref, dir: dir }) : html`<pre>${readme.text}</pre>`}</div></section>`
    : ""}`;
}

/** One file, every line with its own anchor (`#L12`). */
export function filePage(f: RepoFrame, file: { oid: string; size: number; text: string | null }): Html {
  const base = repoHref(f.repo);
  const raw = `${base}/raw/${segs(f.ref.short)}/${segs(f.path)}`;
  let body: Html;
  if (file.text === null) body = html`<p class="pad">${file.size > 0 ? "This file is binary or too large to show here." : ""} <a href="${raw}">View raw</a> (${sizeText(file.size)}).</p>`;
  else {
    const lines = file.text.endsWith("\n") ? file.text.slice(0, -1).split("\n") : file.text.split("\n");
    body = html`<div class="scroll"><table class="code"><tbody>${lines.map((l, i) => html`<tr id="L${i + 1}"><td class="n"><a href="#L${i + 1}">${i + 1}</a></td><td class="l">${l}</td></tr>`)}</tbody></table></div>`;
  }
  return html`${repoHeader(f, "blob")}${crumbs(f)}
<section class="box" aria-label="File"><header><span>${sizeText(file.size)}</span><a href="${raw}">Raw</a><a href="${base}/commits/${segs(f.ref.short)}/${segs(f.path)}">History</a></header>${body}</section>`;
}

/** A date for people (UTC, to the minute). */
function when(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/** Commit history, newest first. */
export function historyPage(f: RepoFrame, list: CommitList): Html {
  const base = repoHref(f.repo);
  const items = list.commits.map((c) => {
    const [title, ...rest] = c.message.split("\n");
    return html`<li><div class="commit-title">${title}</div>
<div class="muted">${c.author.name} · <time datetime="${new Date(c.committer.date).toISOString()}">${when(c.committer.date)}</time> · <a class="sha" href="${base}/tree/${c.sha}">${c.sha.slice(0, 10)}</a></div>${rest.join("\n").trim() ? html`<details><summary class="muted">more</summary><pre>${rest.join("\n").trim()}</pre></details>` : ""}</li>`;
  });
  const here = f.path ? `/${segs(f.path)}` : "";
  return html`${repoHeader(f, "commits")}
<h2>History of ${f.path ? f.path : f.ref.short}</h2>
<section class="box">${items.length ? html`<ul class="list">${items}</ul>` : html`<p class="pad muted">No commits.</p>`}</section>
${list.next_cursor ? html`<nav class="pager"><a href="${base}/commits/${segs(f.ref.short)}${here}?cursor=${seg(list.next_cursor)}">Older commits</a></nav>` : ""}`;
}
