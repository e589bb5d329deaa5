// Errors and limits of the workflow expression language (`${{ … }}` and `if:`). An error carries
// the offset inside the text it was parsed from, so the workflow parser can name file, line and
// column. Why messages quote source and never data: an evaluated value may be a secret.

/** Bounds on hostile expressions (STYLE "Hostile input"); docs/api.md "Workflows" lists them. */
export const EXPR_LIMITS = Object.freeze({
  /** Characters of one expression (GitHub's limit). */
  length: 21_000,
  /** Nesting of groups, operators, indexes and calls (GitHub's limit). */
  depth: 50,
  /** Nodes visited and elements walked by one evaluation. */
  steps: 100_000,
  /** Characters of any string one evaluation builds (format, join, toJSON, a rendered template). */
  resultChars: 1024 * 1024,
  /** Nesting of a JSON text fromJSON accepts. */
  jsonDepth: 64,
  /** Arguments of one call. */
  args: 100,
});

/** A malformed expression or a failed evaluation, at `offset` (0-based) of the text given to the parser. */
export class ExprError extends Error {
  override readonly name = "ExprError";
  /** 1-based column of the offset (for a one-line text). Why not `column`: Bun sets that on every Error (the throwing source line's). */
  readonly col: number;

  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.col = offset + 1;
  }
}

/** The 1-based line and column of `offset` in `text` (for templates that span lines, like a `run` block). */
export function positionIn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  const end = Math.min(Math.max(0, offset), text.length);
  for (let i = text.indexOf("\n"); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: end - start + 1 };
}
