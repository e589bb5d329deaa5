// Fuzz targets for the CI expression language (issue 29): seed expressions and templates mutated,
// and generated hostile ones (deep nesting, long chains, filter storms, huge format/join/toJSON
// results). Invariants: parsing and evaluation end in a value or an ExprError (never another
// throw), every ExprError's offset lies inside its text, results respect EXPR_LIMITS, and an
// error message never holds the secret the contexts carry. Pure and in-process; the caller's cap
// bounds each case's time.
import {
  EXPR_LIMITS,
  ExprError,
  evaluate,
  evaluateCondition,
  parseCondition,
  parseExpression,
  parseTemplate,
  renderTemplate,
} from "../../src/services/ci/expr/index.ts";
import type { Contexts } from "../../src/services/ci/expr/index.ts";
import { MASK, Masker, maskForms } from "../../src/services/ci/mask.ts";
import { CronError, cronMatches, parseCron } from "../../src/services/ci/cron.ts";
import { parseFileCommands, parsePathFile } from "../../cli/runner/files.ts";
import { notRunYet, parseWorkflowTask, WORKFLOW_LIMITS } from "../../src/services/ci/workflow.ts";
import { scanCounts } from "../../src/services/ci/workflow-scan.ts";
import { isAlias, isMap, isSeq, parseDocument, visit } from "yaml";
import { mutate, type Rand, type Target } from "./lib.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A value no message may contain. */
const SECRET = "fuzz-s3cret-VALUE";

const CONTEXTS: Contexts = Object.freeze<Contexts>({
  github: { sha: "abc", ref: "refs/heads/main", event: { commits: [{ id: "a", author: { name: "x" } }, { id: "b" }], labels: [{ name: "bug" }] } },
  needs: { build: { result: "success", outputs: { json: '{"a":[1,2,{"b":"c"}]}', text: SECRET } } },
  matrix: { os: "linux", n: 3 },
  vars: { X: "1" },
  inputs: { flag: true, s: "x" },
  secrets: { TOKEN: SECRET },
  steps: { s1: { outputs: { o: "v" } } },
  env: { A: "b" },
});

const SEEDS = [
  "github.ref == 'refs/heads/main' && !startsWith(github.ref, 'refs/tags/')",
  "contains(github.event.labels.*.name, 'bug') || failure()",
  "fromJSON(needs.build.outputs.json).a[2].b",
  "format('{0}-{1}{{}}', matrix.os, matrix.n) != 'x' && always()",
  "join(github.event.commits.*.author.name, ', ')",
  "toJSON(github.event)",
  "(0xff == '255') && (.5 < 1) && -Infinity < NaN || null",
  "endsWith(secrets.TOKEN, 'VALUE') && cancelled() == false",
  "steps.s1.outputs['o'] == 'V' && inputs.flag",
  "github['event']['commits'][*].id[0]",
  "fromJSON(secrets.TOKEN) || fromJSON(needs.build.outputs.text)",
];

const TEMPLATES = [
  "echo ${{ matrix.os }} ${{ github.sha }}\nrun ${{ format('{0}', '}}') }}",
  "${{ needs.build.outputs.text }}",
  "a ${{ 'it''s' }} b ${{ toJSON(matrix) }} c",
  "${{ fromJSON('[1,2]') }}",
];

/** A generated hostile expression. */
function generated(r: Rand): string {
  const n = r.int(3000);
  switch (r.int(8)) {
    case 0:
      return `${"(".repeat(n)}1${")".repeat(r.int(n + 1))}`;
    case 1:
      return `${"!".repeat(n)}github`;
    case 2:
      return `github${".a".repeat(n)}`;
    case 3:
      return `github.event${".*".repeat(r.int(40))}`;
    case 4:
      return `${"contains(".repeat(r.int(80))}'a', 'b'${")".repeat(r.int(80))}`;
    case 5:
      return `format('${"{0}".repeat(r.int(2000))}', needs.build.outputs.json)`;
    case 6:
      return `fromJSON('${"[".repeat(r.int(200))}${"]".repeat(r.int(200))}')`;
    default:
      return Array.from({ length: r.int(500) }, () =>
        r.pick(["github", ".", "[", "]", "(", ")", "'", "''", "==", "&&", "||", "!", "1", "0x", ",", "*", " "]),
      ).join("");
  }
}

