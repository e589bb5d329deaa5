// Fuzz targets for the text parsers of issue 25: the workflow parser (seed workflows mutated,
// and generated nesting and expression storms), the branch glob matcher (against a backtracking
// reference), and the Markdown renderer (seed documents and the hostile corpus mutated, HTML
// pieces stitched together; the output may only hold the sanitizer's allowlist, no event
// attribute, no javascript:/data:/vbscript: URL, no script). Each case is pure and in-process; the caller's cap bounds its time.
import { parseWorkflowTask, WORKFLOW_LIMITS } from "../../src/services/ci/workflow.ts";
import { markdownToHtml } from "../../src/http/web/kit/markdown.ts";
import { FENCE_HIGHLIGHTER } from "../../src/http/web/repos/markdown-fence.ts";
import { HOSTILE } from "../fixtures/markdown/hostile.ts";
import { inspect } from "../fixtures/markdown/inert.ts";
import { compileGlob } from "../../src/util/glob.ts";
import MarkdownIt from "markdown-it";
import { parseSuggestion, SUGGESTION_BODY_MAX } from "../../src/services/changes/suggestion.ts";
import { collectRefs, linkRefs } from "../../src/services/changes/refs.ts";
import { mapRange } from "../../src/services/changes/anchors.ts";
import { searchWords } from "../../src/services/issues/issues.ts";
import { referencesIn } from "../../src/services/issues/xref.ts";
import { splitLines } from "../../src/git/line-diff.ts";
import { mutate, type Rand, type Target } from "./lib.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

const WORKFLOWS = [
  `name: CI
on:
  push:
    branches: [main, "release/**"]
    branches-ignore: [release/old]
  change:
env: { A: "1", B: 2 }
jobs:
  build:
    name: build \${{ matrix.os }}
    runs-on: [self-hosted, "\${{ matrix.os }}"]
    strategy:
      matrix:
        os: [linux, mac]
        node: [18, 20]
        exclude: [ { os: mac, node: 18 } ]
        include: [ { os: linux, node: 22, extra: yes } ]
    timeout-minutes: 30
    steps:
      - name: compile \${{ matrix.node }}
        run: make NODE=\${{ matrix.node }} SHA=\${{ github.sha }}
        env: { C: "\${{ github.ref_name }}" }
      - run: |
          echo one
          echo [two]
`,
  "on: [push, change]\njobs: { a: { runs-on: x, steps: [ { run: y } ] } }\n",
  "on: push\njobs:\n  t:\n    runs-on: self-hosted\n    steps:\n      - run: 'echo ''q''' \n",
  // Issue 29 (v2): needs, if, outputs, step options, concurrency, filters, dispatch inputs, schedules.
  `name: v2
run-name: Deploy \${{ github.ref_name }} \${{ inputs.level }}
on:
  push:
    branches: [main]
    tags: ["v*", "!v0.*"]
    paths: ["src/**", "!src/docs/**"]
    paths-ignore: ["*.md"]
  pull_request:
    types: [opened]
  workflow_dispatch:
    inputs:
      level: { type: choice, options: [low, high], default: low, required: true }
      dry: { type: boolean, default: false }
      note: { description: text, type: string }
  schedule:
    - cron: "*/15 9-17 * JAN-MAR MON-FRI"
    - cron: "0 0 1,15 * *"
  release:
concurrency:
  group: ci-\${{ github.ref }}
  cancel-in-progress: \${{ github.ref != 'refs/heads/main' }}
defaults: { run: { shell: bash, working-directory: src } }
env: { TOKEN: "\${{ secrets.TOKEN }}", REGION: "\${{ vars.REGION }}" }
permissions: { contents: read }
jobs:
  build:
    runs-on: self-hosted
    outputs:
      version: \${{ steps.v.outputs.version }}
    steps:
      - id: v
        run: |
          echo "version=1" >> "$GITHUB_OUTPUT"
          echo \${{ matrix.os || 'none' }}
        if: \${{ github.event_name == 'push' && !contains(github.ref, 'tmp') }}
        working-directory: sub
        continue-on-error: true
        timeout-minutes: 5
  test:
    needs: build
    if: \${{ always() && needs.build.result == 'success' }}
    runs-on: [self-hosted, "\${{ matrix.os }}"]
    strategy: { matrix: { os: [linux, mac], node: [18, 20] }, fail-fast: false }
    concurrency: test-\${{ matrix.os }}-\${{ needs.build.outputs.version }}
    timeout-minutes: \${{ matrix.node }}
    continue-on-error: \${{ matrix.node == 20 }}
    steps:
      - run: echo \${{ needs.build.outputs.version }} \${{ fromJSON('[1,2]')[0] }} \${{ format('{0}', env.TOKEN) }}
        shell: sh
        env: { V: "\${{ steps.x.outputs.y }}" }
  deploy:
    needs: [build, test]
    if: failure() || cancelled()
    environment: production
    runs-on: self-hosted
    steps:
      - run: echo deploy
`,
  "on: push\njobs:\n  a:\n    needs: b\n    runs-on: x\n    steps: [ { run: y } ]\n  b:\n    needs: [a]\n    runs-on: x\n    steps: [ { run: y } ]\n",
];

