// The workflow expression language against GitHub's documented semantics (docs.github.com,
// "Evaluate expressions in workflows and actions"): literals, operators and their precedence,
// loose equality, truthiness, case-insensitive strings, property access and filters, functions,
// conditions with their implicit success(), templates, errors with their column, and the bounds.
import { describe, expect, test } from "bun:test";
import {
  EXPR_LIMITS,
  ExprError,
  evaluate,
  evaluateCondition,
  parseCondition,
  parseExpression,
  parseTemplate,
  positionIn,
  renderTemplate,
  templateValue,
  type Contexts,
  type Status,
  type Value,
} from "../../../src/services/ci/expr/index.ts";

const CONTEXTS: Contexts = {
  github: {
    sha: "0123abcd",
    ref: "refs/heads/main",
    ref_name: "main",
    event_name: "push",
    repository: "acme/app",
    event: {
      commits: [
        { id: "a", message: "Fix", author: { name: "Ann" } },
        { id: "b", message: "Add", author: { name: "Bob" } },
        { id: "c", message: "no author" },
      ],
      labels: [{ name: "Bug" }, { name: "docs" }],
    },
  },
  needs: { build: { result: "success", outputs: { version: "1.2.3", matrix: '{"os":["linux","mac"]}' } } },
  matrix: { os: "linux", node: 20 },
  vars: { DEPLOY: "true", EMPTY: "" },
  inputs: { dry_run: false, level: "3" },
  env: { MODE: "release" },
  steps: { build: { outputs: { digest: "sha256:ff" }, outcome: "success", conclusion: "success" } },
  secrets: { TOKEN: "s3cret" },
  job: { status: "success" },
};

const OK: Status = { success: true, failure: false, cancelled: false };

function run(src: string, contexts: Contexts = CONTEXTS): Value {
  return evaluate(parseExpression(src, { status: true }), { contexts, status: OK });
}

/** The error an expression raises, as `column: message`. */
function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ExprError) return `${e.col}: ${e.message}`;
    throw e;
  }
  throw new Error("no error");
}

describe("literals", () => {
  test.each([
    ["null", null],
    ["true", true],
    ["false", false],
    ["711", 711],
    ["-9.2", -9.2],
    ["+1", 1],
    [".5", 0.5],
    ["-.5", -0.5],
    ["0xff", 255],
    ["0o17", 15],
    ["-2.99e-2", -0.0299],
    ["1E3", 1000],
    ["Infinity", Infinity],
    ["-Infinity", -Infinity],
    ["'It''s open source!'", "It's open source!"],
    ["''", ""],
  ] as [string, Value][])("%s", (src, want) => {
    expect(run(src)).toEqual(want);
  });
  test("NaN", () => {
    expect(Number.isNaN(run("NaN") as number)).toBe(true);
  });
});

describe("loose equality (different types compare as numbers; strings ignore case)", () => {
  test.each([
    ["null == 0", true],
    ["null == null", true],
    ["null == ''", true],
    ["null == false", true],
    ["true == 1", true],
    ["false == 0", true],
    ["true == 2", false],
    ["'' == 0", true],
    ["' 123456.789 ' == 123456.789", true],
    ["' +123456.789 ' == 123456.789", true],
    ["' 0xff ' == 255", true],
    ["' 0o10 ' == 8", true],
    ["' Infinity ' == Infinity", true],
    ["'1' == 1", true],
    ["'1.0' == 1", true],
    ["'abc' == 0", false],
    ["NaN == NaN", false],
    ["NaN != NaN", true],
    ["' NaN ' != NaN", true],
    ["'ABC' == 'abc'", true],
    ["'abc' != 'ABD'", true],
    ["'true' == true", false],
    ["github.event == github.event", true],
    ["github.event == github.EVENT", true],
    ["fromJSON('{}') == fromJSON('{}')", false],
    ["fromJSON('[]') == 0", false],
    ["matrix.node == '20'", true],
    ["inputs.level == 3", true],
    ["inputs.dry_run == 'false'", false],
    ["inputs.dry_run == false", true],
  ] as [string, boolean][])("%s → %p", (src, want) => {
    expect(run(src)).toBe(want);
  });
});