/** Throws unless `e` is a clean ExprError about `text` that names no secret. */
function checkError(e: unknown, text: string): void {
  if (!(e instanceof ExprError)) throw e;
  if (!(e.offset >= 0 && e.offset <= text.length)) throw new Error(`offset ${e.offset} outside the text (${text.length} chars): ${e.message}`);
  if (e.message.includes(SECRET)) throw new Error(`an error message holds the secret: ${e.message}`);
}

function checkResult(v: unknown): void {
  if (typeof v === "string" && v.length > EXPR_LIMITS.resultChars) throw new Error(`a result of ${v.length} characters`);
}

/** Expressions, conditions and templates: seeds mutated, and generated storms. */
export function exprTarget(): Target {
  return {
    name: "ci expressions",
    run(r) {
      const kind = r.int(3);
      const text =
        kind === 2
          ? dec.decode(mutate(enc.encode(r.pick(TEMPLATES)), r, 6))
          : r.chance(0.3)
            ? generated(r)
            : dec.decode(mutate(enc.encode(r.pick(SEEDS)), r, 6));
      const status = { success: r.chance(0.5), failure: r.chance(0.5), cancelled: r.chance(0.2) };
      const hashFiles = (p: string[]) => p.join("|");
      try {
        if (kind === 0) checkResult(evaluate(parseExpression(text, { status: true }), { contexts: CONTEXTS, status, hashFiles }));
        else if (kind === 1) evaluateCondition(parseCondition(text), { contexts: CONTEXTS, status, hashFiles });
        else checkResult(renderTemplate(parseTemplate(text), { contexts: CONTEXTS, hashFiles }));
      } catch (e) {
        checkError(e, text);
      }
    },
  };
}

/**
 * Masking as the contract says it, naively: at each position the longest form there becomes
 * `***` and the scan goes on after it; else one code unit is kept. The Masker must answer the same.
 */
export function maskReference(values: readonly string[], text: string): string {
  const forms = [...new Set(values.flatMap((v) => maskForms(v)))];
  let out = "";
  for (let i = 0; i < text.length; ) {
    let best = 0;
    for (const f of forms) if (f.length > best && text.startsWith(f, i)) best = f.length;
    out += best ? MASK : text[i];
    i += best || 1;
  }
  return out;
}

/**
 * One differential case: `values` masked over `text` cut into random writes, with `later` added
 * after a random write (`::add-mask::`). Checks: what came out before the add is the reference
 * over the text then consumed, what came after it the reference with every value over the rest;
 * the held tail is at most the longest form less one and a proper prefix of a form. `budget` 0
 * makes the masker go on with its automata at the first compare (its linear path).
 */
export function maskDifferential(r: Rand, values: string[], text: string, later: string | null, budget?: number): void {
  const m = new Masker(values, { budget });
  const addAt = later === null ? -1 : r.int(text.length + 1);
  let before = "";
  let after = "";
  let consumed = -1;
  const formsBefore = values.flatMap((v) => maskForms(v));
  const formsAfter = later === null ? formsBefore : [...formsBefore, ...maskForms(later)];
  for (let i = 0; i <= text.length; ) {
    if (consumed < 0 && later !== null && i >= addAt) {
      consumed = i - m.holding;
      m.add(later);
    }
    if (i === text.length) break;
    const n = 1 + r.int(r.chance(0.5) ? 4 : 64);
    const out = m.push(text.slice(i, i + n));
    if (consumed < 0) before += out;
    else after += out;
    i = Math.min(text.length, i + n);
    const forms = consumed < 0 ? formsBefore : formsAfter;
    const held = text.slice(i - m.holding, i);
    // A proper prefix of a form: so also shorter than the longest form.
    if (held && !forms.some((f) => f.length > held.length && f.startsWith(held))) throw new Error(`held ${JSON.stringify(held)}, which starts no form`);
  }
  if (consumed < 0) {
    before += m.flush();
    const want = maskReference(values, text);
    if (before !== want) throw new Error(`masked ${JSON.stringify(before)} != reference ${JSON.stringify(want)} for ${JSON.stringify(values)}`);
    return;
  }
  after += m.flush();
  const want1 = maskReference(values, text.slice(0, consumed));
  const want2 = maskReference([...values, later!], text.slice(consumed));
  if (before !== want1 || after !== want2)
    throw new Error(
      `masked ${JSON.stringify([before, after])} != reference ${JSON.stringify([want1, want2])} for ${JSON.stringify(values)} + ${JSON.stringify(later)} at ${consumed}`,
    );
}

