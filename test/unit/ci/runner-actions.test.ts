// The pieces of the agent's action framework (issue 30): action.yml reading and its limits
// (bytes, nesting, aliases, steps), what each runs.using becomes, GitHub's INPUT_ names, the
// `::set-output` / `::save-state` commands read from stdout, and which `uses` is the built-in
// checkout.
import { describe, expect, test } from "bun:test";
import { ActionProblem } from "../../../cli/runner/action-host.ts";
import { ACTION_FILE_LIMITS, inputEnvName, parseActionYml } from "../../../cli/runner/actions/action-yml.ts";
import { StdoutCommands } from "../../../cli/runner/actions/commands.ts";
import { usesCheckout } from "../../../cli/runner/uses.ts";

const problem = (text: string): string => {
  try {
    parseActionYml(text, "x/y@v1");
  } catch (e) {
    if (e instanceof ActionProblem) return e.message;
    throw e;
  }
  throw new Error("expected a problem");
};

describe("action.yml", () => {
  test("composite: inputs with defaults, outputs with value templates, steps with every key", () => {
    const def = parseActionYml(
      `name: c
inputs:
  a: { required: true }
  b: { default: "\${{ github.token }}" }
  n: { default: 3 }
outputs:
  o: { value: "\${{ steps.s.outputs.v }}" }
runs:
  using: composite
  steps:
    - id: s
      name: first
      if: always()
      shell: bash
      run: echo hi
      env: { X: 1 }
      working-directory: sub
      continue-on-error: true
    - uses: ./inner
      with: { k: true }
`,
      "c",
    );
    expect(def).toEqual({
      name: "c",
      inputs: { a: { required: true, default: null }, b: { required: false, default: "${{ github.token }}" }, n: { required: false, default: "3" } },
      outputs: { o: { value: "${{ steps.s.outputs.v }}" } },
      runs: {
        using: "composite",
        steps: [
          {
            id: "s",
            name: "first",
            if: "always()",
            run: "echo hi",
            shell: "bash",
            uses: null,
            with: {},
            env: { X: "1" },
            workingDirectory: "sub",
            continueOnError: true,
          },
          {
            id: null,
            name: null,
            if: null,
            run: null,
            shell: null,
            uses: "./inner",
            with: { k: "true" },
            env: {},
            workingDirectory: null,
            continueOnError: false,
          },
        ],
      },
    });
  });

  test("node16/20/24 with pre, post and their conditions; docker kept for the caller to refuse", () => {
    expect(parseActionYml("runs:\n  using: node24\n  main: dist/index.js\n  pre: p.js\n  post: q.js\n  post-if: success()\n", "n").runs).toEqual({
      using: "node",
      version: "24",
      main: "dist/index.js",
      pre: "p.js",
      preIf: null,
      post: "q.js",
      postIf: "success()",
    });
    expect(parseActionYml("runs:\n  using: docker\n  image: Dockerfile\n", "d").runs).toEqual({ using: "docker", image: "Dockerfile" });
  });

  test("refusals name the file and the problem", () => {
    expect(problem("name: x\n")).toBe("x/y@v1: action.yml: runs is missing (expected runs.using)");
    expect(problem("runs: { using: node20 }\n")).toBe("x/y@v1: action.yml: runs.main is missing (a node20 action names its script)");
    expect(problem("runs: { using: node8, main: a.js }\n")).toContain('runs.using "node8" is not supported');
    expect(problem("runs: { using: python }\n")).toContain('runs.using "python" is not supported (composite, node16, node20, node24)');
    expect(problem("runs:\n  using: composite\n  steps:\n    - run: echo\n")).toBe(
      "x/y@v1: action.yml: runs.steps[0].shell is required for a run step of a composite action",
    );
    expect(problem("runs:\n  using: composite\n  steps:\n    - run: a\n      uses: b\n      shell: bash\n")).toContain("has both run and uses");
    expect(problem("- a\n")).toBe("x/y@v1: action.yml: expected a mapping at the top");
    expect(problem("runs: [\n")).toContain("x/y@v1: action.yml:");
  });

  test("bounded before parsing: bytes, nesting, anchors/aliases (a billion laughs), steps", () => {
    expect(problem(`name: "${"x".repeat(ACTION_FILE_LIMITS.bytes)}"\n`)).toContain(`larger than ${ACTION_FILE_LIMITS.bytes / 1024} KiB`);
    expect(problem(`a: ${"[".repeat(100)}${"]".repeat(100)}\n`)).toContain("nests deeper than");
    const laughs = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 40; i++)
      laughs.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(", ")}]`,
      );
    expect(problem(`${laughs.join("\n")}\nruns: { using: composite, steps: [] }\n`)).toContain("x/y@v1: action.yml:");
    const steps = Array.from({ length: ACTION_FILE_LIMITS.steps + 1 }, () => "    - { shell: bash, run: echo }").join("\n");
    expect(problem(`runs:\n  using: composite\n  steps:\n${steps}\n`)).toBe(`x/y@v1: action.yml: more than ${ACTION_FILE_LIMITS.steps} steps`);
  });
});

describe("INPUT_ names (GitHub's rule)", () => {
  test("upper-cased, spaces to _, dashes kept", () => {
    expect(inputEnvName("who")).toBe("INPUT_WHO");
    expect(inputEnvName("fetch-depth")).toBe("INPUT_FETCH-DEPTH");
    expect(inputEnvName("Extra Word")).toBe("INPUT_EXTRA_WORD");
    expect(inputEnvName("a.b_c")).toBe("INPUT_A.B_C");
  });
});

describe("stdout commands", () => {
  test("::set-output and ::save-state, across chunks, escaped; other lines and malformed commands ignored", () => {
    const c = new StdoutCommands();
    c.push("plain line\n::set-output name=a::one\n::set-out");
    c.push("put name=multi::l1%0Al2%25\r\n::save-state name=s%3Ax::v\n::set-output::no name\n::error::shown only\n");
    c.push("::save-state name=last::no newline");
    c.end();
    expect(c.outputs).toEqual({ a: "one", multi: "l1\nl2%" });
    expect(c.state).toEqual({ "s:x": "v", last: "no newline" });
  });
});

describe("built-in checkout", () => {
  test("any version, case-insensitive; not another action of the same org", () => {
    expect(usesCheckout("actions/checkout@v4")).toBe(true);
    expect(usesCheckout("Actions/Checkout@main")).toBe(true);
    expect(usesCheckout("actions/checkout-x@v4")).toBe(false);
    expect(usesCheckout("./actions/checkout")).toBe(false);
  });
});
