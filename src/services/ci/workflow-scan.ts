// A cheap look at a workflow file before the YAML parser sees it (issue 25 row 8; STYLE "Hostile
// input": limits on size, depth and time before any parsing).
//
// Why: the parser's cost grows with what the file holds, not with its bytes: 40 KB of nested `[`
// took 2.7 s of CPU (its lexer alone a quarter of a second), ten such files in one push stalled
// the server 8.4 s; a 10,000-job `needs` chain in 506 KB costs 0.6–1.5 s of a thread, 520,000
// empty lines 1.5 s, a 500 KB flow list of 166,000 entries 1.3 s (bench/README §37). Long lines
// cost nothing (a 500 KB scalar parses in 2 ms), so they are not limited. Past the parse's time
// limit the answer would depend on the machine's load; this scan answers the same every time.
//
// One pass over the characters with a few counters: lines, entries (mapping keys and list
// items), anchors and aliases, the keys under the top-level `jobs:`, and the deepest nesting
// (flow collections `[`/`{`, indentation, compact block sequences `- - - x`). It follows what
// YAML makes text: block scalars (`run: |` and their lines), quoted scalars (across lines),
// plain scalars and their continuation lines, comments; so `*`, `&`, `- ` or `jobs:` inside a
// script or a string are not counted. Where YAML is ambiguous it counts low, so a real workflow
// is never refused by it (bench/workflows.ts: the 265 files of the corpus, and the fixtures); what
// it misses is still bounded by the parse's time limit on a worker thread.

/** The deepest nesting a workflow may have (real ones nest 6 to 10 levels). */
export const WORKFLOW_MAX_DEPTH = 64;

/** What the scan refuses past (WORKFLOW_LIMITS holds the values the parser uses). */
export interface ScanLimits {
  /** Nesting levels. */
  depth: number;
  /** Keys under the top-level `jobs:`. */
  jobs: number;
  /** Anchors (`&a`) and aliases (`*a`) together. */
  anchors: number;
  /** Mapping keys and list items. */
  entries: number;
  /** Lines of the file. */
  lines: number;
}

/** Why the scan refuses a file: the limit passed, where (1-based line and column) and the count there. */
export interface ScanProblem {
  kind: keyof ScanLimits;
  line: number;
  col: number;
  count: number;
  limit: number;
}

/** The refusal's text (the parser prefixes `path:line:column: `). */
export function scanMessage(p: ScanProblem): string {
  switch (p.kind) {
    case "depth":
      return `the file nests deeper than ${p.limit} levels`;
    case "jobs":
      return `more than ${p.limit} jobs`;
    case "anchors":
      return `more than ${p.limit} YAML anchors and aliases`;
    case "entries":
      return `more than ${p.limit} mapping keys and list items`;
    case "lines":
      return `more than ${p.limit} lines`;
  }
}

const NO_LIMIT = Number.POSITIVE_INFINITY;

/** Where the scan found nesting deeper than `max`: 1-based line and column; null when within it. */
export function yamlTooDeep(text: string, max: number = WORKFLOW_MAX_DEPTH): { line: number; col: number; depth: number } | null {
  const p = scanWorkflow(text, { depth: max, jobs: NO_LIMIT, anchors: NO_LIMIT, entries: NO_LIMIT, lines: NO_LIMIT });
  return p ? { line: p.line, col: p.col, depth: p.count } : null;
}

const isBlank = (c: string | undefined) => c === undefined || c === " " || c === "\t";
const FLOW_END: ReadonlySet<string | undefined> = new Set([undefined, " ", "\t", ",", "]", "}"]);

/** What the scan counted in a whole file (its tests and fuzz target compare them with the parser's). */
export type ScanCounts = Record<keyof ScanLimits, number>;

/** The first limit `text` passes, in file order; null when it is within all of them. */
export function scanWorkflow(text: string, limits: ScanLimits): ScanProblem | null {
  return scan(text, limits, null);
}

/** The counts of a whole file, no limit applied: lines, entries, anchors and aliases, keys under `jobs:`, the deepest nesting. */
export function scanCounts(text: string): ScanCounts {
  const counts: ScanCounts = { depth: 0, jobs: 0, anchors: 0, entries: 0, lines: 0 };
  scan(text, { depth: NO_LIMIT, jobs: NO_LIMIT, anchors: NO_LIMIT, entries: NO_LIMIT, lines: NO_LIMIT }, counts);
  return counts;
}