/**
 * Log masking: random values over a small alphabet (so values overlap, repeat, and are prefixes
 * of each other; two units outside Latin-1 share the masker's table slots with `a` and with NUL),
 * text built from them, cut into random writes, against the naive reference (maskDifferential).
 */
export function maskTarget(): Target {
  const ALPHABET = "ab\nc=+/%\u0161\u0100";
  const word = (r: Rand, n: number) => Array.from({ length: n }, () => ALPHABET[r.int(ALPHABET.length)]).join("");
  return {
    name: "log masking",
    run(r) {
      // Sometimes every value is long enough for the masker's skip loop (shortest form ≥ 4).
      const min = r.chance(0.3) ? 4 : 1;
      const value = () => word(r, min + r.int(r.chance(0.2) ? 40 : 8));
      const values = Array.from({ length: 1 + r.int(6) }, value);
      const pieces: string[] = [];
      for (let i = r.int(40); i > 0; i--) {
        const v = r.pick(values);
        pieces.push(
          r.pick([v, v.slice(0, r.int(v.length + 1)), Buffer.from(word(r, r.int(3)) + v).toString("base64"), encodeURIComponent(v), word(r, r.int(12))]),
        );
      }
      const text = pieces.join("");
      const whole = new Masker(values).mask(text);
      const visible = whole.split(MASK).join("\u0000");
      for (const v of values) if (visible.includes(v)) throw new Error(`${JSON.stringify(v)} is visible in ${JSON.stringify(whole)}`);
      maskDifferential(r, values, text, r.chance(0.3) ? value() : null, r.chance(0.5) ? 0 : undefined);
    },
  };
}

const CRONS = ["*/15 * * * *", "30 5 * * MON-FRI", "0 0 13 * 5", "10-20/5 8-9 1,15 JAN-jun 0-7", "5/20 * * * *"];

/** Cron texts: seeds mutated; a parse ends in a schedule or a CronError inside the text, and matching never throws. */
export function cronTarget(): Target {
  return {
    name: "cron",
    run(r) {
      const text = dec.decode(mutate(enc.encode(r.pick(CRONS)), r, 6));
      let cron: ReturnType<typeof parseCron>;
      try {
        cron = parseCron(text);
      } catch (e) {
        if (!(e instanceof CronError)) throw e;
        if (!(e.offset >= 0 && e.offset <= text.length)) throw new Error(`offset ${e.offset} outside ${JSON.stringify(text)}`);
        return;
      }
      for (let i = 0; i < 20; i++) cronMatches(cron, r.int(2 ** 31) * 1000);
    },
  };
}

/**
 * The runner's file commands ($GITHUB_OUTPUT, $GITHUB_ENV, $GITHUB_PATH): entries written the way
 * a step writes them parse back to themselves; mutated files parse or are refused, never throw.
 */
export function fileCommandsTarget(): Target {
  const CHARS = "ab=<\n EOF-_1";
  return {
    name: "runner file commands",
    run(r) {
      const entries: [string, string][] = [];
      let text = "";
      for (let i = r.int(8); i > 0; i--) {
        const name = `${r.pick(["a", "B", "_x"])}${r.int(100)}`;
        const value = Array.from({ length: r.int(30) }, () => CHARS[r.int(CHARS.length)]).join("");
        entries.push([name, value]);
        if (!value.includes("\n") && r.chance(0.5)) text += `${name}=${value}\n`;
        else {
          let delimiter = "EOF";
          while (value.split("\n").includes(delimiter)) delimiter += `_${r.int(10)}`;
          text += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
        }
      }
      const parsed = parseFileCommands(text, "env");
      if (!parsed.ok || JSON.stringify(parsed.entries) !== JSON.stringify(entries))
        throw new Error(`${JSON.stringify(text)} parsed as ${JSON.stringify(parsed)}, wrote ${JSON.stringify(entries)}`);
      const mutated = dec.decode(mutate(enc.encode(text), r, 6));
      parseFileCommands(mutated, r.chance(0.5) ? "env" : "output");
      parsePathFile(mutated);
    },
  };
}