/** A generated hostile workflow: deep nesting, expression storms, huge matrices or long keys. */
function generatedWorkflow(r: Rand): string {
  switch (r.int(7)) {
    case 5: {
      // A long needs chain (Kahn's order and the cycle walk on 256 jobs), sometimes closed into a cycle.
      const n = 1 + r.int(WORKFLOW_LIMITS.jobsPerRun + 10);
      const cycle = r.chance(0.5);
      const jobs = Array.from(
        { length: n },
        (_, i) => `  j${i}:\n    needs: [${i > 0 ? `j${i - 1}` : cycle ? `j${n - 1}` : ""}]\n    runs-on: x\n    steps: [ { run: y } ]\n`,
      );
      return `on: push\njobs:\n${jobs.join("")}`;
    }
    case 6: {
      // Many conditions and templates: each parsed once per node, within the file's expression limit.
      const ifs = Array.from(
        { length: r.int(400) },
        (_, i) =>
          `      - run: echo \${{ steps.s${i}.outputs.v }}\n        if: \${{ ${r.pick(["success()", "github.ref == 'x'", "(", "!!!a", "contains(", "'}}'"])} }}\n`,
      ).join("");
      return `on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n${ifs}`;
    }
    case 0:
      return `on: push\njobs: ${"[".repeat(r.int(200))}${"]".repeat(r.int(200))}\n`;
    case 1:
      return `on: push\njobs:\n${"- ".repeat(r.int(200))}x\n`;
    case 2: {
      const refs = Array.from({ length: r.int(3000) }, () => r.pick(["${{ matrix.v }}", "${{ ", "}}", "${{ github.sha }}", "${{ x }"])).join(" ");
      return `on: push\njobs:\n  b:\n    runs-on: x\n    strategy: { matrix: { v: ["${"v".repeat(r.int(5000))}"] } }\n    steps:\n      - run: "${refs}"\n`;
    }
    case 3: {
      const cells = Array.from({ length: r.int(40) }, (_, i) => i).join(", ");
      return `on: push\njobs:\n  m:\n    runs-on: x\n    strategy: { matrix: { a: [${cells}], b: [${cells}] } }\n    steps: [ { run: "${"s".repeat(r.int(20_000))}" } ]\n`;
    }
    default:
      return Array.from({ length: r.int(120) }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n");
  }
}

/** The workflow parser: never throws, refuses with `path…: reason`, and what it accepts fits the budgets. */
export function workflowTarget(): Target {
  const trigger = { sha: "a".repeat(40), ref: "refs/heads/main", repository: "acme/api", event: "push" as const };
  return {
    name: "workflow parser",
    run(r) {
      const text = r.chance(0.3) ? generatedWorkflow(r) : dec.decode(mutate(enc.encode(r.pick(WORKFLOWS)), r, 8));
      const out = parseWorkflowTask({ path: ".svc/workflows/f.yml", text, trigger, branch: "main" });
      if (!out.ok) {
        if (!out.error.startsWith(".svc/workflows/f.yml")) throw new Error(`an error without its file: ${out.error.slice(0, 200)}`);
        if (out.error.length > 2000) throw new Error(`an error of ${out.error.length} characters`);
        return;
      }
      let total = 0;
      for (const job of out.jobs) {
        let size = job.key.length + job.runsOn.join("").length;
        for (const [k, v] of Object.entries(job.spec.env)) size += k.length + v.length;
        for (const s of job.spec.steps)
          size +=
            s.name.length +
            (s.run ?? s.uses ?? "").length +
            Object.entries(s.with ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0) +
            Object.entries(s.env).reduce((n, [k, v]) => n + k.length + v.length, 0);
        // Default step names (the first 80 characters of the script) are not charged.
        if (size > WORKFLOW_LIMITS.jobSpecBytes + 80 * job.spec.steps.length)
          throw new Error(`a job of ${size} characters passed the ${WORKFLOW_LIMITS.jobSpecBytes} budget`);
        total += size;
      }
      if (total > WORKFLOW_LIMITS.runSpecBytes + 80 * WORKFLOW_LIMITS.stepsPerJob * out.jobs.length)
        throw new Error(`a run of ${total} characters passed the budget`);
      if (out.jobs.length > WORKFLOW_LIMITS.jobsPerRun) throw new Error(`${out.jobs.length} jobs`);
    },
  };
}

/** The old RegExp translation of a glob: the reference (correct, exponential on `*a*a*…b`). */
export function referenceGlob(pattern: string, value: string): boolean {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      re += ".*";
      i++;
      while (pattern[i + 1] === "*") i++;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`${re}$`, "s").test(value);
}