describe("comparisons", () => {
  test.each([
    ["1 < 2", true],
    ["2 <= 2", true],
    ["3 > 2", true],
    ["2 >= 3", false],
    ["'abc' < 'def'", true],
    ["'B' > 'a'", true],
    ["'a' < 'B'", true],
    ["'ABC' <= 'abc'", true],
    ["false < true", true],
    ["null < 1", true],
    ["'2' > 10", false],
    ["'x' < 1", false],
    ["'x' >= 1", false],
    ["NaN < 1", false],
    ["github.event < github.event", false],
    ["github.event >= github.event", false],
  ] as [string, boolean][])("%s → %p", (src, want) => {
    expect(run(src)).toBe(want);
  });
});

describe("logic: && and || answer an operand, ! a boolean; precedence ! > compare > equality > && > ||", () => {
  test.each([
    ["true && 'yes'", "yes"],
    ["0 && 'yes'", 0],
    ["'' || 'fallback'", "fallback"],
    ["'first' || 'second'", "first"],
    ["vars.EMPTY || 'default'", "default"],
    ["!0", true],
    ["!''", true],
    ["!'x'", false],
    ["!null", true],
    ["!fromJSON('[]')", false],
    ["!fromJSON('{}')", false],
    ["!NaN", true],
    ["!!-0", false],
    ["true || false && false", true],
    ["(true || false) && false", false],
    ["1 == 1 && 2 < 1", false],
    ["!1 == false", true],
    ["1 < 2 == true", true],
    ["github.ref == 'refs/heads/main' && github.event_name == 'push' && 'deploy' || 'skip'", "deploy"],
  ] as [string, Value][])("%s → %p", (src, want) => {
    expect(run(src)).toEqual(want);
  });
  test("|| short-circuits: the right side is not evaluated", () => {
    expect(run("true || fromJSON('not json')")).toBe(true);
    expect(run("false && fromJSON('not json')")).toBe(false);
  });
});

describe("contexts, properties, indexes and filters", () => {
  test.each([
    ["github.sha", "0123abcd"],
    ["GitHub.SHA", "0123abcd"],
    ["github['ref_name']", "main"],
    ["github['REF_NAME']", "main"],
    ["needs.build.outputs.version", "1.2.3"],
    ["needs.build.result", "success"],
    ["steps.build.outputs.digest", "sha256:ff"],
    ["matrix.os", "linux"],
    ["matrix.missing", null],
    ["github.event.commits[1].id", "b"],
    ["github.event.commits['1']", null],
    ["github.event.commits[5]", null],
    ["github.event.commits[-1]", null],
    ["github.event.commits[0.5]", null],
    ["github.sha.length", null],
    ["github.event.commits.*.id", ["a", "b", "c"]],
    ["github.event.commits.*.author.name", ["Ann", "Bob"]],
    ["github.event.commits[*].message", ["Fix", "Add", "no author"]],
    ["github.event.labels.*.name[0]", []],
    ["inputs.*", [false, "3"]],
    ["github.sha.*", []],
    ["secrets.TOKEN", "s3cret"],
    ["jobs", null],
    ["fromJSON(needs.build.outputs.matrix).os[1]", "mac"],
  ] as [string, Value][])("%s → %p", (src, want) => {
    expect(run(src)).toEqual(want);
  });
});

