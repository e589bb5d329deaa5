// The file page: highlighted lines, each with its own anchor (#L12; #L12-L20 marks a range with
// the script), and links to the raw file, a download, and its history.
import { INLINE_FILE_LIMIT, INLINE_LINE_LIMIT, type RepoFrame } from "../../../services/web/views.ts";
import type { Highlighted } from "./highlight.ts";
import { html, segs, type Html } from "../kit/html.ts";
import { codeTop, crumbs, repoHref, sizeText } from "./tree-page.ts";
import type { Frame } from "../kit/layout.ts";
import { icon } from "../kit/icons.ts";

/** What the file page needs of a blob. */
export interface FileShown {
  oid: string;
  size: number;
  /** The text, or null when binary or too large to show. */
  text: string | null;
  /** Set when the text has more lines than a page draws (INLINE_LINE_LIMIT): how many. */
  lines?: number;
  /** A Git LFS pointer's object (`size` is then the object's, `text` its text): whether the server holds its bytes. */
  lfs?: { stored: boolean };
}

/** A text's lines as the page numbers them (a final newline ends the last line, it does not start another). */
export function fileLines(text: string): string[] {
  return text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
}

/** One file, every line with its own anchor; `shown` is its lines as markup (highlight.ts) when it is text. */
export function filePage(frame: Frame, f: RepoFrame, file: FileShown, shown: Highlighted | null): Html {
  const base = repoHref(f.repo);
  const raw = `${base}/raw/${segs(f.ref.short)}/${segs(f.path)}`;
  let body: Html;
  let lineCount = 0;
  let language: string | null = null;
  if (file.lfs && !file.lfs.stored)
    body = html`<p class="pad">This file is stored with Git LFS, and its object (${sizeText(file.size)}) is not on this server.</p>`;
  else if (file.text === null && file.size > INLINE_FILE_LIMIT)
    body = html`<p class="pad">This file is too large to show here (${sizeText(file.size)}). <a href="${raw}?download=1" download>Download it</a> or <a href="${raw}">view it raw</a>.</p>`;
  else if (file.text === null && file.lines !== undefined)
    body = html`<p class="pad">This file has ${file.lines.toLocaleString("en")} lines, more than a page shows (${INLINE_LINE_LIMIT.toLocaleString("en")}). <a href="${raw}?download=1" download>Download it</a> or <a href="${raw}">view it raw</a>.</p>`;
  else if (file.text === null)
    body = html`<p class="pad">${file.size > 0 ? "This file is binary." : ""} <a href="${raw}">View raw</a> (${sizeText(file.size)}).</p>`;
  else if (file.text === "" || !shown) body = html`<p class="pad muted">This file is empty.</p>`;
  else {
    lineCount = shown.lines.length;
    language = shown.language;
    const rows: Html[] = new Array(lineCount);
    for (let i = 0; i < lineCount; i++) {
      const n = i + 1;
      rows[i] = html`<tr id="L${n}"><td class="n"><a href="#L${n}">${n}</a></td><td class="l">${shown.lines[i]}</td></tr>`;
    }
    body = html`<div class="scroll"><table class="code"><caption class="sr">${f.path}</caption><tbody>${rows}</tbody></table></div>`;
  }
  return html`${codeTop(frame, f, "blob", false)}${crumbs(f)}
<section class="box" aria-label="File"><header><span>${file.lfs ? "Stored with Git LFS · " : ""}${lineCount ? `${lineCount.toLocaleString("en")} ${lineCount === 1 ? "line" : "lines"} · ` : ""}${sizeText(file.size)}${language ? ` · ${language}` : ""}</span>
<a href="${raw}">Raw</a><a href="${raw}?download=1" download>${icon("download")} Download</a><a href="${base}/commits/${segs(f.ref.short)}/${segs(f.path)}">${icon("history")} History</a>${file.text !== null && !file.lfs ? html`<a href="${base}/blame/${segs(f.ref.short)}/${segs(f.path)}">Blame</a>` : ""}</header>${body}</section>`;
}
