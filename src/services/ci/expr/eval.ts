// Evaluating a parsed expression over contexts (pure; every evaluation bounded by EXPR_LIMITS.steps
// and EXPR_LIMITS.resultChars). Semantics as GitHub documents them: `&&` and `||` answer one of
// their operands (short-circuit), `!` a boolean, comparisons by values.ts; a missing context,
// property or index is null; `.*` / `[*]` filter an array or an object into the list of its
// elements, and a property of a filtered list is that property of each element that has one.
import { EXPR_LIMITS, ExprError } from "./errors.ts";
import type { Expr, Node } from "./parse.ts";
import { compare, isObject, looseEquals, property, toText, truthy, type Contexts, type Value } from "./values.ts";

/** What the status functions answer (conditions only): for a job, its needs; for a step, the steps before it. */
export interface Status {
  /** Nothing before failed (and the run was not cancelled). */
  success: boolean;
  /** Something before failed. */
  failure: boolean;
  /** The run was cancelled. */
  cancelled: boolean;
}

/** What an evaluation reads besides the expression. */
export interface EvalEnv {
  contexts: Contexts;
  /** Absent: calling a status function is an error. */
  status?: Status;
  /** hashFiles(patterns…) where files exist (the runner); absent: an error. */
  hashFiles?: (patterns: string[]) => string;
  /** Tighter bounds than EXPR_LIMITS for this evaluation (plan-time step names: step-names.ts). */
  limits?: { steps: number; resultChars: number };
}

/** The elements a `*` filter selected: properties and indexes apply to each. */
class Filtered {
  constructor(readonly items: Value[]) {}
}

type Result = Value | Filtered;

const plain = (r: Result): Value => (r instanceof Filtered ? r.items : r);

class Evaluator {
  private steps = 0;

  constructor(private readonly env: EvalEnv) {}

  /** Charges `n` steps at `at`. */
  step(at: number, n = 1): void {
    this.steps += n;
    const max = this.env.limits?.steps ?? EXPR_LIMITS.steps;
    if (this.steps > max) throw new ExprError(`the expression takes more than ${max} steps to evaluate`, at);
  }

  /** Refuses a string longer than the limit (before it is kept anywhere). */
  bounded(s: string, at: number): string {
    const max = this.env.limits?.resultChars ?? EXPR_LIMITS.resultChars;
    if (s.length > max) throw new ExprError(`the expression builds a string longer than ${max} characters`, at);
    return s;
  }

  value(node: Node): Value {
    return plain(this.eval(node));
  }

  eval(node: Node): Result {
    this.step(node.at);
    switch (node.k) {
      case "lit":
        return node.v;
      case "ctx":
        return this.env.contexts[node.name] ?? null;
      case "prop":
        return this.member(this.eval(node.obj), node.name, node.at);
      case "index": {
        const obj = this.eval(node.obj);
        const key = this.value(node.index);
        if (typeof key === "string") return this.member(obj, key, node.at);
        if (typeof key !== "number") return obj instanceof Filtered ? new Filtered([]) : null;
        if (obj instanceof Filtered) {
          this.step(node.at, obj.items.length);
          return new Filtered(obj.items.flatMap((item) => (Array.isArray(item) ? maybe(at(item, key)) : [])));
        }
        return Array.isArray(obj) ? at(obj, key) : null;
      }
      case "star": {
        const obj = this.eval(node.obj);
        if (obj instanceof Filtered) {
          const out: Value[] = [];
          for (const item of obj.items) for (const child of this.children(item, node.at)) out.push(child);
          return new Filtered(out);
        }
        return new Filtered(this.children(obj, node.at));
      }
      case "not":
        return !truthy(this.value(node.x));
      case "bin":
        return this.binary(node);
      case "call":
        return this.call(node);
    }
  }

  /** The elements of an array or the values of an object (what `*` selects). */
  private children(v: Value, at: number): Value[] {
    if (Array.isArray(v)) {
      this.step(at, v.length);
      return [...v];
    }
    if (isObject(v)) {
      const values = Object.values(v);
      this.step(at, values.length);
      return values;
    }
    return [];
  }

