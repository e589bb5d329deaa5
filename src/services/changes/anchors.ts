// Where a line comment sits, and where it sits after a push (issue 28 plan §3.1 "Outdated").
// Pure functions of text (the `changes.mapRanges` and `changes.hunkLines` thread tasks run them
// on big files): a range of lines maps through git's kind of line diff (Myers, git/line-diff.ts)
// to the same lines in the new text, or to null when an edit touched it.
import { diffLines, splitLines, type Edit } from "../../git/line-diff.ts";

/** A range of lines, 1-based and inclusive. */
export interface LineRange {
  start: number;
  end: number;
}

/** How many edits a mapping diff may need before the file counts as rewritten (every range outdated). */
const MAX_EDITS = 5_000;

/**
 * The range `[start, end]` of `oldLines` in `newLines`, or null when an edit touches it: a line
 * of it deleted or replaced, or a line inserted strictly inside it. Insertions just before or
 * after it only shift it. Equal texts map to themselves.
 */
export function mapRange(oldLines: string[], newLines: string[], start: number, end: number, edits?: Edit[] | null): LineRange | null {
  if (start < 1 || end < start || end > oldLines.length) return null;
  const script = edits === undefined ? diffLines(oldLines, newLines, MAX_EDITS) : edits;
  if (script === null) return null;
  return mapWith(script, start, end);
}

/** `mapRange` over an edit script already computed. */
function mapWith(edits: Edit[], start: number, end: number): LineRange | null {
  let from = -1;
  let to = -1;
  for (const e of edits) {
    if (e.op === "keep") {
      if (e.a === start - 1) from = e.b;
      if (e.a === end - 1) {
        to = e.b;
        break;
      }
    } else if (e.op === "del") {
      if (e.a >= start - 1 && e.a <= end - 1) return null;
    } else if (from >= 0) {
      // An insertion after the range's first line and before its last: inside it.
      return null;
    }
  }
  return from >= 0 && to >= 0 ? { start: from + 1, end: to + 1 } : null;
}

/** Every range of `ranges` mapped from `oldText` to `newText` (one diff for all: the re-anchor job's unit of work). */
export function mapRanges(oldText: string, newText: string, ranges: LineRange[]): (LineRange | null)[] {
  if (oldText === newText) return ranges.map((r) => ({ ...r }));
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const edits = diffLines(a, b, MAX_EDITS);
  return ranges.map((r) => (r.start < 1 || r.end < r.start || r.end > a.length || edits === null ? null : mapWith(edits, r.start, r.end)));
}

/** Lines of context a comment may sit in around a change, as a unified diff shows them. */
export const HUNK_CONTEXT = 3;

/**
 * The lines of `side` a comment may sit on in the diff from `oldText` to `newText`: a changed line
 * or within HUNK_CONTEXT lines of one (the lines a reviewer sees in a hunk), as a 1-based byte map
 * (index 0 unused); null when the diff is too large to compute (then every existing line may).
 */
export function hunkLines(oldText: string, newText: string, side: "old" | "new"): Uint8Array | null {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const count = side === "new" ? b.length : a.length;
  const edits = diffLines(a, b, MAX_EDITS);
  if (edits === null) return null;
  const near = new Uint8Array(count + 1);
  const markRange = (from: number, to: number) => {
    for (let i = Math.max(1, from); i <= Math.min(count, to); i++) near[i] = 1;
  };
  /** A changed line of this side. */
  const mark = (p: number) => markRange(p - HUNK_CONTEXT, p + HUNK_CONTEXT);
  /** An edit of the other side sitting after line `p` of this side: the context lines around the gap. */
  const markGap = (p: number) => markRange(p - HUNK_CONTEXT + 1, p + HUNK_CONTEXT);
  let ai = 0;
  let bi = 0;
  for (const e of edits) {
    if (e.op === "keep") {
      ai = e.a + 1;
      bi = e.b + 1;
    } else if (e.op === "del") {
      if (side === "old") mark(e.a + 1);
      else markGap(bi);
      ai = e.a + 1;
    } else {
      if (side === "new") mark(e.b + 1);
      else markGap(ai);
      bi = e.b + 1;
    }
  }
  return near;
}

/** Whether every line of `r` may take a comment, given `hunkLines`' map and the side's line count. */
export function rangeInHunks(near: Uint8Array | null, count: number, r: LineRange): boolean {
  if (r.start < 1 || r.end > count || r.end < r.start) return false;
  if (near === null) return true;
  for (let i = r.start; i <= r.end; i++) if (!near[i]) return false;
  return true;
}

/** For each range on `side` of the diff from `oldText` to `newText`: whether it may take a comment (`hunkLines`). */
export function nearHunks(oldText: string, newText: string, side: "old" | "new", ranges: LineRange[]): boolean[] {
  const near = hunkLines(oldText, newText, side);
  const count = splitLines(side === "new" ? newText : oldText).length;
  return ranges.map((r) => rangeInHunks(near, count, r));
}
