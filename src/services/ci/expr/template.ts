// Strings with `${{ expression }}` in them, and `if:` conditions.
//
// A template's expression runs from `${{` to the first `}}` outside a single-quoted string. A
// template that is exactly one expression has that expression's value (so `timeout-minutes:
// ${{ matrix.t }}` is a number); any other template is a string. A condition (`if:`) is an
// expression with or without `${{ }}` around it; one that calls none of success(), failure(),
// always(), cancelled() means `success() && (…)`, as on GitHub. Offsets in errors are offsets
// in the text given here.
import { EXPR_LIMITS, ExprError } from "./errors.ts";
import { evaluate, type EvalEnv } from "./eval.ts";
import { parseExpression, type Expr, type ParseOptions } from "./parse.ts";
import { toText, truthy, type Value } from "./values.ts";

/** A piece of a template: literal text, or an expression with the offset of its `${{`. */
export type TemplatePart = string | { expr: Expr; at: number };

/** A parsed template. */
export interface Template {
  parts: TemplatePart[];
  /** Contexts its expressions read (lower case). */
  contexts: ReadonlySet<string>;
}

/** Characters of a template (a workflow string; the file's own size bounds it first). */
export const TEMPLATE_MAX_CHARS = EXPR_LIMITS.resultChars;

/** Whether `text` holds an expression at all (the cheap test before parsing). */
export function hasExpression(text: string): boolean {
  return text.includes("${{");
}

/** The offset of the `}}` closing the expression that starts at `from` (after `${{`), or -1. */
function closing(text: string, from: number): number {
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x27) inString = !inString;
    else if (!inString && c === 0x7d && text.charCodeAt(i + 1) === 0x7d) return i;
  }
  return -1;
}

/** Re-raises an error of the expression that starts at `base` as an error at its offset in the whole text. */
function shifted(e: unknown, base: number): never {
  if (e instanceof ExprError) throw new ExprError(e.message, base + e.offset);
  throw e;
}

/** Parses a template; throws ExprError at the offset of the first problem. */
export function parseTemplate(text: string, opts: ParseOptions = {}): Template {
  if (text.length > TEMPLATE_MAX_CHARS) throw new ExprError(`the text is longer than ${TEMPLATE_MAX_CHARS} characters`, 0);
  const parts: TemplatePart[] = [];
  const contexts = new Set<string>();
  let from = 0;
  for (;;) {
    const open = text.indexOf("${{", from);
    if (open < 0) break;
    const close = closing(text, open + 3);
    if (close < 0) throw new ExprError("the expression opened here is not closed with }}", open);
    const inner = text.slice(open + 3, close);
    if (inner.trim() === "") throw new ExprError("the expression is empty", open);
    let expr: Expr;
    try {
      expr = parseExpression(inner, opts);
    } catch (e) {
      shifted(e, open + 3);
    }
    if (open > from) parts.push(text.slice(from, open));
    parts.push({ expr, at: open + 3 });
    for (const c of expr.contexts) contexts.add(c);
    from = close + 2;
  }
  if (from < text.length || parts.length === 0) parts.push(text.slice(from));
  return { parts, contexts };
}

/** The value of a template: the expression's own value when the template is exactly one expression, else the string. */
export function templateValue(t: Template, env: EvalEnv): Value {
  if (t.parts.length === 1 && typeof t.parts[0] !== "string") {
    const part = t.parts[0]!;
    try {
      return evaluate(part.expr, env);
    } catch (e) {
      shifted(e, part.at);
    }
  }
  return renderTemplate(t, env);
}

/** A template as a string (each expression's value as text). */
export function renderTemplate(t: Template, env: EvalEnv): string {
  let out = "";
  for (const part of t.parts) {
    if (typeof part === "string") out += part;
    else {
      let v: Value;
      try {
        v = evaluate(part.expr, env);
      } catch (e) {
        shifted(e, part.at);
      }
      out += toText(v);
    }
    if (out.length > EXPR_LIMITS.resultChars) throw new ExprError(`the text would be longer than ${EXPR_LIMITS.resultChars} characters`, 0);
  }
  return out;
}

/** A parsed `if:` condition. */
export interface Condition {
  /** The condition as written. */
  source: string;
  template: Template;
  /** No status function is called: the condition means `success() && (…)`. */
  implicitSuccess: boolean;
  contexts: ReadonlySet<string>;
}

/** Whether the whole trimmed text is one `${{ … }}`. */
function wholeExpression(text: string): { inner: string; at: number } | null {
  const start = text.length - text.trimStart().length;
  const trimmed = text.trim();
  if (!trimmed.startsWith("${{") || !trimmed.endsWith("}}")) return null;
  const close = closing(trimmed, 3);
  if (close !== trimmed.length - 2) return null;
  return { inner: trimmed.slice(3, close), at: start + 3 };
}

/**
 * Parses an `if:` condition (status functions allowed); throws ExprError at the offset of the
 * problem in `text`. A condition that mixes text and `${{ }}` is a string (true unless empty), as
 * on GitHub.
 */
export function parseCondition(text: string, opts: Omit<ParseOptions, "status"> = {}): Condition {
  const po: ParseOptions = { ...opts, status: true };
  if (text.length > EXPR_LIMITS.length) throw new ExprError(`the condition is longer than ${EXPR_LIMITS.length} characters`, 0);
  let template: Template;
  if (text.trim() === "") throw new ExprError("the condition is empty", 0);
  const whole = wholeExpression(text);
  if (whole) {
    let expr: Expr;
    try {
      expr = parseExpression(whole.inner, po);
    } catch (e) {
      shifted(e, whole.at);
    }
    template = { parts: [{ expr, at: whole.at }], contexts: expr.contexts };
  } else if (hasExpression(text)) template = parseTemplate(text, po);
  else {
    const expr = parseExpression(text, po);
    template = { parts: [{ expr, at: 0 }], contexts: expr.contexts };
  }
  const usesStatus = template.parts.some((p) => typeof p !== "string" && p.expr.usesStatus);
  return { source: text, template, implicitSuccess: !usesStatus, contexts: template.contexts };
}

/** Whether a condition holds; `env.status` is required (a condition always has one). */
export function evaluateCondition(c: Condition, env: EvalEnv & { status: NonNullable<EvalEnv["status"]> }): boolean {
  if (c.implicitSuccess && !env.status.success) return false;
  return truthy(templateValue(c.template, env));
}