/** Every CI target. */
/** Workflows with what the corpus of real GitHub workflows needed (part F): seeds for the workflow parser. */
const CORPUS_WORKFLOWS = [
  `name: corpus
on:
  push:
  workflow_dispatch:
    inputs:
      n: { type: number, default: 3 }
      where: { type: environment }
concurrency: \${{ github.workflow }}-\${{ github.ref }}
env: &env { A: "1", EMPTY: , cache-name: x }
jobs:
  plan:
    runs-on: { group: big, labels: [self-hosted, linux] }
    timeout-minutes: 14400
    outputs: { m: "\${{ steps.m.outputs.m }}" }
    env: *env
    steps: &steps
      - uses: actions/checkout@v4
        with: { fetch-depth: 0, lfs: true, token: "\${{ secrets.T }}", empty: }
      - uses: $/.github/actions/helper
      - id: m
        run: echo "m={}" >> "$GITHUB_OUTPUT"
        shell: pwsh
      - parallel:
          - run: a
          - uses: octo/lint@v1
  build:
    needs: plan
    runs-on: [x, "\${{ matrix.job.os }}"]
    strategy:
      fail-fast: \${{ github.event_name == 'push' }}
      max-parallel: 2
      matrix:
        job: [ { target: x86_64, os: linux }, { target: aarch64, os: mac } ]
        rust: [stable, nightly]
        exclude: [ { job: { target: aarch64, os: mac }, rust: nightly } ]
        include: [ { rust: nightly, experimental: true }, { rust: beta, job: { os: linux } } ]
    steps: *steps
  dyn:
    needs: plan
    runs-on: \${{ matrix.os }}
    strategy: { matrix: "\${{ fromJSON(needs.plan.outputs.m) }}" }
    steps: [ { run: "python {0}", shell: "python {0}" } ]
  computed:
    runs-on: \${{ fromJSON('["self-hosted", "arm"]') }}
    strategy: { matrix: { os: "\${{ fromJSON(vars.OSES || '[\\"a\\",\\"b\\"]') }}", p: ["\${{ github.ref == 'x' && 'big' || 'small' }}"] } }
    steps: [ { run: y } ]
  call:
    needs: [plan, build]
    uses: ./.github/workflows/release.yml
    with: { dry: true }
    secrets: inherit
    strategy: { matrix: { n: [1, 2] } }
  own:
    uses: $/.github/workflows/build.yml
  remote:
    uses: octo/ci/.github/workflows/lint.yml@v2
    secrets: { TOKEN: "\${{ secrets.NPM }}" }
`,
  `on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: docker://alpine\n      - uses: actions/cache@v4\n        with: { path: a }\n`,
];

/**
 * Hostile shapes around the limits checked before parsing (workflow-scan.ts): a long `needs`
 * chain (block or flow jobs), flat and nested aliases, many lines, wide flow lists, deep nesting;
 * and legitimate text the scan must not count (block scalars, quotes, comments, plain scalars and
 * their continuation lines holding `*`, `&`, `- ` and `jobs:`).
 */
function hostileWorkflow(r: Rand): string {
  const head = "on: push\n";
  const job = (i: number) => `  j${i}:\n${i ? `    needs: j${i - 1}\n` : ""}    runs-on: x\n    steps: [ { run: "echo ${i}" } ]\n`;
  // Near a limit (either side of it), or anywhere up to twice it; mostly small shapes, which parse fast.
  const around = (limit: number) => (r.chance(0.5) ? limit - 3 + r.int(7) : 1 + r.int(limit * 2));
  switch (r.int(7)) {
    case 0: {
      const n = r.chance(0.9) ? 1 + r.int(40) : around(WORKFLOW_LIMITS.jobsPerRun);
      if (r.chance(0.5)) return `${head}jobs:\n${Array.from({ length: n }, (_, i) => job(i)).join("")}`;
      return `${head}jobs: { ${Array.from({ length: n }, (_, i) => `j${i}: { runs-on: x, steps: [ { run: y } ] }`).join(", ")} }\n`;
    }
    case 1: {
      const n = r.chance(0.9) ? r.int(50) : around(WORKFLOW_LIMITS.anchors / 2);
      return `${head}jobs:\n  t:\n    runs-on: x\n    env:\n${Array.from({ length: n }, (_, i) => `      A${i}: &a${i} v\n      B${i}: *a${i}\n`).join("")}    steps: [ { run: y } ]\n`;
    }
    case 2: {
      let lists = "        l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n";
      for (let i = 1, n = 1 + r.int(12); i < n; i++) lists += `        l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(", ")}]\n`;
      return `${head}jobs:\n  a:\n    runs-on: x\n    strategy:\n      matrix:\n${lists}    steps: [ { run: y } ]\n`;
    }
    case 3:
      return `${head}jobs: { t: { runs-on: x, steps: [ { run: y } ] } }\n${r.pick(["\n", "# c\n", "   \n"]).repeat(r.chance(0.9) ? r.int(100) : around(WORKFLOW_LIMITS.lines))}`;
    case 4: {
      const n = r.chance(0.9) ? r.int(500) : around(WORKFLOW_LIMITS.entries);
      return `${head}jobs: { t: { runs-on: x, env: { L: [${Array(n).fill("a").join(", ")}] }, steps: [ { run: y } ] } }\n`;
    }
    case 5: {
      const d = r.chance(0.5) ? r.int(60) : around(WORKFLOW_LIMITS.depth);
      return r.chance(0.5)
        ? `${head}jobs: ${"[".repeat(d)}${"]".repeat(d)}\n`
        : `${head}jobs:\n${Array.from({ length: d }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")}\n`;
    }
    default: {
      // Text that only looks like structure: none of it may be counted.
      const lines = Array.from({ length: 300 }, (_, i) => r.pick([`jobs:`, `  j${i}: *x`, `  - &a${i} b`, `*a &b - c`, `[[[{{{`]));
      return `${head}jobs:
  t:
    runs-on: x
    if: github.ref == 'a' &&
      *x && &y - z
    env: { Q: "jobs: *a &b\n  - x", R: 'it''s *a', S: [a*b, c&d, don't] }  # *a &b [[[
    steps:
      - name: "multi
          *line &quoted - x"
        run: |
${lines.map((l) => `          ${l}`).join("\n")}
      - run: >-
          ${lines.slice(0, 5).join(" ")}
        shell: bash
`;
    }
  }
}

