// The grammar of GitHub's expression language, from loosest to tightest binding:
//
//   expr     := and ( "||" and )*
//   and      := eq ( "&&" eq )*
//   eq       := cmp ( ( "==" | "!=" ) cmp )*
//   cmp      := unary ( ( "<" | "<=" | ">" | ">=" ) unary )*
//   unary    := "!" unary | postfix
//   postfix  := primary ( "." ( ident | "*" ) | "[" ( expr | "*" ) "]" )*
//   primary  := literal | "(" expr ")" | ident "(" [ expr ( "," expr )* ] ")" | ident
//
// A bare identifier names a context (github, needs, …); names of contexts, properties and
// functions are case-insensitive. Parsing is pure and bounded (length, nesting), and checks what
// can be checked without data: known functions and their arity, the contexts allowed where the
// expression stands, and whether status functions (success(), …) may be called there.
import { EXPR_LIMITS, ExprError } from "./errors.ts";
import { lex, type Token } from "./lex.ts";
import type { Value } from "./values.ts";

/** A node of the syntax tree; `at` is the offset of its first character in the expression. */
export type Node =
  | { k: "lit"; v: Value; at: number }
  | { k: "ctx"; name: string; at: number }
  | { k: "prop"; obj: Node; name: string; at: number }
  | { k: "index"; obj: Node; index: Node; at: number }
  | { k: "star"; obj: Node; at: number }
  | { k: "not"; x: Node; at: number }
  | { k: "bin"; op: BinaryOp; l: Node; r: Node; at: number }
  | { k: "call"; fn: FunctionName; args: Node[]; at: number };

export type BinaryOp = "||" | "&&" | "==" | "!=" | "<" | "<=" | ">" | ">=";

/** Every context GitHub defines (lower case). */
export const ALL_CONTEXTS: ReadonlySet<string> = new Set([
  "github",
  "env",
  "vars",
  "job",
  "jobs",
  "steps",
  "runner",
  "secrets",
  "strategy",
  "matrix",
  "needs",
  "inputs",
]);

/** Functions that read the job's or step's status: only where a condition is evaluated (`if:`). */
export const STATUS_FUNCTIONS: ReadonlySet<string> = new Set(["success", "failure", "always", "cancelled"]);

/** The functions, by lower-case name: their canonical name and argument counts. */
const FUNCTIONS: Readonly<Record<string, { name: FunctionName; min: number; max: number }>> = Object.freeze({
  contains: { name: "contains", min: 2, max: 2 },
  startswith: { name: "startsWith", min: 2, max: 2 },
  endswith: { name: "endsWith", min: 2, max: 2 },
  format: { name: "format", min: 1, max: EXPR_LIMITS.args },
  join: { name: "join", min: 1, max: 2 },
  tojson: { name: "toJSON", min: 1, max: 1 },
  fromjson: { name: "fromJSON", min: 1, max: 1 },
  hashfiles: { name: "hashFiles", min: 1, max: EXPR_LIMITS.args },
  success: { name: "success", min: 0, max: 0 },
  failure: { name: "failure", min: 0, max: 0 },
  always: { name: "always", min: 0, max: 0 },
  cancelled: { name: "cancelled", min: 0, max: 0 },
});

export type FunctionName =
  | "contains"
  | "startsWith"
  | "endsWith"
  | "format"
  | "join"
  | "toJSON"
  | "fromJSON"
  | "hashFiles"
  | "success"
  | "failure"
  | "always"
  | "cancelled";

/** What a parse checks beyond syntax. */
export interface ParseOptions {
  /** Contexts allowed here (lower case); default: every context. */
  contexts?: ReadonlySet<string>;
  /** Whether success(), failure(), always() and cancelled() may be called (conditions only). */
  status?: boolean;
}

/** A parsed expression and what it refers to. */
export interface Expr {
  /** The expression's text. */
  source: string;
  root: Node;
  /** Contexts it reads (lower case). */
  contexts: ReadonlySet<string>;
  /** Whether it calls a status function. */
  usesStatus: boolean;
}

class Parser {
  private i = 0;
  private depth = 0;
  readonly contexts = new Set<string>();
  usesStatus = false;

  constructor(
    private readonly tokens: Token[],
    private readonly opts: ParseOptions,
  ) {}

  private peek(): Token {
    return this.tokens[this.i]!;
  }

  private next(): Token {
    return this.tokens[this.i++]!;
  }

  private isPunct(text: string): boolean {
    const t = this.peek();
    return t.kind === "punct" && t.text === text;
  }

  private expect(text: string, what: string): Token {
    const t = this.peek();
    if (t.kind !== "punct" || t.text !== text) throw new ExprError(`expected ${JSON.stringify(text)} ${what}, found ${describe(t)}`, t.at);
    return this.next();
  }

  private enter(at: number): void {
    if (++this.depth > EXPR_LIMITS.depth) throw new ExprError(`the expression nests deeper than ${EXPR_LIMITS.depth} levels`, at);
  }

  parse(): Node {
    const root = this.expr();
    const t = this.peek();
    if (t.kind !== "end") throw new ExprError(`unexpected ${describe(t)}`, t.at);
    return root;
  }

  private expr(): Node {
    this.enter(this.peek().at);
    let l = this.and();
    while (this.isPunct("||")) {
      const op = this.next();
      l = { k: "bin", op: "||", l, r: this.and(), at: op.at };
    }
    this.depth--;
    return l;
  }