/** The glob matcher: agrees with the reference on small cases; answers big adversarial ones at once. */
export function globTarget(): Target {
  const atoms = ["a", "b", "/", "*", "**", "?", ".", "-", "[", "(", "\\", "é"];
  return {
    name: "branch globs",
    run(r) {
      if (r.chance(0.1)) {
        const stars = 5 + r.int(30);
        const pattern = `${"*a".repeat(stars)}${r.pick(["*b", "**b", "?b", "b"])}`;
        const value = "a".repeat(20 + r.int(200)) + (r.chance(0.5) ? "b" : "");
        compileGlob(pattern).match(value); // only its time matters (the cap)
        return;
      }
      let pattern = "";
      for (let i = r.int(9); i > 0; i--) pattern += r.pick(atoms);
      let value = "";
      for (let i = r.int(12); i > 0; i--) value += r.pick(atoms.filter((a) => a !== "*" && a !== "**" && a !== "?"));
      const got = compileGlob(pattern).match(value);
      const want = referenceGlob(pattern, value);
      if (got !== want) throw new Error(`glob ${JSON.stringify(pattern)} on ${JSON.stringify(value)}: ${got}, the reference says ${want}`);
    },
  };
}

const MARKDOWN = [
  "# Title\n\nSome *emphasis*, **strong**, `code`, [a link](docs/a.md) and ![img](img/x.png).\n\n- one\n- two\n\n1. first\n\n> quote\n\n```ts\nconst a = 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
  '<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) ![z](data:image/png;base64,AAAA) <img src=x onerror=alert(1)>\n\n<a href="javascript:1">a</a>',
  '[ref]: http://example.com "t"\n\n[link][ref] <http://auto.example> www.example.com\n\n***\n\n    indented code\n\n*a **b *c* d** e*',
];

/** Pieces of HTML a generated case is built from: tags of the allowlist and outside it, attributes, quotes, URLs. */
const HTML_PIECES = [
  "<details open>",
  "</details>",
  "<summary>",
  "<picture>",
  '<source srcset="',
  "<img ",
  "<a ",
  "</a>",
  "<svg>",
  "<math>",
  "<script>",
  "</script>",
  "<style>",
  "<noscript>",
  "<textarea>",
  "<template>",
  "<!--",
  "-->",
  "<![CDATA[",
  "]]>",
  "<input ",
  '<input type="checkbox" data-own="x" ',
  "<table><tr><td>",
  "<kbd>",
  "<h2 ",
  'href="',
  'src="',
  'id="main" ',
  'name="x" ',
  "onerror=",
  'onload="',
  'style="',
  'class="hl-kwd" ',
  "javascript:",
  "java\tscript:",
  "&#106;avascript:",
  "data:text/html,",
  "vbscript:",
  "../../../",
  "%2e%2e/",
  "..\\",
  "//evil.example",
  " 2x, ",
  '"',
  "'",
  ">",
  "/>",
  "<",
  "=",
  " ",
  "\n\n",
  "```ts\n",
  "\n```\n",
  "- [ ] ",
  "# ",
  "[t](#",
  ")",
];