/** The parser's own counts of a document without errors (the scan may count low, never high); null when it has errors. */
function yamlCounts(text: string): { jobs: number; anchors: number; entries: number } | null {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length) return null;
  let anchors = 0;
  let entries = 0;
  visit(doc, {
    Map: (_, n) => void ((entries += n.items.length), n.anchor && anchors++),
    Seq: (_, n) => void ((entries += n.items.length), n.anchor && anchors++),
    Scalar: (_, n) => void (n.anchor && anchors++),
    Alias: () => void anchors++,
  });
  const root = doc.contents;
  const jobsNode = isMap(root) ? root.items.find((p) => (p.key as { value?: unknown } | null)?.value === "jobs")?.value : undefined;
  const jobs = (isMap(jobsNode) || isSeq(jobsNode)) && !isAlias(jobsNode) ? jobsNode.items.length : 0;
  return { jobs, anchors, entries };
}

/**
 * The workflow parser on the corpus constructs and on hostile shapes: never throws, errors name
 * the file, what it plans fits the limits, notRunYet never throws; and the scan before parsing
 * never counts more jobs, anchors and aliases, or entries than the YAML parser finds (so it cannot
 * refuse a legitimate file).
 */
export function workflowCorpusTarget(): Target {
  const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };
  return {
    name: "workflow corpus constructs",
    run(r) {
      const seed = r.chance(0.25) ? hostileWorkflow(r) : r.pick(CORPUS_WORKFLOWS);
      const text = r.chance(0.2) ? seed : dec.decode(mutate(enc.encode(seed), r, 8));
      if (text.length < 16 * 1024) {
        const real = yamlCounts(text);
        if (real) {
          const counted = scanCounts(text);
          for (const k of ["jobs", "anchors", "entries"] as const)
            if (counted[k] > real[k]) throw new Error(`the scan counted ${counted[k]} ${k}, the parser ${real[k]}: ${JSON.stringify(text.slice(0, 300))}`);
        }
      }
      const out = parseWorkflowTask({ path: ".svc/workflows/f.yml", text, trigger, branch: "main" });
      if (!out.ok) {
        if (!out.error.startsWith(".svc/workflows/f.yml")) throw new Error(`an error without its file: ${out.error.slice(0, 200)}`);
        return;
      }
      if (out.jobs.length > WORKFLOW_LIMITS.jobsPerRun) throw new Error(`${out.jobs.length} jobs`);
      let total = 0;
      for (const job of out.jobs) total += JSON.stringify(job).length;
      // Each job's strings are charged (≤ 1 MiB a run); JSON quoting and default step names add a bounded overhead.
      if (total > 4 * WORKFLOW_LIMITS.runSpecBytes) throw new Error(`a run of ${total} characters of jobs`);
      notRunYet(".svc/workflows/f.yml", out);
    },
  };
}

export function ciTargets(): Target[] {
  return [exprTarget(), maskTarget(), cronTarget(), fileCommandsTarget(), workflowCorpusTarget()];
}