  private member(obj: Result, name: string, at: number): Result {
    if (obj instanceof Filtered) {
      this.step(at, obj.items.length);
      const out: Value[] = [];
      for (const item of obj.items) {
        if (!isObject(item)) continue;
        const v = this.lookup(item, name, at);
        if (v !== null) out.push(v);
      }
      return new Filtered(out);
    }
    return isObject(obj) ? this.lookup(obj, name, at) : null;
  }

  private lookup(obj: { readonly [key: string]: Value }, name: string, at: number): Value {
    // Why charged: a case-insensitive lookup walks the object's keys.
    if (!Object.hasOwn(obj, name)) this.step(at, Object.keys(obj).length);
    return property(obj, name);
  }

  private binary(node: Extract<Node, { k: "bin" }>): Value {
    if (node.op === "&&") {
      const l = this.value(node.l);
      return truthy(l) ? this.value(node.r) : l;
    }
    if (node.op === "||") {
      const l = this.value(node.l);
      return truthy(l) ? l : this.value(node.r);
    }
    const l = this.value(node.l);
    const r = this.value(node.r);
    switch (node.op) {
      case "==":
        return looseEquals(l, r);
      case "!=":
        return !looseEquals(l, r);
      case "<":
        return compare(l, r) === -1;
      case "<=": {
        const c = compare(l, r);
        return c === -1 || c === 0;
      }
      case ">":
        return compare(l, r) === 1;
      case ">=": {
        const c = compare(l, r);
        return c === 1 || c === 0;
      }
    }
  }

  private status(node: Extract<Node, { k: "call" }>): Status {
    if (!this.env.status) throw new ExprError(`${node.fn}() is only available in if: conditions`, node.at);
    return this.env.status;
  }

  private call(node: Extract<Node, { k: "call" }>): Value {
    const args = () => node.args.map((a) => this.value(a));
    switch (node.fn) {
      case "success":
        return this.status(node).success;
      case "failure":
        return this.status(node).failure;
      case "cancelled":
        return this.status(node).cancelled;
      case "always":
        this.status(node);
        return true;
      case "contains": {
        const [hay, needle] = args() as [Value, Value];
        if (Array.isArray(hay)) {
          this.step(node.at, hay.length);
          return hay.some((item) => looseEquals(item, needle));
        }
        return foldIncludes(toText(hay), toText(needle), "includes");
      }
      case "startsWith": {
        const [s, prefix] = args() as [Value, Value];
        return foldIncludes(toText(s), toText(prefix), "startsWith");
      }
      case "endsWith": {
        const [s, suffix] = args() as [Value, Value];
        return foldIncludes(toText(s), toText(suffix), "endsWith");
      }
      case "format":
        return this.format(node, args());
      case "join": {
        const [list, sep] = args() as [Value, Value | undefined];
        const separator = sep === undefined ? "," : toText(sep);
        if (!Array.isArray(list)) return toText(list);
        this.step(node.at, list.length);
        let size = 0;
        const parts = list.map((item) => {
          const s = toText(item);
          size += s.length + separator.length;
          if (size > EXPR_LIMITS.resultChars) this.tooLong(node.at);
          return s;
        });
        return this.bounded(parts.join(separator), node.at);
      }
      case "toJSON": {
        const v = args()[0]!;
        this.step(node.at, approximateSize(v, EXPR_LIMITS.resultChars));
        return this.bounded(JSON.stringify(v, null, 2) ?? "null", node.at);
      }
      case "fromJSON":
        return this.fromJSON(node, toText(args()[0]!));
      case "hashFiles": {
        if (!this.env.hashFiles) throw new ExprError("hashFiles() is not available here", node.at);
        return this.env.hashFiles(args().map(toText));
      }
    }
  }

  private tooLong(at: number): never {
    throw new ExprError(`the expression builds a string longer than ${EXPR_LIMITS.resultChars} characters`, at);
  }

