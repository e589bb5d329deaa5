// The tokens of GitHub's expression language (docs.github.com, "Evaluate expressions in
// workflows and actions"):
//
//   literals     null true false, numbers as JSON writes them plus a sign, `.5`, hex `0xff`,
//                octal `0o17`, `Infinity` and `NaN`; strings in single quotes ('' is a quote)
//   operators    ( ) [ ] . , ! < <= > >= == != && ||   and `*` (the object filter, after . or [)
//   identifiers  [A-Za-z_][A-Za-z0-9_-]*  (context names, properties, functions)
//
// There is no arithmetic, so `-` and `+` only ever start a number (and `a-b` is one identifier).
import { EXPR_LIMITS, ExprError } from "./errors.ts";

export type TokenKind = "num" | "str" | "ident" | "punct" | "end";

/** One token; `at` is its offset in the expression. */
export interface Token {
  kind: TokenKind;
  /** The punctuation or identifier text; the decoded string of a `str`. */
  text: string;
  /** The value of a `num`. */
  num: number;
  at: number;
}

const PUNCT2: ReadonlySet<string> = new Set(["<=", ">=", "==", "!=", "&&", "||"]);
const PUNCT1: ReadonlySet<string> = new Set(["(", ")", "[", "]", ".", ",", "!", "<", ">", "*"]);
const NUMBER = /[+-]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|Infinity|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;
const IDENT_CHAR = /[A-Za-z0-9_]/;

/** The value of a number literal's text (already matched by NUMBER). */
export function numberOf(text: string): number {
  const sign = text[0] === "-" ? -1 : 1;
  const body = text[0] === "-" || text[0] === "+" ? text.slice(1) : text;
  if (/^0[xX]/.test(body)) return sign * Number.parseInt(body.slice(2), 16);
  if (/^0[oO]/.test(body)) return sign * Number.parseInt(body.slice(2), 8);
  if (body === "Infinity") return sign * Infinity;
  return sign * Number(body);
}

/** Whether the previous token ends an operand (so `.` is a dereference, not the start of `.5`). */
function endsOperand(t: Token | undefined): boolean {
  if (!t) return false;
  if (t.kind === "num" || t.kind === "str" || t.kind === "ident") return true;
  return t.kind === "punct" && (t.text === ")" || t.text === "]" || t.text === "*");
}

/** The tokens of `src` (ending with an `end` token); throws ExprError at the first bad character. */
export function lex(src: string): Token[] {
  if (src.length > EXPR_LIMITS.length) throw new ExprError(`the expression is longer than ${EXPR_LIMITS.length} characters`, 0);
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    const prev = out[out.length - 1];
    if (c === "'") {
      let text = "";
      let j = i + 1;
      for (;;) {
        const q = src.indexOf("'", j);
        if (q < 0) throw new ExprError("the string is not closed with '", i);
        text += src.slice(j, q);
        if (src[q + 1] === "'") {
          text += "'";
          j = q + 2;
          continue;
        }
        j = q + 1;
        break;
      }
      out.push({ kind: "str", text, num: 0, at: i });
      i = j;
      continue;
    }
    if (c === '"') throw new ExprError("strings are written in single quotes ('…'), not double quotes", i);
    const startsNumber =
      (c >= "0" && c <= "9") || ((c === "-" || c === "+") && i + 1 < src.length) || (c === "." && !endsOperand(prev) && /[0-9]/.test(src[i + 1] ?? ""));
    if (startsNumber) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(src);
      if (!m) throw new ExprError(c === "-" || c === "+" ? `unexpected ${JSON.stringify(c)} (there is no arithmetic in expressions)` : "a malformed number", i);
      const end = i + m[0].length;
      if (end < src.length && IDENT_CHAR.test(src[end]!)) throw new ExprError("a malformed number", i);
      out.push({ kind: "num", text: m[0], num: numberOf(m[0]), at: i });
      i = end;
      continue;
    }
    IDENT.lastIndex = i;
    const id = IDENT.exec(src);
    if (id) {
      out.push({ kind: "ident", text: id[0], num: 0, at: i });
      i += id[0].length;
      continue;
    }
    const two = src.slice(i, i + 2);
    if (PUNCT2.has(two)) {
      out.push({ kind: "punct", text: two, num: 0, at: i });
      i += 2;
      continue;
    }
    if (PUNCT1.has(c)) {
      out.push({ kind: "punct", text: c, num: 0, at: i });
      i++;
      continue;
    }
    if (c === "=" || c === "&" || c === "|") throw new ExprError(`unexpected ${JSON.stringify(c)} (did you mean ${JSON.stringify(c + c)}?)`, i);
    throw new ExprError(`unexpected character ${JSON.stringify(c)}`, i);
  }
  out.push({ kind: "end", text: "", num: 0, at: src.length });
  return out;
}
