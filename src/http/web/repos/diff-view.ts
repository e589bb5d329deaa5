// A diff as a page shows it (commit page, change page): a summary of the files with their counts,
// then each file's hunks with old and new line numbers. Binary files, files too large for a patch
// and the diff's own truncation are said in words; the page itself stops drawing patch lines after
// PAGE_DIFF_LINES (a diff may hold 4 MB of patch text; a page that size helps nobody).
import { slicer, type FileDiffs } from "../../../services/git/diff.ts";
import type { DiffFile } from "../../../services/git/schemas.ts";
import { html, type Html } from "../kit/html.ts";

/** Patch lines drawn on one page at most; later files show their counts and a note. */
export const PAGE_DIFF_LINES = 20_000;

/** Where a file of the diff can be viewed whole (null: nowhere, e.g. a deleted file). */
export type FileLink = (file: DiffFile) => string | null;

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** Rows drawn between two looks at the clock (the page yields to the event loop once a slice is spent). */
const ROWS_PER_LOOK = 256;

/** Yields to the event loop when the slice is spent: a big diff's page never holds the loop for long. */
type Tick = () => Promise<void>;

/** A side of a diff line: the old file's numbering or the new one's. */
export type DiffSide = "old" | "new";

/**
 * What a review page adds to a diff (the change's files tab): every line number becomes a link
 * (`cell`), and rows of its own (threads, a comment form) follow a line (`after`).
 */
export interface DiffLines {
  /** The markup inside a line-number cell and the cell's id (null: the plain number). */
  cell(file: DiffFile, index: number, side: DiffSide, line: number): { id: string; inner: Html } | null;
  /** Rows drawn after the row of this line (threads, a form); `old`/`new` are the row's numbers. */
  after(file: DiffFile, index: number, oldNo: number | null, newNo: number | null): Html | null;
}

/** One hunk-annotated patch as table rows, with `lines`' links and rows when given. */
async function patchRows(tick: Tick, patch: string, review?: { file: DiffFile; index: number; spec: DiffLines }): Promise<Html[]> {
  if (review) return await reviewRows(tick, patch, review.file, review.index, review.spec);
  const rows: Html[] = [];
  let oldNo = 0;
  let newNo = 0;
  const lines = patch.endsWith("\n") ? patch.slice(0, -1).split("\n") : patch.split("\n");
  for (const [i, line] of lines.entries()) {
    if (i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1) await tick();
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      rows.push(html`<tr class="hunk"><td class="o"></td><td class="n"></td><td class="c">${line}</td></tr>`);
      continue;
    }
    const sign = line[0];
    if (sign === "+") rows.push(html`<tr class="add"><td class="o"></td><td class="n">${newNo++}</td><td class="c">${line}</td></tr>`);
    else if (sign === "-") rows.push(html`<tr class="del"><td class="o">${oldNo++}</td><td class="n"></td><td class="c">${line}</td></tr>`);
    else if (sign === "\\") rows.push(html`<tr class="note"><td class="o"></td><td class="n"></td><td class="c">${line}</td></tr>`);
    else rows.push(html`<tr><td class="o">${oldNo++}</td><td class="n">${newNo++}</td><td class="c">${line}</td></tr>`);
  }
  return rows;
}

/** `patchRows` for a review page: numbers as links, extra rows after a line. */
async function reviewRows(tick: Tick, patch: string, file: DiffFile, index: number, spec: DiffLines): Promise<Html[]> {
  const rows: Html[] = [];
  let oldNo = 0;
  let newNo = 0;
  const num = (cls: "o" | "n", side: DiffSide, n: number | null) => {
    if (n === null) return html`<td class="${cls}"></td>`;
    const c = spec.cell(file, index, side, n);
    return c ? html`<td class="${cls}" id="${c.id}">${c.inner}</td>` : html`<td class="${cls}">${n}</td>`;
  };
  const lines = patch.endsWith("\n") ? patch.slice(0, -1).split("\n") : patch.split("\n");
  for (const [i, line] of lines.entries()) {
    if (i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1) await tick();
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      rows.push(html`<tr class="hunk"><td class="o"></td><td class="n"></td><td class="c">${line}</td></tr>`);
      continue;
    }
    const sign = line[0];
    let o: number | null = null;
    let n: number | null = null;
    let cls = "";
    if (sign === "+") {
      n = newNo++;
      cls = "add";
    } else if (sign === "-") {
      o = oldNo++;
      cls = "del";
    } else if (sign === "\\") {
      rows.push(html`<tr class="note"><td class="o"></td><td class="n"></td><td class="c">${line}</td></tr>`);
      continue;
    } else {
      o = oldNo++;
      n = newNo++;
    }
    rows.push(html`<tr${cls ? html` class="${cls}"` : ""}>${num("o", "old", o)}${num("n", "new", n)}<td class="c">${line}</td></tr>`);
    const extra = spec.after(file, index, o, n);
    if (extra) rows.push(extra);
  }
  return rows;
}

