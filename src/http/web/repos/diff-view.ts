// A diff as a page shows it (commit page, change page): a summary of the files with their counts,
// then each file's hunks with old and new line numbers. Binary files, files too large for a patch
// and the diff's own truncation are said in words; the page itself stops drawing patch lines after
// PAGE_DIFF_LINES (a diff may hold 4 MB of patch text; a page that size helps nobody).
// With a highlighter (issue 33) the drawn files' lines are coloured by the file's language: each
// hunk's old and new side tokenized alone on the highlighting thread, in one job per page, up to
// DIFF_HIGHLIGHT_BUDGET; past it, and for minified lines, plain. The rows and anchors are the same.
import type { Highlighter } from "../../../services/context.ts";
import { slicer, type FileDiffs } from "../../../services/git/diff.ts";
import type { DiffFile } from "../../../services/git/schemas.ts";
import { escapeHtml, html, trusted, type Html } from "../kit/html.ts";
import { LANGUAGES, languageOf } from "./highlight-engine.ts";
import { HIGHLIGHT_LINE_LIMIT, highlightParts } from "./highlight.ts";

/** Patch lines drawn on one page at most; later files show their counts and a note. */
export const PAGE_DIFF_LINES = 20_000;
/** Hunk text highlighted per page, in bytes × the engine's weight (highlight.js 4); later files are plain. */
export const DIFF_HIGHLIGHT_BUDGET = 256 * 1024;

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
 * What a review page adds to one file of a diff (the change's files tab): every line number a
 * link (`cell`), and rows of its own (threads, a comment form) after a line (`after`). Both answer
 * markup as plain strings, every value in them already escaped: they run once per row (15,000 rows
 * on a big change), where a template call per cell was most of the page's time.
 */
export interface FileLines {
  /** A line-number cell, `<td class="o|n" …>…</td>` whole (null: the plain number). */
  cell: ((side: DiffSide, line: number) => string) | null;
  /** Rows drawn after the row of this line (threads, a form); `old`/`new` are the row's numbers. */
  after: ((oldNo: number | null, newNo: number | null) => string | null) | null;
  /**
   * Names everything `cell` draws besides its side and number (its link prefix, the file's index):
   * equal keys, equal cells. With it (or without `cell`), and without `after`, the file's drawn rows
   * are remembered beside its highlighting and a warm view reuses them.
   */
  key?: string;
}

/** The review page's hook: asked once per file drawn in full (null: that file drawn plainly). */
export type DiffLines = (file: DiffFile, index: number) => FileLines | null;

/** The lines of a patch without the final newline's empty one. */
function patchLines(patch: string): string[] {
  return patch.endsWith("\n") ? patch.slice(0, -1).split("\n") : patch.split("\n");
}

const PLAIN_CELLS = { o: (n: number) => `<td class="o">${n}</td>`, n: (n: number) => `<td class="n">${n}</td>` } as const;

/** One hunk's old side (context and deletions) and new side (context and additions), without their signs. */
interface HunkSides {
  old: string[];
  new: string[];
}

/** A patch's hunks as the two texts a highlighter reads (hunks counted as patchRows counts them). */
function hunkSides(patch: string): HunkSides[] {
  const out: HunkSides[] = [];
  let cur: HunkSides | null = null;
  for (const line of patchLines(patch)) {
    const sign = line[0];
    if (sign === "@" && HUNK.test(line)) {
      cur = { old: [], new: [] };
      out.push(cur);
      continue;
    }
    if (sign === "\\") continue;
    if (!cur) {
      cur = { old: [], new: [] };
      out.push(cur);
    }
    const text = line.slice(1);
    if (sign === "+") cur.new.push(text);
    else if (sign === "-") cur.old.push(text);
    else {
      cur.old.push(text);
      cur.new.push(text);
    }
  }
  return out;
}

/** A file's highlighted lines: per hunk, each side's markup fragments (null: that side plain). */
interface FileMarks {
  old: (string[] | null)[];
  new: (string[] | null)[];
}

/**
 * One hunk-annotated patch as table rows (one string: the row loop is plain concatenation, every
 * line escaped here), with the review hook's links and rows when given, and each line's
 * highlighted markup when `marks` has it (the sign stays plain text before it).
 */
async function patchRows(tick: Tick, patch: string, review: FileLines | null, marks: FileMarks | null = null): Promise<string> {
  let out = "";
  let oldNo = 0;
  let newNo = 0;
  let hunk = -1;
  let oi = 0;
  let ni = 0;
  // Why trusted markup: highlight-engine.ts's fragments are escaped text in class spans only.
  const text = (line: string, side: "old" | "new", i: number): string => {
    const m = marks?.[side][hunk]?.[i];
    return m === undefined ? escapeHtml(line) : escapeHtml(line.slice(0, 1)) + m;
  };
  const cell = review?.cell ?? null;
  const after = review?.after ?? null;
  const o = cell ? (n: number) => cell("old", n) : PLAIN_CELLS.o;
  const nw = cell ? (n: number) => cell("new", n) : PLAIN_CELLS.n;
  const lines = patchLines(patch);
  for (let i = 0; i < lines.length; i++) {
    if (i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1) await tick();
    const line = lines[i]!;
    const sign = line[0];
    if (sign === "@") {
      const header = HUNK.exec(line);
      if (header) {
        oldNo = Number(header[1]);
        newNo = Number(header[2]);
        hunk++;
        oi = 0;
        ni = 0;
        out += `<tr class="hunk"><td class="o"></td><td class="n"></td><td class="c">${escapeHtml(line)}</td></tr>`;
        continue;
      }
    }
    if (hunk < 0 && sign !== "\\") hunk = 0;
    let a: number | null = null;
    let b: number | null = null;
    if (sign === "+") {
      b = newNo++;
      out += `<tr class="add"><td class="o"></td>${nw(b)}<td class="c">${text(line, "new", ni++)}</td></tr>`;
    } else if (sign === "-") {
      a = oldNo++;
      out += `<tr class="del">${o(a)}<td class="n"></td><td class="c">${text(line, "old", oi++)}</td></tr>`;
    } else if (sign === "\\") {
      out += `<tr class="note"><td class="o"></td><td class="n"></td><td class="c">${escapeHtml(line)}</td></tr>`;
      continue;
    } else {
      a = oldNo++;
      b = newNo++;
      oi++;
      out += `<tr>${o(a)}${nw(b)}<td class="c">${text(line, "new", ni++)}</td></tr>`;
    }
    if (after) {
      const extra = after(a, b);
      if (extra) out += extra;
    }
  }
  return out;
}

function statusWord(f: DiffFile): string {
  const mode = f.old_mode && f.new_mode && f.old_mode !== f.new_mode && f.status === "modified" ? ` (mode ${f.old_mode} → ${f.new_mode})` : "";
  return f.status + mode;
}

/** What a page adds to the plain diff (the commit page passes none). */
export interface DiffOptions {
  /** The review hook: line-number links and rows after lines (the change's files tab). */
  lines?: DiffLines;
  /** Markup after a file's body (its conversations not on a drawn line). */
  fileExtra?: (f: DiffFile, index: number) => Html | null;
  /**
   * Collapsing (the files tab): once `full` patch lines are drawn, each later file (and any file
   * longer than `full`) shows its header and `collapsed(f, index)` (a "Load diff" link, its
   * conversations' count) instead of its rows, unless `open(f)` (a file asked for by name). What
   * a big change's page costs is then bounded by about twice `full`, not by the change.
   */
  collapse?: { full: number; open: (f: DiffFile) => boolean; collapsed: (f: DiffFile, index: number) => Html };
  /** Colours the drawn files' lines by language on the highlighting thread (`ctx.highlighter`; none: plain). */
  highlighter?: Highlighter;
  /**
   * Called when lines meant to be coloured are drawn plain for now (the thread was busy or slow):
   * a page that would carry an immutable validator must not, so the next view draws it coloured.
   */
  onPlain?: () => void;
}

/** Lines of a patch as the table draws them (one row each). */
function rowCount(patch: string): number {
  let n = 1;
  for (let i = patch.indexOf("\n"); i >= 0; i = patch.indexOf("\n", i + 1)) n++;
  return n;
}

/** How one file's body is drawn: its rows, collapsed, or a note that the page's line budget is spent. */
type Drawn = "full" | "collapsed" | "cut";

/**
 * A diff's highlighting for one view, found once and only when a file's rows are drawn afresh, and
 * its memo key (null: nothing is remembered).
 */
interface ViewMarks {
  key: string | null;
  load: () => Promise<DiffMarks>;
}

/** A view's highlighting, asked for on first need; remembered by `marksKey` when the highlighter remembers. */
function viewMarks(files: readonly DiffFile[], plan: readonly Drawn[], o: DiffOptions): ViewMarks {
  const key = o.highlighter?.recall && o.highlighter.remember ? marksKey(files, plan) : null;
  let found: Promise<DiffMarks> | null = null;
  return { key, load: () => (found ??= diffMarks(files, plan, o.highlighter, o.onPlain, key)) };
}

/**
 * A file's table rows: remembered ones when the view's highlighting is remembered by `marks.key`
 * and the review hook draws nothing of its own beyond keyed cells; else drawn (and remembered
 * when the highlighting was settled). Why: drawing 10,000 rows of spans was most of a warm
 * 50-file commit page's CPU (bench §53); a warm view now only concatenates.
 */
async function fileRows(tick: Tick, patch: string, at: number, review: FileLines | null, o: DiffOptions, marks: ViewMarks): Promise<string> {
  const h = o.highlighter;
  const cells = review === null || review.cell === null ? "-" : review.key === undefined ? null : `+${review.key}`;
  const key = marks.key !== null && cells !== null && review?.after == null ? `rows:${marks.key}:${at}:${cells}` : null;
  if (key !== null) {
    const hit = h!.recall!(key);
    if (typeof hit === "string") return hit;
  }
  const m = await marks.load();
  const rows = await patchRows(tick, patch, review, m.files.get(at) ?? null);
  // Only rows drawn from a settled answer are remembered (a busy or slow thread's plain rows are not).
  if (key !== null && m.settled) h!.remember!(key, flat(rows), 2 * rows.length);
  return rows;
}

/**
 * `s` in one buffer. Why: a string built by `+=` is a rope of every piece (a file's rows: thousands),
 * and each page that joins it walks them all again; reading a character makes JSC resolve the rope
 * in place, so a remembered string is copied whole by the next join (a third of a warm 50-file
 * commit page's diff drawing).
 */
function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}