describe("functions", () => {
  test.each([
    ["contains('Hello world', 'WORLD')", true],
    ["contains('Hello world', 'xyz')", false],
    ["contains(github.event.labels.*.name, 'bug')", true],
    ["contains(github.event.labels.*.name, 'feature')", false],
    ["contains(fromJSON('[1, 2, 3]'), '2')", true],
    ['contains(fromJSON(\'["push", "pull_request"]\'), github.event_name)', true],
    ["contains(null, '')", true],
    ["contains(123, 2)", true],
    ["startsWith('Hello world', 'he')", true],
    ["startsWith(github.ref, 'refs/tags/')", false],
    ["endsWith('Hello world', 'LD')", true],
    ["endsWith('Hello world', 'Hello')", false],
    ["format('Hello {0} {1} {2}', 'Mona', 'the', 'Octocat')", "Hello Mona the Octocat"],
    ["format('{{Hello {0} {1} {2}!}}', 'Mona', 'the', 'Octocat')", "{Hello Mona the Octocat!}"],
    ["format('{0}', null)", ""],
    ["format('{0}{0}', true)", "truetrue"],
    ["format('{0}', 0.5)", "0.5"],
    ["format('{0}', -2.0)", "-2"],
    ["format('{0}', -0)", "0"],
    ["format('{0}', 1e21)", "1e+21"],
    ["format('{0}', NaN)", "NaN"],
    ["format('{0}', github.event)", "Object"],
    ["format('{0}', github.event.commits)", "Array"],
    ["join(github.event.commits.*.id)", "a,b,c"],
    ["join(github.event.commits.*.id, ' | ')", "a | b | c"],
    ["join('abc', '-')", "abc"],
    ["join(fromJSON('[1, true, null]'))", "1,true,"],
    ["toJSON(matrix)", '{\n  "os": "linux",\n  "node": 20\n}'],
    ["toJSON('x')", '"x"'],
    ["toJSON(null)", "null"],
    ["fromJSON('true')", true],
    ["fromJSON('42')", 42],
    ["fromJSON(' {\"a\": [1] } ').a[0]", 1],
    ["toJSON(fromJSON('[1,2]'))", "[\n  1,\n  2\n]"],
    ["TOjson(fromjson('\"x\"'))", '"x"'],
    ["STARTSWITH('abc', 'A')", true],
  ] as [string, Value][])("%s → %p", (src, want) => {
    expect(run(src)).toEqual(want);
  });

  test("status functions read the status they are given", () => {
    const eval_ = (src: string, status: Status) => evaluate(parseExpression(src, { status: true }), { contexts: CONTEXTS, status });
    const failed: Status = { success: false, failure: true, cancelled: false };
    const cancelled: Status = { success: false, failure: false, cancelled: true };
    expect([eval_("success()", OK), eval_("failure()", OK), eval_("always()", OK), eval_("cancelled()", OK)]).toEqual([true, false, true, false]);
    expect([eval_("success()", failed), eval_("failure()", failed), eval_("cancelled()", cancelled)]).toEqual([false, true, true]);
  });

  test("hashFiles is the host's, and an error without one", () => {
    const e = parseExpression("hashFiles('**/package-lock.json', 'x')");
    expect(evaluate(e, { contexts: {}, hashFiles: (p) => `h(${p.join(";")})` })).toBe("h(**/package-lock.json;x)");
    expect(failure(() => evaluate(e, { contexts: {} }))).toBe("1: hashFiles() is not available here");
  });
});

describe("conditions", () => {
  const holds = (src: string, status: Status = OK, contexts: Contexts = CONTEXTS) => evaluateCondition(parseCondition(src), { contexts, status });
  const failed: Status = { success: false, failure: true, cancelled: false };

  test.each([
    ["github.ref == 'refs/heads/main'", true],
    ["${{ github.ref == 'refs/heads/main' }}", true],
    ["  ${{ github.ref == 'refs/heads/dev' }}  ", false],
    ["github.event_name == 'push' && !startsWith(github.ref, 'refs/tags/')", true],
    ["vars.DEPLOY == 'true'", true],
    ["vars.EMPTY", false],
    ["inputs.dry_run", false],
    ["!inputs.dry_run", true],
    ["always()", true],
    ["success() || failure()", true],
    // A string with text around an expression is a non-empty string: true (as on GitHub).
    ["${{ false }} && ${{ false }}", true],
  ] as [string, boolean][])("%s → %p", (src, want) => {
    expect(holds(src)).toBe(want);
  });

  test("no status function means success() && (…)", () => {
    expect(holds("true", failed)).toBe(false);
    expect(holds("failure()", failed)).toBe(true);
    expect(holds("always() && github.sha != ''", failed)).toBe(true);
    expect(holds("${{ cancelled() }}", failed)).toBe(false);
    expect(parseCondition("github.sha").implicitSuccess).toBe(true);
    expect(parseCondition("${{ always() }}").implicitSuccess).toBe(false);
  });

  test("contexts a condition reads", () => {
    expect([...parseCondition("needs.build.result == 'success' && vars.X").contexts].sort()).toEqual(["needs", "vars"]);
  });
});