function statusWord(f: DiffFile): string {
  const mode = f.old_mode && f.new_mode && f.old_mode !== f.new_mode && f.status === "modified" ? ` (mode ${f.old_mode} → ${f.new_mode})` : "";
  return f.status + mode;
}

/**
 * The whole diff: a file summary, then every file. `lines` (a review page) makes line numbers
 * links and adds rows after lines; `fileExtra` adds markup after a file's table (its outdated threads).
 */
export async function diffView(d: FileDiffs, link: FileLink, lines?: DiffLines, fileExtra?: (f: DiffFile, index: number) => Html | null): Promise<Html> {
  let budget = PAGE_DIFF_LINES;
  let cut = 0;
  const tick = slicer();
  const files: Html[] = [];
  for (const [i, f] of d.files.entries()) {
    await tick();
    const href = link(f);
    let body: Html;
    if (f.binary) body = html`<p class="pad muted">Binary file not shown.</p>`;
    else if (f.patch === null)
      body = html`<p class="pad muted">${f.patch_truncated ? "This file's diff is too large to show." : "No textual changes."}${href ? html` <a href="${href}">View the file</a>.` : ""}</p>`;
    else {
      const lineCount = f.patch.split("\n").length;
      if (lineCount > budget) {
        cut++;
        budget = 0;
        body = html`<p class="pad muted">Not shown: this page already shows ${PAGE_DIFF_LINES.toLocaleString("en")} changed lines.${href ? html` <a href="${href}">View the file</a>.` : ""}</p>`;
      } else {
        budget -= lineCount;
        const rows = await patchRows(tick, f.patch, lines ? { file: f, index: i + 1, spec: lines } : undefined);
        body = html`<div class="scroll"><table class="diff"${lines ? html` data-path="${f.path}"` : ""}><caption class="sr">Changes to ${f.path}</caption><thead class="sr"><tr><th scope="col">Old line</th><th scope="col">New line</th><th scope="col">Line</th></tr></thead><tbody>${rows}</tbody></table></div>`;
      }
    }
    files.push(
      html`<section class="box" id="diff-${i + 1}" aria-labelledby="diff-${i + 1}-h"><header><h3 class="inh path" id="diff-${i + 1}-h">${f.path}</h3><span class="badge">${statusWord(f)}</span>${counts(f)}${href ? html`<a href="${href}">View</a>` : ""}</header>${body}${fileExtra?.(f, i + 1) ?? ""}</section>`,
    );
  }
  const notes = [d.truncation, cut ? "later files' patches are not drawn on this page" : null].filter(Boolean);
  return html`<p><strong>${d.files.length}</strong> ${d.files.length === 1 ? "file" : "files"} changed, ${counts(d)}</p>
${notes.length ? html`<p class="warn" role="note">${notes.join("; ")}.</p>` : ""}
${d.files.length ? html`<details class="filelist" open><summary>Files</summary><ul class="list">${d.files.map((f, i) => html`<li><a href="#diff-${i + 1}" class="path">${f.path}</a> ${counts(f)}</li>`)}</ul></details>` : ""}
${files}`;
}

/** "+3 −1" with words for screen readers. */
function counts(c: { additions: number; deletions: number; binary?: boolean }): Html {
  if (c.binary) return html`<span class="muted">binary</span>`;
  return html`<span class="adds" title="${c.additions} additions">+${c.additions}</span> <span class="dels" title="${c.deletions} deletions">−${c.deletions}</span>`;
}