/** One file's section: header, then its rows (or why not), then `fileExtra`. `at` is its index in the view's files. */
async function fileSection(tick: Tick, f: DiffFile, i: number, link: FileLink, o: DiffOptions, drawn: Drawn, marks: ViewMarks, at: number): Promise<Html> {
  const href = link(f);
  let body: Html;
  if (f.binary) body = html`<p class="pad muted">Binary file not shown.</p>`;
  else if (f.patch === null)
    body = html`<p class="pad muted">${f.patch_truncated ? "This file's diff is too large to show." : "No textual changes."}${href ? html` <a href="${href}">View the file</a>.` : ""}</p>`;
  else if (drawn === "cut")
    body = html`<p class="pad muted">Not shown: this page already shows ${PAGE_DIFF_LINES.toLocaleString("en")} changed lines.${href ? html` <a href="${href}">View the file</a>.` : ""}</p>`;
  else if (drawn === "collapsed" && o.collapse) body = o.collapse.collapsed(f, i);
  else {
    // Why trusted: patchRows escapes every line, and the review hook's cells and rows are escaped where they are built.
    const rows = trusted(await fileRows(tick, f.patch, at, o.lines?.(f, i) ?? null, o, marks));
    body = html`<div class="scroll"><table class="diff"${o.lines ? html` data-path="${f.path}" data-file="${i}"` : ""}><caption class="sr">Changes to ${f.path}</caption><thead class="sr"><tr><th scope="col">Old line</th><th scope="col">New line</th><th scope="col">Line</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  }
  return html`<section class="box${drawn === "collapsed" ? " collapsed" : ""}" id="diff-${i}" aria-labelledby="diff-${i}-h"><header><h3 class="inh path" id="diff-${i}-h">${f.path}</h3><span class="badge">${statusWord(f)}</span>${counts(f)}${href ? html`<a href="${href}">View</a>` : ""}</header>${body}${o.fileExtra?.(f, i) ?? ""}</section>`;
}

/**
 * The whole diff: a file summary, then every file. `o.lines` (a review page) makes line numbers
 * links and adds rows after lines; `o.fileExtra` adds markup after a file's table (its outdated
 * threads); `o.collapse` draws later files collapsed once enough lines are drawn.
 */
export async function diffView(d: FileDiffs, link: FileLink, o: DiffOptions = {}): Promise<Html> {
  let budget = PAGE_DIFF_LINES;
  let full = o.collapse?.full ?? Number.POSITIVE_INFINITY;
  let cut = 0;
  let collapsed = 0;
  const tick = slicer();
  const plan: Drawn[] = [];
  for (const f of d.files) {
    let drawn: Drawn = "full";
    if (f.patch !== null && !f.binary) {
      const lineCount = rowCount(f.patch);
      // Drawn in full while the budget lasts (the last one may overrun it); a file bigger than the
      // whole budget is collapsed wherever it is (a large diff is not drawn by default).
      if (o.collapse && (full <= 0 || lineCount > o.collapse.full) && !o.collapse.open(f)) {
        drawn = "collapsed";
        collapsed++;
      } else if (lineCount > budget) {
        drawn = "cut";
        cut++;
        budget = 0;
      } else {
        budget -= lineCount;
        full -= lineCount;
      }
    }
    plan.push(drawn);
  }
  const marks = viewMarks(d.files, plan, o);
  const files: Html[] = [];
  for (const [k, f] of d.files.entries()) {
    await tick();
    files.push(await fileSection(tick, f, k + 1, link, o, plan[k]!, marks, k));
  }
  const notes = [
    d.truncation,
    cut ? "later files' patches are not drawn on this page" : null,
    collapsed ? `${collapsed} ${collapsed === 1 ? "file is" : "files are"} collapsed to keep this page quick: "Load diff" shows one` : null,
  ].filter(Boolean);
  return html`<p><strong>${d.files.length}</strong> ${d.files.length === 1 ? "file" : "files"} changed, ${counts(d)}</p>
${notes.length ? html`<p class="warn" role="note">${notes.join("; ")}.</p>` : ""}
${d.files.length ? html`<details class="filelist" open><summary>Files</summary><ul class="list">${d.files.map((f, i) => html`<li><a href="#diff-${i + 1}" class="path">${f.path}</a> ${counts(f)}</li>`)}</ul></details>` : ""}
${files}`;
}

/** One file of the diff (1-based `index`) drawn in full, alone: what "Load diff" swaps in; null when there is no such file. */
export async function diffFileView(d: FileDiffs, index: number, link: FileLink, o: DiffOptions = {}): Promise<Html | null> {
  const f = d.files[index - 1];
  if (!f) return null;
  const drawn: Drawn = f.patch !== null && rowCount(f.patch) > PAGE_DIFF_LINES ? "cut" : "full";
  return await fileSection(slicer(), f, index, link, o, drawn, viewMarks([f], [drawn], o), 0);
}

/** A view's highlighted lines by file (index in the view's `files`), and whether they are final (not plain for now). */
interface DiffMarks {
  files: Map<number, FileMarks>;
  settled: boolean;
}

/**
 * The highlighted lines of the files drawn in full (by index in `files`), in one job of the
 * highlighting thread: each file with a known language, no line past HIGHLIGHT_LINE_LIMIT, while
 * DIFF_HIGHLIGHT_BUDGET lasts. Empty without a highlighter, or (not settled) when the thread
 * cannot answer in time.
 */
async function diffMarks(
  files: readonly DiffFile[],
  plan: readonly Drawn[],
  highlighter: Highlighter | undefined,
  onPlain: (() => void) | undefined,
  memoKey: string | null,
): Promise<DiffMarks> {
  const out = new Map<number, FileMarks>();
  if (!highlighter) return { files: out, settled: false };
  // Why a memo: on a warm page the parts' JSON (built, hashed, then the answer parsed again) cost
  // about a third of a 50-file commit page's CPU (bench §53). The key names each file's drawing,
  // path and patch (64-bit hash and length), all the marks depend on.
  if (memoKey) {
    const hit = highlighter.recall!(memoKey);
    if (hit instanceof Map) return { files: hit as Map<number, FileMarks>, settled: true };
  }
  let budget = DIFF_HIGHLIGHT_BUDGET;
  const parts: { code: string; language: string }[] = [];
  const owners: { file: number; hunks: number }[] = [];
  for (const [k, f] of files.entries()) {
    if (plan[k] !== "full" || f.binary || f.patch === null) continue;
    const language = languageOf(f.path);
    if (!language) continue;
    const cost = f.patch.length * (LANGUAGES[language].engine === "hljs" ? 4 : 1);
    if (cost > budget) continue;
    const hunks = hunkSides(f.patch);
    if (hunks.some((h) => h.old.some((l) => l.length > HIGHLIGHT_LINE_LIMIT) || h.new.some((l) => l.length > HIGHLIGHT_LINE_LIMIT))) continue;
    budget -= cost;
    owners.push({ file: k, hunks: hunks.length });
    for (const h of hunks) parts.push({ code: h.old.join("\n"), language }, { code: h.new.join("\n"), language });
  }
  if (!parts.length) return { files: out, settled: true };
  const lines = await highlightParts(highlighter, parts);
  if (!lines) {
    onPlain?.();
    return { files: out, settled: false };
  }
  let at = 0;
  let bytes = 0;
  for (const { file, hunks } of owners) {
    const m: FileMarks = { old: [], new: [] };
    for (let h = 0; h < hunks; h++, at += 2) {
      // A side whose fragment count differs from its line count would shift every line: plain.
      const [oldPart, newPart] = [parts[at]!, parts[at + 1]!];
      const [oldLines, newLines] = [lines[at] ?? null, lines[at + 1] ?? null];
      m.old.push(oldLines && oldLines.length === (oldPart.code ? oldPart.code.split("\n").length : 1) ? oldLines : null);
      m.new.push(newLines && newLines.length === (newPart.code ? newPart.code.split("\n").length : 1) ? newLines : null);
      for (const side of [oldLines, newLines]) for (const l of side ?? []) bytes += 2 * l.length + 16;
    }
    out.set(file, m);
  }
  // Only a settled answer is remembered (a busy or slow thread's plain page is not).
  if (memoKey) highlighter.remember!(memoKey, out, bytes);
  return { files: out, settled: true };
}

/** The memo key of a diff's marks: every file's drawing, binary flag, path and patch (hash and length). */
function marksKey(files: readonly DiffFile[], plan: readonly Drawn[]): string {
  let s = "";
  for (const [k, f] of files.entries()) {
    s += `${plan[k]}\u0000${f.binary ? 1 : 0}\u0000${f.path}\u0000${f.patch === null ? "-" : `${Bun.hash(f.patch).toString(36)}:${f.patch.length}`}\n`;
  }
  return `marks:${Bun.hash(s).toString(36)}:${s.length}`;
}

/**
 * "+3 −1" with words for screen readers. Why `&minus;`, not the character: U+2212 is past Latin-1,
 * and one such character makes a whole page a two-byte string (a 600 KB diff page then joins twice
 * the bytes and takes the slow way to UTF-8, ~0.2 ms a view); a page of ASCII code stays one-byte.
 */
function counts(c: { additions: number; deletions: number; binary?: boolean }): Html {
  if (c.binary) return html`<span class="muted">binary</span>`;
  return html`<span class="adds" title="${c.additions} additions">+${c.additions}</span> <span class="dels" title="${c.deletions} deletions">&minus;${c.deletions}</span>`;
}
