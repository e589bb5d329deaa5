// Fuzzing what the agent reads from an action (issue 30): action.yml (cli/runner/actions/
// action-yml.ts) from seeds of every kind plus hostile shapes (aliases, nesting, long lists),
// mutated; and the `::set-output` / `::save-state` reader of a process's stdout, fed in random
// chunks. Invariants: the parser answers a definition or an ActionProblem whose message names the
// action (never another throw), within the limits; the stdout reader never throws and keeps at
// most FILE_COMMAND_LIMITS.entries commands. FUZZ_CASES_SCALE scales the cases.
import { describe, expect, test } from "bun:test";
import { ActionProblem } from "../../cli/runner/action-host.ts";
import { ACTION_FILE_LIMITS, parseActionYml } from "../../cli/runner/actions/action-yml.ts";
import { StdoutCommands } from "../../cli/runner/actions/commands.ts";
import { FILE_COMMAND_LIMITS } from "../../cli/runner/files.ts";
import { mutate, type Rand, runTarget, type Target } from "./lib.ts";

const SCALE = Number(process.env.FUZZ_CASES_SCALE ?? "1");
const SEED = Number(process.env.FUZZ_SEED ?? "20261128");
const enc = new TextEncoder();
const dec = new TextDecoder();

const SEEDS = [
  `name: c
inputs:
  a: { required: true }
  b: { default: "\${{ github.token }}" }
outputs:
  o: { value: "\${{ steps.s.outputs.v }}" }
runs:
  using: composite
  steps:
    - id: s
      shell: bash
      run: echo "v=1" >> "$GITHUB_OUTPUT"
      env: { X: 1 }
      continue-on-error: \${{ inputs.a == 'x' }}
    - uses: ./inner
      with: { k: true, n: 3 }
`,
  "runs:\n  using: node20\n  main: dist/index.js\n  pre: pre.js\n  pre-if: runner.os == 'Linux'\n  post: post.js\n  post-if: success()\n",
  "name: d\nruns:\n  using: docker\n  image: docker://alpine\n",
  "base: &b { shell: bash, run: echo }\nruns:\n  using: composite\n  steps: [*b, *b, *b]\n",
];

/** Hostile shapes: alias storms, deep nesting, many steps. */
function hostile(r: Rand): string {
  switch (r.int(3)) {
    case 0: {
      const lines = ["a0: &a0 [x, x, x, x, x, x, x, x]"];
      for (let i = 1; i < 2 + r.int(30); i++)
        lines.push(
          `a${i}: &a${i} [${Array(8)
            .fill(`*a${i - 1}`)
            .join(", ")}]`,
        );
      return `${lines.join("\n")}\nruns: { using: composite, steps: [] }\n`;
    }
    case 1: {
      const d = 1 + r.int(200);
      return `runs: ${"[".repeat(d)}${"]".repeat(d)}\n`;
    }
    default:
      return `runs:\n  using: composite\n  steps:\n${Array.from({ length: r.int(2 * ACTION_FILE_LIMITS.steps) }, () => "    - { shell: bash, run: x }").join("\n")}\n`;
  }
}

const actionYml: Target = {
  name: "action.yml",
  run(r) {
    const seed = r.chance(0.2) ? hostile(r) : r.pick(SEEDS);
    const text = r.chance(0.2) ? seed : dec.decode(mutate(enc.encode(seed), r, 8));
    try {
      const def = parseActionYml(text, "o/a@v1");
      if (def.runs.using === "composite" && def.runs.steps.length > ACTION_FILE_LIMITS.steps) throw new Error(`${def.runs.steps.length} steps`);
      if (Object.keys(def.inputs).length > ACTION_FILE_LIMITS.io) throw new Error("too many inputs");
    } catch (e) {
      if (!(e instanceof ActionProblem)) throw e;
      if (!e.message.startsWith("o/a@v1: ")) throw new Error(`a problem without its action: ${e.message.slice(0, 200)}`);
    }
  },
};

const stdoutCommands: Target = {
  name: "stdout commands",
  run(r) {
    const c = new StdoutCommands();
    const lines = ["::set-output name=a::b", "::save-state name=s::v%0A", "::set-output name=::x", "::error::e", "plain", "::save-state name=x,y=z::1"];
    let text = Array.from({ length: r.int(3000) }, () => r.pick(lines)).join(r.chance(0.5) ? "\n" : "\r\n");
    if (r.chance(0.3)) text = dec.decode(mutate(enc.encode(text), r, 8));
    for (let at = 0; at < text.length; ) {
      const n = 1 + r.int(200);
      c.push(text.slice(at, at + n));
      at += n;
    }
    c.end();
    const kept = Object.keys(c.outputs).length + Object.keys(c.state).length;
    if (kept > FILE_COMMAND_LIMITS.entries) throw new Error(`${kept} commands kept`);
  },
};

describe("fuzzing what the agent reads from an action (seeded)", () => {
  for (const [target, cases] of [
    [actionYml, 1500],
    [stdoutCommands, 300],
  ] as const) {
    test(`${target.name}: ${Math.round(cases * SCALE)} cases, no crash, no hang`, async () => {
      const report = await runTarget(target, { seed: SEED, cases: Math.round(cases * SCALE), capMs: 5_000 });
      expect(report.failures).toEqual([]);
    }, 240_000);
  }
});