  /** format('{0} and {1}', a, b): `{{` and `}}` are braces; `{N}` the N-th argument after the format. */
  private format(node: Extract<Node, { k: "call" }>, values: Value[]): string {
    const fmt = toText(values[0]!);
    const rest = values.slice(1).map(toText);
    let out = "";
    let i = 0;
    while (i < fmt.length) {
      const c = fmt[i]!;
      if (c === "{" && fmt[i + 1] === "{") {
        out += "{";
        i += 2;
      } else if (c === "}" && fmt[i + 1] === "}") {
        out += "}";
        i += 2;
      } else if (c === "{") {
        const m = /^\{([0-9]{1,3})\}/.exec(fmt.slice(i, i + 6));
        if (!m) throw new ExprError("format(): a { that does not start a {N} placeholder (write {{ for a brace)", node.at);
        const n = Number(m[1]);
        if (n >= rest.length)
          throw new ExprError(`format(): the text refers to argument {${n}} but ${rest.length} ${rest.length === 1 ? "was" : "were"} given`, node.at);
        out += rest[n];
        i += m[0].length;
      } else if (c === "}") {
        throw new ExprError("format(): a } that closes no placeholder (write }} for a brace)", node.at);
      } else {
        const next = nextBrace(fmt, i);
        out += fmt.slice(i, next);
        i = next;
      }
      if (out.length > EXPR_LIMITS.resultChars) this.tooLong(node.at);
      this.step(node.at);
    }
    return out;
  }

  private fromJSON(node: Extract<Node, { k: "call" }>, text: string): Value {
    if (text.trim() === "") throw new ExprError("fromJSON(): the argument is empty", node.at);
    if (jsonDepth(text) > EXPR_LIMITS.jsonDepth) throw new ExprError(`fromJSON(): the JSON nests deeper than ${EXPR_LIMITS.jsonDepth} levels`, node.at);
    this.step(node.at, Math.ceil(text.length / 64));
    try {
      return JSON.parse(text) as Value;
    } catch {
      // Why no parser message: it quotes the text, which may be a secret.
      throw new ExprError("fromJSON(): the argument is not valid JSON", node.at);
    }
  }
}

function nextBrace(s: string, from: number): number {
  const a = s.indexOf("{", from);
  const b = s.indexOf("}", from);
  if (a < 0) return b < 0 ? s.length : b;
  return b < 0 ? a : Math.min(a, b);
}

/** `list[n]` for an integral n in range, else null. */
function at(list: readonly Value[], n: number): Value {
  if (!Number.isInteger(n) || n < 0 || n >= list.length) return null;
  return list[n] ?? null;
}

function maybe(v: Value): Value[] {
  return v === null ? [] : [v];
}

/** Case-insensitive `includes` / `startsWith` / `endsWith`. */
function foldIncludes(s: string, part: string, how: "includes" | "startsWith" | "endsWith"): boolean {
  // Lower-casing both sides keeps the test linear; for these three, folding to lower or upper case agrees except for rare scripts.
  const a = s.toLowerCase();
  const b = part.toLowerCase();
  return how === "includes" ? a.includes(b) : how === "startsWith" ? a.startsWith(b) : a.endsWith(b);
}

/** The deepest nesting of brackets outside strings in a JSON text (a scan before parsing it). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** Roughly how many values `v` holds, counted up to `cap` (what toJSON walks). */
function approximateSize(v: Value, cap: number): number {
  let n = 0;
  const stack: Value[] = [v];
  while (stack.length && n < cap) {
    const x = stack.pop()!;
    n++;
    if (Array.isArray(x)) for (const item of x) stack.push(item);
    else if (isObject(x)) for (const item of Object.values(x)) stack.push(item);
  }
  return n;
}

/** Evaluates a parsed expression; throws ExprError (with the offset of the failing part) when it cannot. */
export function evaluate(expr: Expr, env: EvalEnv): Value {
  return new Evaluator(env).value(expr.root);
}
