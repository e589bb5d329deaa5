// The workflow expression language (`${{ … }}` and `if:`), pure: what the workflow parser checks
// at plan time, the server evaluates when a job is released and the runner evaluates per step.
export { EXPR_LIMITS, ExprError, positionIn } from "./errors.ts";
export { evaluate, type EvalEnv, type Status } from "./eval.ts";
export { ALL_CONTEXTS, parseExpression, STATUS_FUNCTIONS, type Expr, type ParseOptions } from "./parse.ts";
export {
  evaluateCondition,
  hasExpression,
  parseCondition,
  parseTemplate,
  renderTemplate,
  templateValue,
  type Condition,
  type Template,
  type TemplatePart,
} from "./template.ts";
export { foldCase, looseEquals, toNumber, toText, truthy, type Contexts, type Value } from "./values.ts";