  private and(): Node {
    let l = this.eq();
    while (this.isPunct("&&")) {
      const op = this.next();
      l = { k: "bin", op: "&&", l, r: this.eq(), at: op.at };
    }
    return l;
  }

  private eq(): Node {
    let l = this.cmp();
    while (this.isPunct("==") || this.isPunct("!=")) {
      const op = this.next();
      l = { k: "bin", op: op.text as BinaryOp, l, r: this.cmp(), at: op.at };
    }
    return l;
  }

  private cmp(): Node {
    let l = this.unary();
    while (this.isPunct("<") || this.isPunct("<=") || this.isPunct(">") || this.isPunct(">=")) {
      const op = this.next();
      l = { k: "bin", op: op.text as BinaryOp, l, r: this.unary(), at: op.at };
    }
    return l;
  }

  private unary(): Node {
    if (this.isPunct("!")) {
      const op = this.next();
      this.enter(op.at);
      const x = this.unary();
      this.depth--;
      return { k: "not", x, at: op.at };
    }
    return this.postfix();
  }

  private postfix(): Node {
    let node = this.primary();
    let chained = 0;
    for (;;) {
      if (this.isPunct(".")) {
        const dot = this.next();
        const t = this.next();
        if (t.kind === "punct" && t.text === "*") node = { k: "star", obj: node, at: dot.at };
        else if (t.kind === "ident") node = { k: "prop", obj: node, name: t.text, at: dot.at };
        else throw new ExprError(`expected a property name or * after ".", found ${describe(t)}`, t.at);
      } else if (this.isPunct("[")) {
        const open = this.next();
        if (this.isPunct("*")) {
          this.next();
          node = { k: "star", obj: node, at: open.at };
        } else node = { k: "index", obj: node, index: this.expr(), at: open.at };
        this.expect("]", "to close the index");
      } else break;
      // Why a bound here too: a chain of a.b.c… is not nesting, but each link is a step of evaluation.
      if (++chained > EXPR_LIMITS.length) throw new ExprError("the property chain is too long", node.at);
    }
    return node;
  }

  private primary(): Node {
    const t = this.next();
    if (t.kind === "num") return { k: "lit", v: t.num, at: t.at };
    if (t.kind === "str") return { k: "lit", v: t.text, at: t.at };
    if (t.kind === "punct" && t.text === "(") {
      const inner = this.expr();
      this.expect(")", "to close the group opened at column " + (t.at + 1));
      return inner;
    }
    if (t.kind !== "ident") throw new ExprError(t.kind === "end" ? "the expression ends too early" : `unexpected ${describe(t)}`, t.at);
    if (this.isPunct("(")) return this.call(t);
    switch (t.text) {
      case "true":
        return { k: "lit", v: true, at: t.at };
      case "false":
        return { k: "lit", v: false, at: t.at };
      case "null":
        return { k: "lit", v: null, at: t.at };
      case "NaN":
        return { k: "lit", v: Number.NaN, at: t.at };
      case "Infinity":
        return { k: "lit", v: Infinity, at: t.at };
    }
    const name = t.text.toLowerCase();
    if (!ALL_CONTEXTS.has(name)) throw new ExprError(`unknown context ${JSON.stringify(t.text)} (expected one of ${[...ALL_CONTEXTS].join(", ")})`, t.at);
    const allowed = this.opts.contexts ?? ALL_CONTEXTS;
    if (!allowed.has(name)) throw new ExprError(`the ${name} context is not available here (available: ${[...allowed].join(", ") || "none"})`, t.at);
    this.contexts.add(name);
    return { k: "ctx", name, at: t.at };
  }

  private call(t: Token): Node {
    const fn = FUNCTIONS[t.text.toLowerCase()];
    if (!fn) throw new ExprError(`unknown function ${JSON.stringify(t.text)}`, t.at);
    if (STATUS_FUNCTIONS.has(t.text.toLowerCase())) {
      if (!this.opts.status) throw new ExprError(`${fn.name}() is only available in if: conditions`, t.at);
      this.usesStatus = true;
    }
    this.enter(t.at);
    this.expect("(", "");
    const args: Node[] = [];
    if (!this.isPunct(")")) {
      for (;;) {
        if (args.length >= fn.max) throw new ExprError(`${fn.name}() takes at most ${fn.max} argument${fn.max === 1 ? "" : "s"}`, this.peek().at);
        args.push(this.expr());
        if (!this.isPunct(",")) break;
        this.next();
      }
    }
    this.expect(")", `to close the call of ${fn.name}()`);
    this.depth--;
    if (args.length < fn.min)
      throw new ExprError(`${fn.name}() takes ${fn.min === fn.max ? "" : "at least "}${fn.min} argument${fn.min === 1 ? "" : "s"}`, t.at);
    return { k: "call", fn: fn.name, args, at: t.at };
  }
}

function describe(t: Token): string {
  if (t.kind === "end") return "the end of the expression";
  if (t.kind === "str") return "a string";
  if (t.kind === "num") return `the number ${t.text}`;
  return JSON.stringify(t.text);
}

/** Parses one expression (the text between `${{` and `}}`); throws ExprError with the offset of the problem. */
export function parseExpression(source: string, opts: ParseOptions = {}): Expr {
  const p = new Parser(lex(source), opts);
  const root = p.parse();
  return { source, root, contexts: p.contexts, usesStatus: p.usesStatus };
}
