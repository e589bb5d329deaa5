// The ```suggestion block of a line comment (issue 28): the replacement text a reviewer proposes for
// the commented lines. Fences follow CommonMark §4.5 (fenced code blocks):
//   - an opening fence is at least three backticks or three tildes, indented 0–3 spaces, followed by an
//     info string; a backtick fence's info string may not itself contain a backtick;
//   - the closing fence uses the same character, at least as many of it, indented 0–3 spaces, followed
//     only by spaces or tabs; a fence that is never closed runs to the end of the document;
//   - up to the opening fence's indentation is removed from each content line (tabs as 4-column stops).
// A block is a suggestion when its info string is exactly `suggestion` (surrounding spaces ignored, as
// GitHub does). Fences of any other kind are still tracked so that a ```suggestion shown inside a longer
// or other fence is content, not a suggestion. Line endings: LF, CRLF and lone CR all end a line.
// Only top-level fences count (a fence inside a block quote or list item is not recognised).

/** The longest body parsed (characters, the comment body limit); longer ones are refused before any work. */
export const SUGGESTION_BODY_MAX = 65_536;

/**
 * The suggestion of a comment body. `text` is the replacement, each line ending in "\n" ("" = delete the
 * lines, "\n" = one empty line); null = no suggestion block; `error` = a body that may not be posted
 * (two blocks, or too long).
 */
export type ParsedSuggestion = { text: string } | null | { error: string };

const OPENING = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const CLOSING = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/** Parses the one ```suggestion block of `body`, if any. Linear in the body's length. */
export function parseSuggestion(body: string): ParsedSuggestion {
  if (body.length > SUGGESTION_BODY_MAX) return { error: `a comment body is at most ${SUGGESTION_BODY_MAX} characters` };
  const lines = body.split(/\r\n|\n|\r/);
  // A final line ending does not start another (empty) line.
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  let found: string[] | null = null;
  // The open fence, if inside one: its character, length, indentation, and whether it is a suggestion.
  let open: { char: string; length: number; indent: number; content: string[] | null } | null = null;
  for (const line of lines) {
    if (open) {
      const close = CLOSING.exec(line);
      if (close && close[1]![0] === open.char && close[1]!.length >= open.length) {
        open = null;
        continue;
      }
      if (open.content) open.content.push(stripIndent(line, open.indent));
      continue;
    }
    const m = OPENING.exec(line);
    if (!m) continue;
    const fence = m[2]!;
    const info = m[3]!;
    if (fence[0] === "`" && info.includes("`")) continue; // not a fence (an inline code span)
    const isSuggestion = info.trim() === "suggestion";
    if (isSuggestion && found) return { error: "a comment may hold one suggestion block" };
    const content: string[] | null = isSuggestion ? [] : null;
    if (content) found = content;
    open = { char: fence[0]!, length: fence.length, indent: m[1]!.length, content };
  }
  if (!found) return null;
  return { text: found.map((l) => `${l}\n`).join("") };
}

/** Removes up to `n` columns of leading indentation (CommonMark: the opening fence's; a tab stops at multiples of 4). */
function stripIndent(line: string, n: number): string {
  let col = 0;
  let i = 0;
  while (col < n && i < line.length) {
    if (line[i] === " ") {
      col++;
      i++;
    } else if (line[i] === "\t") {
      const width = 4 - (col % 4);
      if (col + width > n) return " ".repeat(col + width - n) + line.slice(i + 1);
      col += width;
      i++;
    } else break;
  }
  return line.slice(i);
}

/** One replacement: lines `start`..`end` (1-based, inclusive) become `text` (a parsed suggestion's text). */
export interface LineEdit {
  start: number;
  end: number;
  text: string;
}

/** Lines of a text, each keeping its line ending ("\n" or "\r\n"; the last may have none). */
export function textLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Two runs of lines are the same lines: equal, or equal but for the final line ending (a file's last line may lack it). */
export function sameLines(a: string, b: string): boolean {
  return a === b || a.replace(/\r?\n$/, "") === b.replace(/\r?\n$/, "");
}

/** The line ending a file mostly uses: CRLF when most of its line endings are. */
export function lineEndingOf(lines: string[]): "\n" | "\r\n" {
  let crlf = 0;
  let lf = 0;
  for (const l of lines) {
    if (l.endsWith("\r\n")) crlf++;
    else if (l.endsWith("\n")) lf++;
  }
  return crlf > lf ? "\r\n" : "\n";
}

/**
 * `text` with every edit applied (ranges must not overlap; applied bottom-up, so each keeps its
 * line numbers). Replacement lines take the file's line ending; a file without a final newline
 * keeps that state.
 */
export function spliceLines(text: string, edits: LineEdit[]): string {
  const lines = textLines(text);
  const eol = lineEndingOf(lines);
  const finalNewline = text === "" || text.endsWith("\n");
  const sorted = [...edits].sort((a, b) => b.start - a.start);
  for (const e of sorted) {
    const replacement =
      e.text === ""
        ? []
        : e.text
            .slice(0, -1)
            .split("\n")
            .map((l) => l + eol);
    lines.splice(e.start - 1, e.end - e.start + 1, ...replacement);
  }
  let out = lines.join("");
  if (!finalNewline && out.endsWith("\n")) out = out.slice(0, out.endsWith("\r\n") ? -2 : -1);
  return out;
}
