// The blame page (/{org}/{repo}/blame/{ref}/{path}): the file's lines, highlighted, each with its
// own anchor (#L12, as on the file page), grouped into the ranges the blame gives, each range
// led by the commit that last changed it (summary linking to the commit, author, date).
import type { Blame } from "../../../services/repos/blame-schemas.ts";
import type { RepoFrame } from "../../../services/web/views.ts";
import type { Frame } from "../kit/layout.ts";
import { html, segs, type Html } from "../kit/html.ts";
import type { Highlighted } from "./highlight.ts";
import { refSwitcher, repoBase, repoTop } from "./repo-layout.ts";

/** The path as links to its directories (the last part is the file). */
function pathCrumbs(f: RepoFrame): Html {
  const tree = `${repoBase(f)}/tree/${segs(f.ref.short)}`;
  const parts = f.path.split("/");
  return html`<nav class="crumbs" aria-label="Path"><a href="${tree}">${f.repo.name}</a>${parts.map((p, i) =>
    i === parts.length - 1 ? html` / <strong>${p}</strong>` : html` / <a href="${tree}/${segs(parts.slice(0, i + 1).join("/"))}">${p}</a>`,
  )}</nav>`;
}

/** A date as the page shows it (UTC day: the same page for every viewer, so it may be cached). */
function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The links of the box's header: the file, its history, raw. */
function fileLinks(f: RepoFrame): Html {
  const base = repoBase(f);
  const ref = segs(f.ref.short);
  const path = segs(f.path);
  return html`<a href="${base}/blob/${ref}/${path}">File</a><a href="${base}/commits/${ref}/${path}">History</a><a href="${base}/raw/${ref}/${path}">Raw</a>`;
}

/** The page: `blame` ranges over `shown` lines (the file's text as highlight.ts gives it). */
export function blamePage(frame: Frame, f: RepoFrame, blame: Blame, shown: Highlighted): Html {
  const base = repoBase(f);
  const top = repoTop(frame, f, "code", { switcher: refSwitcher(f, "blame") });
  const rows: Html[] = [];
  let group = 0;
  for (const r of blame.ranges) {
    const c = r.commit;
    group++;
    for (let i = 0; i < r.count; i++) {
      const n = r.start + i;
      const line = shown.lines[n - 1] ?? "";
      const who =
        i === 0
          ? html`<td class="who" rowspan="${String(r.count)}"><a class="sum" href="${base}/commit/${c.sha}" title="${c.summary}">${c.summary || c.sha.slice(0, 10)}</a><span class="by">${c.author.name} · <time datetime="${new Date(c.authored_at).toISOString()}">${day(c.authored_at)}</time></span></td>`
          : "";
      rows.push(
        html`<tr id="L${String(n)}"${i === 0 ? html` class="first${group % 2 ? "" : " alt"}"` : group % 2 ? "" : html` class="alt"`}>${who}<td class="n"><a href="#L${String(n)}">${String(n)}</a></td><td class="l">${line}</td></tr>`,
      );
    }
  }
  const commits = new Set(blame.ranges.map((r) => r.commit.sha)).size;
  const summary = `${blame.lines.toLocaleString("en")} ${blame.lines === 1 ? "line" : "lines"} · ${commits.toLocaleString("en")} ${commits === 1 ? "commit" : "commits"}${shown.language ? ` · ${shown.language}` : ""}`;
  const body = blame.lines
    ? html`<div class="scroll"><table class="code blame"><caption class="sr">Blame of ${f.path}</caption><thead class="sr"><tr><th scope="col">Commit</th><th scope="col">Line</th><th scope="col">Text</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="pad muted">This file is empty.</p>`;
  const truncated = blame.truncated
    ? html`<p class="notice" role="status">The history of this file is too long to search to its start: the oldest lines are shown with the oldest commit reached.</p>`
    : "";
  return html`${top}${pathCrumbs(f)}${truncated}
<section class="box" aria-label="Blame"><header><span><strong>Blame</strong> · ${summary}</span>${fileLinks(f)}</header>${body}</section>`;
}

/** The page for a file blame does not read (binary, too large): the reason and the links. */
export function blameRefusedPage(frame: Frame, f: RepoFrame, reason: string): Html {
  const top = repoTop(frame, f, "code", { switcher: refSwitcher(f, "blame") });
  return html`${top}${pathCrumbs(f)}
<section class="box" aria-label="Blame"><header><span><strong>Blame</strong></span>${fileLinks(f)}</header><p class="pad">${reason}</p></section>`;
}
