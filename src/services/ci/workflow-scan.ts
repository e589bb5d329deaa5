// A cheap look at a workflow file's nesting before the YAML parser sees it (issue 25 row 8).
//
// Why: the parser's cost grows faster than the file with nesting: 40 KB of nested `[` took 2.7 s
// of CPU (its lexer alone a quarter of a second), and ten such files in one push stalled the
// server 8.4 s. This scan is one pass over the characters with a few counters. It estimates the
// deepest nesting from what makes YAML nest: flow collections (`[`, `{`), indentation and compact
// block sequences (`- - - x`). It errs low where YAML is ambiguous (a `[` inside a plain scalar is
// text, not nesting), so a real workflow is never refused by it; what it misses is still bounded
// by the parse's time limit on a worker thread.

/** The deepest nesting a workflow may have (real ones nest 6 to 10 levels). */
export const WORKFLOW_MAX_DEPTH = 64;

/** Where the scan found nesting deeper than `max`: 1-based line and column; null when within it. */
export function yamlTooDeep(text: string, max: number = WORKFLOW_MAX_DEPTH): { line: number; col: number; depth: number } | null {
  /** Indentations of the open block levels (a stack, innermost last). */
  const indents: number[] = [];
  let flow = 0;
  /** Inside a quoted scalar that continues on the next line: its quote character. */
  let quote: '"' | "'" | null = null;
  /** A block scalar's content runs while lines are indented deeper than this (-1: none). */
  let blockScalarOver = -1;
  let lineNo = 0;
  let pos = 0;
  while (pos <= text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    lineNo++;
    const line = text.slice(pos, end);
    pos = end + 1;
    let i = 0;
    while (i < line.length && line.charCodeAt(i) === 0x20) i++;
    const blank = i === line.length || line[i] === "#" || (line[i] === "\r" && i === line.length - 1);
    if (blockScalarOver >= 0) {
      if (blank || i > blockScalarOver) continue;
      blockScalarOver = -1;
    }
    if (blank && quote === null) continue;
    let k = i;
    let valueStart = true;
    if (quote === null && flow === 0) {
      // A new block line: close the levels it is not inside, open one for it.
      while (indents.length && indents[indents.length - 1]! >= i) indents.pop();
      indents.push(i);
      // Compact sequence entries on one line (`- - - x`) each open a level.
      while (line[k] === "-" && (line[k + 1] === " " || k + 1 === line.length)) {
        indents.push(k + 1);
        k += 2;
        while (line[k] === " ") k++;
      }
      if (indents.length > max) return { line: lineNo, col: k + 1, depth: indents.length };
    }
    for (; k < line.length; k++) {
      const c = line[k]!;
      if (quote !== null) {
        if (c === quote) {
          if (quote === "'" && line[k + 1] === "'") k++;
          else quote = null;
        } else if (c === "\\" && quote === '"') k++;
        continue;
      }
      if (c === "#" && (k === 0 || line[k - 1] === " " || line[k - 1] === "\t")) break;
      if (c === " " || c === "\t") continue;
      if (flow > 0) {
        if (c === "[" || c === "{") {
          flow++;
          if (indents.length + flow > max) return { line: lineNo, col: k + 1, depth: indents.length + flow };
        } else if (c === "]" || c === "}") flow--;
        else if (c === '"' || c === "'") quote = c;
        continue;
      }
      if (valueStart) {
        valueStart = false;
        if (c === "[" || c === "{") {
          flow = 1;
          if (indents.length + flow > max) return { line: lineNo, col: k + 1, depth: indents.length + flow };
          continue;
        }
        if (c === '"' || c === "'") {
          quote = c;
          continue;
        }
        if (c === "|" || c === ">") {
          blockScalarOver = indents.length ? indents[indents.length - 1]! : 0;
          break;
        }
        if (c === "&" || c === "!") {
          // An anchor or a tag comes before the value it names.
          while (k + 1 < line.length && line[k + 1] !== " ") k++;
          valueStart = true;
          continue;
        }
      }
      // `key: value`: what follows the separator is a value (a flow collection, a block scalar…).
      if (c === ":" && (k + 1 === line.length || line[k + 1] === " " || line[k + 1] === "\t")) valueStart = true;
    }
  }
  return null;
}
