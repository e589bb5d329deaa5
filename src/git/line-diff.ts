// Line diffs for reviewers: Myers' O((N+M)D) shortest edit script and git's unified format.

/** One step of an edit script over lines: keep a line of both, delete from a, insert from b. */
export type Edit = { op: "keep"; a: number; b: number } | { op: "del"; a: number } | { op: "ins"; b: number };

/** Lines of a text, each keeping its "\n" (the last one may lack it). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const out: string[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) {
      if (start < text.length) out.push(text.slice(start));
      return out;
    }
    out.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
}

/**
 * A shortest edit script turning `a` into `b` (Myers 1986, greedy forward search), or null when
 * more than `maxEdits` edits would be needed (the caller then treats the file as rewritten).
 * Common prefix and suffix are stripped first: most reviews change a few lines of a long file.
 */
export function diffLines(a: string[], b: string[], maxEdits = 2_000): Edit[] | null {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const n = a.length - pre - suf;
  const m = b.length - pre - suf;
  const middle = myers(a, b, pre, n, m, maxEdits);
  if (middle === null) return null;
  const out: Edit[] = [];
  for (let i = 0; i < pre; i++) out.push({ op: "keep", a: i, b: i });
  out.push(...middle);
  for (let i = 0; i < suf; i++) out.push({ op: "keep", a: pre + n + i, b: pre + m + i });
  return out;
}

function myers(a: string[], b: string[], off: number, n: number, m: number, maxEdits: number): Edit[] | null {
  const out: Edit[] = [];
  if (n === 0 || m === 0) {
    for (let i = 0; i < n; i++) out.push({ op: "del", a: off + i });
    for (let j = 0; j < m; j++) out.push({ op: "ins", b: off + j });
    return out;
  }
  const max = Math.min(n + m, maxEdits);
  const size = 2 * max + 1;
  const v = new Int32Array(size);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice(max - d, max + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[max + k - 1]! < v[max + k + 1]!) ? v[max + k + 1]! : v[max + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[off + x] === b[off + y]) {
        x++;
        y++;
      }
      v[max + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return null;
  // Walk back through the saved frontiers (trace[d] holds V before step d, indices -d..d).
  let x = n;
  let y = m;
  const rev: Edit[] = [];
  for (let d = found; d > 0; d--) {
    const prev = trace[d]!;
    const at = (k: number) => prev[k + d]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const pk = down ? k + 1 : k - 1;
    const px = at(pk);
    const py = px - pk;
    while (x > (down ? px : px + 1) && y > (down ? py + 1 : py)) {
      x--;
      y--;
      rev.push({ op: "keep", a: off + x, b: off + y });
    }
    if (down) {
      y--;
      rev.push({ op: "ins", b: off + y });
    } else {
      x--;
      rev.push({ op: "del", a: off + x });
    }
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    rev.push({ op: "keep", a: off + x, b: off + y });
  }
  for (let i = rev.length - 1; i >= 0; i--) out.push(rev[i]!);
  return out;
}

/** Counts of inserted and deleted lines of a script. */
export function countEdits(edits: Edit[]): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const e of edits) {
    if (e.op === "ins") additions++;
    else if (e.op === "del") deletions++;
  }
  return { additions, deletions };
}

const NO_NEWLINE = "\\ No newline at end of file\n";

/** The hunks of a unified diff (`@@ -a,b +c,d @@` blocks) with `context` lines around changes. */
export function unifiedHunks(a: string[], b: string[], edits: Edit[], context = 3): string {
  const changed: number[] = [];
  edits.forEach((e, i) => {
    if (e.op !== "keep") changed.push(i);
  });
  if (!changed.length) return "";
  let out = "";
  let i = 0;
  while (i < changed.length) {
    let start = Math.max(0, changed[i]! - context);
    let j = i;
    while (j + 1 < changed.length && changed[j + 1]! - changed[j]! <= 2 * context) j++;
    const end = Math.min(edits.length - 1, changed[j]! + context);
    // Line numbers of the hunk on each side: the first line of a/b at or after `start`.
    let aStart = 0;
    let bStart = 0;
    for (let k = 0; k < start; k++) {
      const e = edits[k]!;
      if (e.op !== "ins") aStart++;
      if (e.op !== "del") bStart++;
    }
    let aLen = 0;
    let bLen = 0;
    let body = "";
    for (let k = start; k <= end; k++) {
      const e = edits[k]!;
      const line = e.op === "ins" ? b[e.b]! : a[e.a]!;
      const sign = e.op === "keep" ? " " : e.op === "del" ? "-" : "+";
      if (e.op !== "ins") aLen++;
      if (e.op !== "del") bLen++;
      body += sign + line;
      if (!line.endsWith("\n")) body += `\n${NO_NEWLINE}`;
    }
    const range = (s: number, len: number) => (len === 1 ? `${s + 1}` : `${len === 0 ? s : s + 1},${len}`);
    out += `@@ -${range(aStart, aLen)} +${range(bStart, bLen)} @@\n${body}`;
    start = end + 1;
    i = j + 1;
  }
  return out;
}

/** What one file's line diff comes to: counts, and the hunks when asked for (null when not, or when rewritten). */
export interface TextDiff {
  additions: number;
  deletions: number;
  /** Too different to diff line by line within the edit budget: counted as all lines removed and added. */
  rewritten: boolean;
  text: string | null;
}

/**
 * The line diff of two texts: counts, and the unified hunks when `wantPatch`. Pure (the
 * `git.lineDiff` thread task runs it for big files; services/git/diff.ts inline for small ones).
 */
export function diffTexts(aText: string, bText: string, wantPatch: boolean): TextDiff {
  const a = splitLines(aText);
  const b = splitLines(bText);
  const edits = diffLines(a, b);
  if (edits === null) return { additions: b.length, deletions: a.length, rewritten: true, text: null };
  const { additions, deletions } = countEdits(edits);
  return { additions, deletions, rewritten: false, text: wantPatch ? unifiedHunks(a, b, edits) : null };
}
