// Step names as lists and pages show them (the `steps` column): what is known when the run is
// planned (github's plan-time fields, inputs, vars, the job's matrix cell) is expanded at once,
// so `test on ${{ matrix.os }}` shows as `test on linux`; an expression reading what only the
// runner knows (steps.*, env, job, runner, secrets, github.run_id, …) stays as written, and a
// name whose known parts fail to evaluate keeps its whole template text. Pure (no I/O); the
// runner still gets the name as written in the spec.
import { evaluate, ExprError, parseTemplate, toText, type Contexts, type Expr, type Value } from "./expr/index.ts";

/** Contexts whose values are whole when a run is planned. */
const PLAN_TIME: ReadonlySet<string> = new Set(["github", "inputs", "vars", "matrix"]);

/**
 * Bounds on one plan-time expansion, far below EXPR_LIMITS. Why: createRun expands every step name
 * of every matrix cell (up to 256 jobs x 100 steps) on the event loop inside its transaction, and
 * the workflow may be a fork's; a name needs a few steps and characters (lists show 200), so a
 * heavier expression keeps its text and a longer name is cut here.
 */
export const NAME_LIMITS = { steps: 1000, resultChars: 4096 } as const;

/** What a plan-time expansion may read: the contexts it has values for. */
export interface PlanTimeContexts {
  /** The github fields known at plan time (sha, ref, …; the runner's own — run_id, actor, job — are not). */
  github: Record<string, string>;
  inputs: Record<string, Value>;
  matrix: Record<string, Value>;
  /** Absent: vars were not read (an expression over vars stays as written). */
  vars?: Record<string, string>;
}

/** Whether every value `expr` reads is in `known` (github only through the fields it has). */
function isPlanTime(expr: Expr, known: PlanTimeContexts): boolean {
  if (expr.usesStatus) return false;
  for (const c of expr.contexts) {
    if (!PLAN_TIME.has(c)) return false;
    if (c === "vars" && !known.vars) return false;
  }
  if (!expr.contexts.has("github")) return true;
  // Every use of github must be `github.<plan-time field>` (not github[...], not the whole object).
  const uses = expr.source.match(/\bgithub\b/gi)?.length ?? 0;
  let fields = 0;
  for (const m of expr.source.matchAll(/\bgithub\s*\.\s*([A-Za-z_][A-Za-z0-9_-]*)/gi)) {
    if (!Object.hasOwn(known.github, m[1]!.toLowerCase())) return false;
    fields++;
  }
  return fields === uses;
}

/** A name's template with each expression's verdict (plan-time or not), or null when it does not parse. */
export type PreparedName = { parts: (string | { expr: Expr; now: boolean })[] } | null;

/**
 * `text` with its plan-time expressions expanded (see the head of this file); `text` itself when
 * nothing is or something fails. `prepared` keeps each text's parsed template and verdicts
 * across calls that share `known` except for `matrix` (a matrix repeats its step names in every
 * cell: parsing is most of the cost).
 */
export function planTimeText(text: string, known: PlanTimeContexts, prepared: Map<string, PreparedName> = new Map()): string {
  if (!text.includes("${{")) return text;
  let p = prepared.get(text);
  if (p === undefined) {
    try {
      const t = parseTemplate(text);
      p = { parts: t.parts.map((part) => (typeof part === "string" ? part : { expr: part.expr, now: isPlanTime(part.expr, known) })) };
    } catch (e) {
      if (!(e instanceof ExprError)) throw e;
      p = null;
    }
    prepared.set(text, p);
  }
  if (p === null) return text;
  try {
    const contexts: Contexts = { github: known.github, inputs: known.inputs, matrix: known.matrix, vars: known.vars ?? {} };
    let out = "";
    for (const part of p.parts) {
      if (typeof part === "string") out += part;
      else if (part.now) out += toText(evaluate(part.expr, { contexts, limits: NAME_LIMITS }));
      else out += `\${{${part.expr.source}}}`;
      if (out.length >= NAME_LIMITS.resultChars) return out.slice(0, NAME_LIMITS.resultChars);
    }
    return out;
  } catch (e) {
    if (e instanceof ExprError) return text;
    throw e;
  }
}

/** Whether any of `names` has an expression over vars (then the caller reads the repository's variables once). */
export function readsVars(names: readonly string[]): boolean {
  return names.some((n) => n.includes("${{") && /\bvars\b/i.test(n));
}