describe("templates", () => {
  const render = (src: string) => renderTemplate(parseTemplate(src), { contexts: CONTEXTS });
  test.each([
    ["plain text", "plain text"],
    ["", ""],
    ["v${{ needs.build.outputs.version }}-${{ matrix.os }}", "v1.2.3-linux"],
    ["${{ matrix.node }}", "20"],
    ["${{ null }}|${{ true }}", "|true"],
    ["a ${{ '}}' }} b", "a }} b"],
    ["${{ 'it''s' }}", "it's"],
    ["echo ${{ github.event.commits }}", "echo Array"],
    ["$ {{ not an expression }}", "$ {{ not an expression }}"],
    ["${{ format('{0}', 'x') }}${{ 'y' }}", "xy"],
  ])("%p → %p", (src, want) => {
    expect(render(src)).toBe(want);
  });

  test("a template that is one expression has its value", () => {
    expect(templateValue(parseTemplate("${{ matrix.node }}"), { contexts: CONTEXTS })).toBe(20);
    expect(templateValue(parseTemplate(" ${{ matrix.node }}"), { contexts: CONTEXTS })).toBe(" 20");
    expect(templateValue(parseTemplate("${{ fromJSON('[1]') }}"), { contexts: CONTEXTS })).toEqual([1]);
  });

  test("contexts a template reads", () => {
    expect([...parseTemplate("${{ matrix.os }} ${{ secrets.TOKEN }} ${{ 1 }}").contexts].sort()).toEqual(["matrix", "secrets"]);
  });
});

describe("errors name the column of the problem", () => {
  test.each([
    ["github.ref == ", "15: the expression ends too early"],
    ["github.ref = 'x'", '12: unexpected "=" (did you mean "=="?)'],
    ["a && b", '1: unknown context "a" (expected one of github, env, vars, job, jobs, steps, runner, secrets, strategy, matrix, needs, inputs)'],
    ["github.sha & 1", '12: unexpected "&" (did you mean "&&"?)'],
    ['"double"', "1: strings are written in single quotes ('…'), not double quotes"],
    ["'open", "1: the string is not closed with '"],
    ["contains('a')", "1: contains() takes 2 arguments"],
    ["startsWith('a', 'b', 'c')", "22: startsWith() takes at most 2 arguments"],
    ["nope(1)", '1: unknown function "nope"'],
    ["1 + 2", '3: unexpected "+" (there is no arithmetic in expressions)'],
    ["github.", '8: expected a property name or * after ".", found the end of the expression'],
    ["(github.sha", '12: expected ")" to close the group opened at column 1, found the end of the expression'],
    ["github[0", '9: expected "]" to close the index, found the end of the expression'],
    ["github.sha github.ref", '12: unexpected "github"'],
    ["12abc", "1: a malformed number"],
    ["github.sha # comment", '12: unexpected character "#"'],
  ])("%p", (src, want) => {
    expect(failure(() => parseExpression(src))).toBe(want);
  });

  test("contexts outside the allowed set, and status functions outside conditions", () => {
    const only = new Set(["github", "needs", "vars", "inputs"]);
    expect(failure(() => parseExpression("needs.a.result == 'x' && secrets.TOKEN", { contexts: only }))).toBe(
      "26: the secrets context is not available here (available: github, needs, vars, inputs)",
    );
    expect(failure(() => parseExpression("github.sha && success()"))).toBe("15: success() is only available in if: conditions");
    expect(failure(() => parseCondition("${{ steps.x }}", { contexts: only }))).toBe(
      "5: the steps context is not available here (available: github, needs, vars, inputs)",
    );
  });

  test("errors in templates are at their offset in the whole text, and positionIn gives line and column", () => {
    const text = "echo one\necho ${{ matrix.os }}\necho ${{ github.sha == }}\n";
    const e = (() => {
      try {
        parseTemplate(text);
      } catch (x) {
        return x as ExprError;
      }
      throw new Error("no error");
    })();
    expect(e.message).toBe("the expression ends too early");
    expect(positionIn(text, e.offset)).toEqual({ line: 3, column: 24 });
    expect(failure(() => parseTemplate("a ${{ matrix.os"))).toBe("3: the expression opened here is not closed with }}");
    expect(failure(() => parseTemplate("a ${{   }} b"))).toBe("3: the expression is empty");
    expect(failure(() => parseCondition("  ${{ github.sha == }}"))).toBe("21: the expression ends too early");
  });

  test("evaluation errors carry the column of the call and never quote data", () => {
    const secretJson = "{ s3cret";
    const err = failure(() => evaluate(parseExpression("true && fromJSON(secrets.TOKEN)"), { contexts: { secrets: { TOKEN: secretJson } } }));
    expect(err).toBe("9: fromJSON(): the argument is not valid JSON");
    expect(failure(() => run("format('{1}', 'a')"))).toBe("1: format(): the text refers to argument {1} but 1 was given");
    expect(failure(() => run("format('{', 'a')"))).toBe("1: format(): a { that does not start a {N} placeholder (write {{ for a brace)");
    expect(failure(() => run("format('}', 'a')"))).toBe("1: format(): a } that closes no placeholder (write }} for a brace)");
    expect(failure(() => run("fromJSON('')"))).toBe("1: fromJSON(): the argument is empty");
    expect(failure(() => evaluate(parseExpression("success()", { status: true }), { contexts: {} }))).toBe("1: success() is only available in if: conditions");
    const tmpl = parseTemplate("x ${{ fromJSON('{') }}");
    expect(failure(() => renderTemplate(tmpl, { contexts: {} }))).toBe("7: fromJSON(): the argument is not valid JSON");
  });
});

