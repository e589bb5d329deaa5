// A diff as a page shows it (commit page, change page): a summary of the files with their counts,
// then each file's hunks with old and new line numbers. Binary files, files too large for a patch
// and the diff's own truncation are said in words; the page itself stops drawing patch lines after
// PAGE_DIFF_LINES (a diff may hold 4 MB of patch text; a page that size helps nobody).
import type { FileDiffs } from "../../../services/git/diff.ts";
import type { DiffFile } from "../../../services/git/schemas.ts";
import { html, type Html } from "../kit/html.ts";

/** Patch lines drawn on one page at most; later files show their counts and a note. */
export const PAGE_DIFF_LINES = 20_000;

/** Where a file of the diff can be viewed whole (null: nowhere, e.g. a deleted file). */
export type FileLink = (file: DiffFile) => string | null;

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** One hunk-annotated patch as table rows. */
function patchRows(patch: string): Html[] {
  const rows: Html[] = [];
  let oldNo = 0;
  let newNo = 0;
  const lines = patch.endsWith("\n") ? patch.slice(0, -1).split("\n") : patch.split("\n");
  for (const line of lines) {
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

function statusWord(f: DiffFile): string {
  const mode = f.old_mode && f.new_mode && f.old_mode !== f.new_mode && f.status === "modified" ? ` (mode ${f.old_mode} → ${f.new_mode})` : "";
  return f.status + mode;
}

/** The whole diff: a file summary, then every file. */
export function diffView(d: FileDiffs, link: FileLink): Html {
  let budget = PAGE_DIFF_LINES;
  let cut = 0;
  const files = d.files.map((f, i) => {
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
        body = html`<div class="scroll"><table class="diff"><caption class="sr">Changes to ${f.path}</caption><thead class="sr"><tr><th scope="col">Old line</th><th scope="col">New line</th><th scope="col">Line</th></tr></thead><tbody>${patchRows(f.patch)}</tbody></table></div>`;
      }
    }
    return html`<section class="box" id="diff-${i + 1}" aria-labelledby="diff-${i + 1}-h"><header><h3 class="inh path" id="diff-${i + 1}-h">${f.path}</h3><span class="badge">${statusWord(f)}</span>${counts(f)}${href ? html`<a href="${href}">View</a>` : ""}</header>${body}</section>`;
  });
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