/** The Markdown renderer: whatever the input, only allowlisted tags, attributes and classes, only safe URLs, no script (test/fixtures/markdown/inert.ts). */
export function markdownTarget(): Target {
  const base = { repo: "/acme/app", ref: "main", dir: "docs" };
  const seeds = [...MARKDOWN, ...Object.values(HOSTILE)];
  return {
    name: "Markdown renderer",
    run(r) {
      const kind = r.int(20);
      const source =
        kind < 3
          ? r.pick(["[", "*", "_", "`", ">", "- ", "<", "![", "](", "\n"]).repeat(r.int(4000))
          : kind < 8
            ? Array.from({ length: 1 + r.int(60) }, () => r.pick(HTML_PIECES)).join("")
            : dec.decode(mutate(enc.encode(r.pick(seeds)), r, 10));
      const out = markdownToHtml(source, base, { fence: r.chance(0.5) ? FENCE_HIGHLIGHTER : null });
      const { problems } = inspect(out);
      if (problems.length)
        throw new Error(`${problems.join("; ")} in the output of ${JSON.stringify(source.slice(0, 300))}: ${JSON.stringify(out.slice(0, 300))}`);
    },
  };
}

/** Lines a suggestion fuzz case is made of: fences of every shape, content, blank lines (no other block syntax). */
const FENCE_LINES = [
  "```suggestion",
  "~~~suggestion",
  "````suggestion",
  "``` suggestion ",
  "   ```suggestion",
  "    ```suggestion",
  "```suggestion`",
  "```suggestion js",
  "```",
  "~~~",
  "````",
  "`````",
  "```   ",
  "   ```",
  "    ```",
  "``` x",
  "~~~~",
  "```js",
  "~~~ suggestion",
];
const CONTENT_LINES = ["a", "b c", "", "  x", "     y", "\tz", "suggestion"];

/**
 * The ```suggestion parser (issue 28): mutated and generated bodies. Any body gives null, a text (LF only,
 * empty or ending in a newline) or an error; a generated body of fence and text lines agrees with
 * markdown-it's top-level fences (the one suggestion's content, or two → error); a text wrapped in a
 * fence longer than any inside it reads back unchanged.
 */
export function suggestionTarget(): Target {
  const md = new MarkdownIt();
  return {
    name: "suggestion parser",
    run(r) {
      const mode = r.int(4);
      if (mode === 0) {
        // Round trip: any text, wrapped in a fence no run inside can close.
        const lines = Array.from({ length: r.int(8) }, () => r.pick([...CONTENT_LINES, ...FENCE_LINES]));
        const text = lines.map((l) => `${l}\n`).join("");
        const longest = Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
        const fence = "`".repeat(longest + 1);
        const eol = r.pick(["\n", "\r\n"]);
        const body = `intro${eol}${fence}suggestion${eol}${lines.map((l) => l + eol).join("")}${fence}${r.chance(0.5) ? eol : ""}`;
        const got = parseSuggestion(body);
        if (JSON.stringify(got) !== JSON.stringify({ text })) throw new Error(`round trip of ${JSON.stringify(body)} gave ${JSON.stringify(got)}`);
        return;
      }
      if (mode === 1) {
        // Differential against markdown-it over bodies of fence, content and blank lines only.
        const lines = Array.from({ length: r.int(12) }, () => r.pick(r.chance(0.4) ? FENCE_LINES : CONTENT_LINES));
        const body = lines.join(r.pick(["\n", "\r\n"])) + (r.chance(0.5) ? "\n" : "");
        const fences = md.parse(body, {}).filter((t) => t.type === "fence" && t.level === 0 && t.info.trim() === "suggestion");
        const want =
          fences.length > 1 ? { error: "a comment may hold one suggestion block" } : fences.length === 1 ? { text: lineEnded(fences[0]!.content) } : null;
        const got = parseSuggestion(body);
        if (JSON.stringify(got) !== JSON.stringify(want))
          throw new Error(`${JSON.stringify(body)}: parser ${JSON.stringify(got)}, markdown-it ${JSON.stringify(want)}`);
        return;
      }
      const body =
        mode === 2
          ? dec.decode(mutate(enc.encode(r.pick(["```suggestion\nx\n```", "~~~~ suggestion\r\na\r\n~~~~\r\n", "text\n```\n```suggestion\n```\n"])), r, 10))
          : r.pick(["```", "~~~", "\n", "\r", "`", " "]).repeat(r.int(r.chance(0.1) ? SUGGESTION_BODY_MAX + 10 : 3000));
      const got = parseSuggestion(body);
      if (got === null) return;
      if ("error" in got) {
        if (typeof got.error !== "string" || !got.error) throw new Error(`empty error for ${JSON.stringify(body.slice(0, 200))}`);
        return;
      }
      if (got.text.includes("\r") || (got.text !== "" && !got.text.endsWith("\n")) || got.text.length > body.length + 1)
        throw new Error(`bad text ${JSON.stringify(got.text.slice(0, 200))} for ${JSON.stringify(body.slice(0, 200))}`);
    },
  };
}