describe("bounds", () => {
  test("length, nesting and property chains", () => {
    expect(failure(() => parseExpression(`'${"x".repeat(EXPR_LIMITS.length)}'`))).toBe(`1: the expression is longer than ${EXPR_LIMITS.length} characters`);
    expect(failure(() => parseExpression(`${"(".repeat(60)}1${")".repeat(60)}`))).toBe(
      `${EXPR_LIMITS.depth + 1}: the expression nests deeper than ${EXPR_LIMITS.depth} levels`,
    );
    expect(failure(() => parseExpression(`${"!".repeat(200)}true`))).toStartWith(`${EXPR_LIMITS.depth}: the expression nests deeper`);
    expect(failure(() => parseExpression(`${"contains(".repeat(60)}'a', 'b'${")".repeat(60)}`))).toContain("nests deeper");
    expect(parseExpression(`${"(".repeat(EXPR_LIMITS.depth - 1)}1${")".repeat(EXPR_LIMITS.depth - 1)}`).root).toEqual({
      k: "lit",
      v: 1,
      at: EXPR_LIMITS.depth - 1,
    });
    // A long, flat chain parses (it is not nesting) and evaluates within the step limit.
    expect(run(`github${".a".repeat(5000)}`)).toBe(null);
  });

  test("evaluation steps and the size of built strings", () => {
    const big = Array.from({ length: 60_000 }, (_, i) => ({ n: i }));
    const contexts = { github: { list: big } };
    expect(failure(() => evaluate(parseExpression("github.list.*.n.*"), { contexts }))).toContain("steps to evaluate");
    const long = { github: { s: "x".repeat(600_000) } };
    expect(failure(() => evaluate(parseExpression("format('{0}{0}', github.s)"), { contexts: long }))).toBe(
      `1: the expression builds a string longer than ${EXPR_LIMITS.resultChars} characters`,
    );
    expect(failure(() => evaluate(parseExpression("join(fromJSON(format('[\"{0}\",\"{0}\"]', github.s)), '')"), { contexts: long }))).toContain("longer than");
    expect(failure(() => renderTemplate(parseTemplate("${{ github.s }}${{ github.s }}"), { contexts: long }))).toContain("longer than");
    const deep = `${"[".repeat(EXPR_LIMITS.jsonDepth + 1)}${"]".repeat(EXPR_LIMITS.jsonDepth + 1)}`;
    expect(failure(() => evaluate(parseExpression("fromJSON(github.s)"), { contexts: { github: { s: deep } } }))).toBe(
      `1: fromJSON(): the JSON nests deeper than ${EXPR_LIMITS.jsonDepth} levels`,
    );
  });

  test("property lookups do not reach the prototype", () => {
    expect(run("github.constructor")).toBe(null);
    expect(run("github['__proto__']")).toBe(null);
    expect(run('fromJSON(\'{"__proto__": {"x": 1}}\').__proto__.x')).toBe(1);
    expect(run("matrix.toString")).toBe(null);
  });
});