function scan(text: string, limits: ScanLimits, counts: ScanCounts | null): ScanProblem | null {
  /** Indentations of the open block levels (a stack, innermost last). */
  const indents: number[] = [];
  let flow = 0;
  /** Inside a quoted scalar that continues on the next line: its quote character. */
  let quote: '"' | "'" | null = null;
  /** A block scalar's lines run while they are indented deeper than this (-1: none). */
  let blockScalarOver = -1;
  /** A plain scalar ended the last line: lines indented deeper than this continue it (-1: none). */
  let plainOver = -1;
  /** In a flow collection: the next character starts a node; starts an entry. */
  let flowNode = false;
  let flowEntry = false;
  /** In a flow collection: the last token was JSON-like (a quoted scalar, `]`, `}`), so `:` right after it separates. */
  let flowJson = false;
  let entries = 0;
  let anchors = 0;
  /** The top-level `jobs:`: 0 not met, 1 met (its value not yet seen), 2 a block mapping at jobsIndent, 3 a flow mapping at flow level 1, 4 done. */
  let jobsState = 0;
  let jobsIndent = -1;
  let jobs = 0;
  let lineNo = 0;
  let depth = 0;
  let pos = 0;
  const problem = (kind: keyof ScanLimits, col: number, count: number): ScanProblem => ({ kind, line: lineNo, col, count, limit: limits[kind] });
  while (pos < text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    lineNo++;
    if (lineNo > limits.lines) return problem("lines", 1, lineNo);
    let line = text.slice(pos, end);
    pos = end + 1;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    let i = 0;
    while (i < line.length && line.charCodeAt(i) === 0x20) i++;
    const empty = i === line.length || (line[i] === "\t" && line.trim() === "");
    const comment = !empty && line[i] === "#";
    if (blockScalarOver >= 0) {
      if (empty || i > blockScalarOver) continue;
      blockScalarOver = -1;
    }
    if (quote === null && (empty || comment)) {
      // A comment line ends a plain scalar (it cannot continue past one).
      if (comment) plainOver = -1;
      continue;
    }
    let k: number = quote === null ? i : 0;
    /** The next character starts a node in block context (after the indentation, `- `, `key: `, an anchor or a tag). */
    let valueStart = false;
    /** Where the current block token started, the key before `: ` and the innermost `- ` on this line. */
    let tokenCol = i;
    let keyCol = -1;
    let dashCol = -1;
    /** A plain scalar runs at the end of this line: its owner's column (the key's, the `- `'s, else its own). */
    let plainOwner = -1;
    /** This block line is at the indentation of the jobs mapping's keys. */
    let jobsLine = false;
    if (quote === null && flow === 0) {
      if (plainOver >= 0) {
        const over = plainOver;
        plainOver = -1;
        if (i > over) {
          // A continuation line of a plain scalar is its text (a comment ends it).
          if (!/[ \t]#/.test(line)) plainOver = over;
          continue;
        }
      }
      // A new block line: close the levels it is not inside, open one for it.
      while (indents.length && indents[indents.length - 1]! >= i) indents.pop();
      indents.push(i);
      if (jobsState === 1) {
        if (i === 0) jobsState = 4;
        else if (line[i] !== "{") {
          jobsState = 2;
          jobsIndent = i;
        }
      } else if (jobsState === 2 && i < jobsIndent) jobsState = 4;
      // An entry of the jobs mapping: a key at its indentation (counted at its `: `), or a `- ` there.
      jobsLine = jobsState === 2 && i === jobsIndent;
      if (jobsLine && line[i] === "-" && isBlank(line[i + 1]) && ++jobs > limits.jobs) return problem("jobs", i + 1, jobs);
      // Compact sequence entries on one line (`- - - x`) each open a level.
      while (line[k] === "-" && isBlank(line[k + 1])) {
        if (++entries > limits.entries) return problem("entries", k + 1, entries);
        dashCol = k;
        indents.push(k + 1);
        k += 2;
        while (line[k] === " ") k++;
      }
      if (indents.length > depth) depth = indents.length;
      if (indents.length > limits.depth) return problem("depth", k + 1, indents.length);
      valueStart = true;
      tokenCol = k;
    }
    for (; k < line.length; k++) {
      const c: string = line[k]!;
      if (quote !== null) {
        if (c === quote) {
          if (quote === "'" && line[k + 1] === "'") k++;
          else {
            quote = null;
            flowJson = flow > 0;
          }
        } else if (c === "\\" && quote === '"') k++;
        continue;
      }
      if (c === "#" && (k === 0 || isBlank(line[k - 1]))) {
        plainOwner = -1;
        break;
      }
      if (c === " " || c === "\t") continue;
      if (flow > 0) {
        const json = flowJson;
        flowJson = false;
        if (c === ",") {
          flowNode = flowEntry = true;
          continue;
        }
        if (c === "]" || c === "}") {
          flow--;
          flowNode = flowEntry = false;
          flowJson = true;
          if (jobsState === 3 && flow === 0) jobsState = 4;
          if (flow === 0) plainOwner = -1;
          continue;
        }
        if (c === ":" && (FLOW_END.has(line[k + 1]) || json)) {
          flowNode = true;
          continue;
        }
        if (c === "?" && flowNode && isBlank(line[k + 1])) continue;
        if (flowEntry) {
          flowEntry = false;
          if (++entries > limits.entries) return problem("entries", k + 1, entries);
          if (jobsState === 3 && flow === 1 && ++jobs > limits.jobs) return problem("jobs", k + 1, jobs);
        }
        const node = flowNode;
        flowNode = false;
        if (c === "[" || c === "{") {
          // Also mid-scalar: a flow scalar cannot hold them, so nesting is the parser's reading too.
          flow++;
          flowNode = flowEntry = true;
          if (indents.length + flow > depth) depth = indents.length + flow;
          if (indents.length + flow > limits.depth) return problem("depth", k + 1, indents.length + flow);
          continue;
        }
        if (!node) continue; // inside a plain scalar or after a node: text
        if (c === '"' || c === "'") {
          quote = c;
          continue;
        }
        if (c === "&" || c === "!" || c === "*") {
          if (c !== "!" && ++anchors > limits.anchors) return problem("anchors", k + 1, anchors);
          while (k + 1 < line.length && !FLOW_END.has(line[k + 1])) k++;
          // An anchor or a tag comes before the node it names; an alias is the node.
          flowNode = c !== "*";
        }
        continue;
      }
      if (valueStart) {
        valueStart = false;
        tokenCol = k;
        if (c === "[" || c === "{") {
          flow = 1;
          flowNode = flowEntry = true;
          flowJson = false;
          if (jobsState === 1) jobsState = 3;
          if (indents.length + flow > depth) depth = indents.length + flow;
          if (indents.length + flow > limits.depth) return problem("depth", k + 1, indents.length + flow);
          continue;
        }
        if (c === '"' || c === "'") {
          quote = c;
          continue;
        }
        if (c === "|" || c === ">") {
          // Its lines are indented deeper than the mapping or sequence that holds it.
          blockScalarOver = keyCol >= 0 ? keyCol : dashCol >= 0 ? dashCol : indents[indents.length - 1]!;
          plainOwner = -1;
          break;
        }
        if (c === "&" || c === "!" || c === "*") {
          if (c !== "!" && ++anchors > limits.anchors) return problem("anchors", k + 1, anchors);
          while (k + 1 < line.length && !isBlank(line[k + 1])) k++;
          // An anchor or a tag comes before the value it names.
          valueStart = c !== "*";
          continue;
        }
        if (c === "?" && isBlank(line[k + 1])) {
          valueStart = true;
          continue;
        }
        // A plain scalar starts: a key, or a value that may continue on deeper lines.
        plainOwner = keyCol >= 0 ? keyCol : dashCol >= 0 ? dashCol : k - 1;
      }
      // `key: value`: what follows the separator is a value (a flow collection, a block scalar…).
      if (c === ":" && isBlank(line[k + 1])) {
        if (++entries > limits.entries) return problem("entries", tokenCol + 1, entries);
        if (jobsState === 0 && tokenCol === 0 && indents.length === 1 && /^(jobs|"jobs"|'jobs')\s*$/.test(line.slice(0, k))) jobsState = 1;
        else if (jobsLine && keyCol < 0 && tokenCol === i && ++jobs > limits.jobs) return problem("jobs", i + 1, jobs);
        keyCol = tokenCol;
        plainOwner = -1;
        valueStart = true;
      }
    }
    if (quote === null && flow === 0 && plainOwner >= 0) plainOver = plainOwner;
  }
  if (counts) Object.assign(counts, { depth, jobs, anchors, entries, lines: lineNo });
  return null;
}