/** markdown-it leaves an unclosed fence's last line unterminated at the end of the input; CommonMark (and the parser) end it. */
function lineEnded(text: string): string {
  return text === "" || text.endsWith("\n") ? text : `${text}\n`;
}

/** Comment bodies full of references, in text, code, links and emphasis. */
const REF_BODIES = [
  "see #1 and #22, ask @bo or @ada-l; `#1 @bo` and [#1](/x) stay",
  "```\n#3 @bo\n```\n\n> quoted #4 @ada\n\n*#5* **@bo** mail bo@x.org, a&#1; b#6 c@d",
  "<a href=x>#7</a> &lt;@bo&gt; #08 #9x @-x @x- @bo.@bo",
  "- #1\n- @ada\n\n| #2 | @bo |\n|---|---|\n| `@x` | #3 |",
  "see acme/api#1, (Acme/API#2). ops/x.y_z-1#3 `acme/api#1` [acme/api#1](/x) a.b/c#1 x/..#2 o/r/s#1 x/y-#4 #4",
  "```\nacme/api#9\n```\n\n> acme/api#7 *ops/web#8* @bo/app#1 acme/api#0 acme/api#1x",
];

/** Replaces each link the post-pass could have made with its text (a fixpoint for markup without them). */
function unlinkRefs(markup: string): string {
  return markup.replace(
    /<a href="(?:\/acme\/app\/(?:changes|issues)\/[0-9]+|\/[A-Za-z0-9-]+|\/x\/[a-z0-9-]+\/[a-z0-9._-]+\/changes\/[0-9]+)">((?:#[0-9]+)|(?:@[A-Za-z0-9-]+)|(?:[A-Za-z0-9-]+\/[A-Za-z0-9._-]+#[0-9]+))<\/a>/g,
    "$1",
  );
}

/**
 * The `#N` / `org/repo#N` / `@handle` post-pass of comment markup (issue 28): on rendered, mutated bodies it only
 * adds links (taking them out gives the input back), never inside a link, code span or block,
 * only to the changes, repositories and people it was given, and it finds nothing to change when given none.
 */
export function refsTarget(): Target {
  const base = { repo: "/acme/app", ref: "main", dir: "" };
  return {
    name: "comment references",
    run(r) {
      const source = r.chance(0.15)
        ? r.pick(["#1 ", "@bo ", "`", "<", "&#", "#", "@", "[", "](", "\n"]).repeat(r.int(3000))
        : dec.decode(mutate(enc.encode(r.pick(REF_BODIES)), r, 10));
      const markup = markdownToHtml(source, base);
      const found = collectRefs(markup);
      const changes = new Set(found.numbers.filter(() => r.chance(0.7)));
      const people = new Map(found.handles.filter(() => r.chance(0.7)).map((h) => [h.toLowerCase(), h]));
      // Other repositories' references: some given as linkable (at /x/{key}), with some of their numbers.
      const repos = new Map(
        [...found.repos]
          .filter(() => r.chance(0.7))
          .map(([key, ref]) => [key, { repoPath: `/x/${key}`, changes: new Set(ref.numbers.filter(() => r.chance(0.7))) }] as const),
      );
      if ([...found.repos.values()].some((ref) => !ref.numbers.length || ref.numbers.some((n) => !Number.isSafeInteger(n) || n < 1)))
        throw new Error(`a bad org/repo#N collected from ${JSON.stringify(markup.slice(0, 300))}`);
      const out = linkRefs(markup, { repoPath: "/acme/app", changes, people, repos });
      if (linkRefs(markup, { repoPath: "/acme/app", changes: new Set(), people: new Map(), repos: new Map() }) !== markup)
        throw new Error("changed markup with nothing to link");
      if (unlinkRefs(out) !== unlinkRefs(markup))
        throw new Error(`not only links added to ${JSON.stringify(markup.slice(0, 300))}: ${JSON.stringify(out.slice(0, 300))}`);
      let depth = 0;
      for (const m of out.matchAll(/<(\/?)(a|code|pre)\b[^>]*>/g)) {
        if (m[1]) depth--;
        else if (m[2] === "a" && depth > 0) throw new Error(`a link inside a link or code in ${JSON.stringify(out.slice(0, 300))}`);
        else depth++;
      }
      for (const m of out.matchAll(/<a href="\/acme\/app\/changes\/([0-9]+)">#[0-9]+<\/a>/g))
        if (!markup.includes(m[0]) && !changes.has(Number(m[1]))) throw new Error(`linked #${m[1]}, which was not given`);
      for (const m of out.matchAll(/<a href="\/x\/([^"]+)\/changes\/([0-9]+)">([^<]*)<\/a>/g))
        if (!markup.includes(m[0]) && (!repos.get(m[1]!)?.changes.has(Number(m[2])) || m[3]!.toLowerCase() !== `${m[1]}#${m[2]}`))
          throw new Error(`linked ${m[3]}, which was not given`);
    },
  };
}

/** Outdated comments (issue 28): a range mapped through random edits holds the same lines, or is null. */
export function mapRangeTarget(): Target {
  return {
    name: "comment ranges",
    run(r) {
      const alphabet = ["a\n", "b\n", "c\n", "a\r\n", "\n", "x"];
      const before = Array.from({ length: r.int(60) }, () => r.pick(alphabet)).join("");
      const lines = splitLines(before);
      const after = [...lines];
      for (let k = r.int(5); k > 0; k--) after.splice(r.int(after.length + 1), r.int(3), ...Array.from({ length: r.int(3) }, () => r.pick(alphabet)));
      if (!lines.length) return;
      const start = 1 + r.int(lines.length);
      const end = Math.min(lines.length, start + r.int(5));
      const m = mapRange(lines, splitLines(after.join("")), start, end);
      if (m === null) return;
      const got = splitLines(after.join("")).slice(m.start - 1, m.end);
      if (JSON.stringify(got) !== JSON.stringify(lines.slice(start - 1, end)))
        throw new Error(`mapped ${start}-${end} of ${JSON.stringify(before)} to ${m.start}-${m.end} of ${JSON.stringify(after.join(""))}`);
    },
  };
}

const MESSAGES = [
  "Fix the crash\n\nFixes #12, see #3 and acme/app#4.",
  "closes: #5 resolved #6 fixed #7 &#8 x#9 #10a",
  "Merge branch 'x'\n\nCloses #1\nResolves #2\nFIX #3",
  "#1 #2 #3 fixes#4 fixes  #5 (fixes #6)",
];

/**
 * Issue references in commit and change text (issue 32) and the list's search words: on mutated
 * messages, `referencesIn` answers at most 50 numbers each, every one a positive integer the text
 * holds as `#N`, closed ones among the mentioned; `searchWords` answers at most 8 words of letters
 * and digits, at most 64 characters each. The issue links of the reference pass go only to
 * the issue numbers given, under /issues/.
 */
export function issueRefsTarget(): Target {
  return {
    name: "issue references",
    run(r) {
      const text = r.chance(0.15)
        ? r.pick(["fixes #1 ", "#", "closes ", "#99999999999 ", "\n", "é#1"]).repeat(r.int(5000))
        : dec.decode(mutate(enc.encode(r.pick(MESSAGES)), r, 12));
      const refs = referencesIn(text);
      if (refs.mentioned.length > 50 || refs.closes.length > 50) throw new Error("more than 50 numbers");
      for (const n of [...refs.mentioned, ...refs.closes])
        if (!Number.isSafeInteger(n) || n < 1 || !text.includes(`#${n}`)) throw new Error(`a number ${n} not in ${JSON.stringify(text.slice(0, 200))}`);
      for (const n of refs.closes) if (!refs.mentioned.includes(n)) throw new Error(`closes #${n} without mentioning it`);
      const words = searchWords(text);
      if (words.length > 8 || words.some((w) => w.length > 64 || !/^[\p{L}\p{N}]+$/u.test(w))) throw new Error(`bad words ${JSON.stringify(words)}`);
      const markup = markdownToHtml(text, { repo: "/acme/app", ref: "main", dir: "" });
      const found = collectRefs(markup);
      const issues = new Set(found.numbers.filter(() => r.chance(0.5)));
      const out = linkRefs(markup, { repoPath: "/acme/app", changes: new Set(), issues, people: new Map() });
      for (const m of out.matchAll(/<a href="\/acme\/app\/issues\/([0-9]+)">#[0-9]+<\/a>/g))
        if (!markup.includes(m[0]) && !issues.has(Number(m[1]))) throw new Error(`linked issue #${m[1]}, which was not given`);
      if (unlinkRefs(out) !== unlinkRefs(markup)) throw new Error("not only links added");
    },
  };
}

/** Every text target. */
export function textTargets(): Target[] {
  return [workflowTarget(), globTarget(), markdownTarget(), suggestionTarget(), refsTarget(), mapRangeTarget(), issueRefsTarget()];
}
