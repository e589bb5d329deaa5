// The workflow corpus (issue 29 part F, plan-29 §3.F): the `.github/workflows/*.yml` of real
// public repositories (mirrors brought by the `fetch` tool into /work/.mirror/<owner>+<name>/repo,
// read at their HEAD) are classified, parsed and planned by svc's parser, and compared with a
// reference computed from the raw YAML (bench/lib/workflow-corpus.ts): job ids, needs edges,
// matrix cells per job. Target: ≥ 90 % of the files that are not excluded (docker actions,
// services/container jobs) parse and plan the same graph.
//
// Issue 30 (bench/lib/workflow-runnable.ts): how many of the files run unmodified now (every
// `uses:` a built-in of the agent, an action of the repository, or a mirror of a composite or
// JavaScript action; nothing refused by notRunYet; no container), how many did before (none with
// a `uses:`), what stops the rest (files per reason) and the top 20 actions with their kind. The
// kinds come from bench/fixtures/action-kinds.json, written by --resolve-actions from mirrors of
// the action repositories (brought by the `fetch` tool), so the figures need no network.
//
//   bun bench/workflows.ts [--mirrors /work/.mirror] [--repos owner/name,…] [--verbose]
//   bun bench/workflows.ts --check      # the fixtures in test/fixtures/workflows/ (no network, seconds)
//   bun bench/workflows.ts --resolve-actions   # (re)writes bench/fixtures/action-kinds.json from the mirrors
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { checkWorkflow, corpusSummary, fixtureRows, type CorpusRow as Row } from "./lib/workflow-corpus.ts";
import { machine } from "./lib/machine.ts";
import { ACTION_KINDS_FILE, expressionProblem, loadActionKinds, resolveAll, type ActionKindsFile, type ActionYmlCheck } from "./lib/action-kinds.ts";
import { runnable, runnableSummary, type RunnableRow } from "./lib/workflow-runnable.ts";
import { builtinFor } from "../cli/runner/builtins/index.ts";
import { parseActionYml } from "../cli/runner/actions/action-yml.ts";

/** The corpus: varied workflows (Node, Rust, Python, Go, C, Ruby, TypeScript, Deno projects). */
export const REPOS = [
  "actions/checkout",
  "vitejs/vite",
  "prettier/prettier",
  "biomejs/biome",
  "denoland/deno",
  "pallets/flask",
  "psf/requests",
  "sharkdp/bat",
  "BurntSushi/ripgrep",
  "elysiajs/elysia",
  "tokio-rs/tokio",
  "expressjs/express",
  "fastify/fastify",
  "junegunn/fzf",
  "pypa/pip",
  "cli/cli",
  // Checked after the parser met the sixteen above (held out: their first figures are in bench/README §34).
  "curl/curl",
  "git/git",
  "redis/redis",
  "rails/rails",
  "FRRouting/frr",
  "ddnet/ddnet",
  "ohmyzsh/ohmyzsh",
  "apache/httpd",
  "less/less.js",
  "honojs/hono",
  "vuejs/core",
  "pydantic/pydantic",
  "astral-sh/ruff",
  "golangci/golangci-lint",
];

const FIXTURES = join(import.meta.dir, "..", "test", "fixtures", "workflows");

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: "/work/.mirror" },
    repos: { type: "string" },
    check: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    "resolve-actions": { type: "boolean", default: false },
  },
});

/** A corpus file with what is needed to check it again: its text, branch and repository's git directory. */
type CorpusFile = Row & { text: string; branch: string; dir: string | null };

function corpusRows(): { rows: CorpusFile[]; repos: { repo: string; commit: string; branch: string; files: number }[] } {
  const rows: CorpusFile[] = [];
  const repos: { repo: string; commit: string; branch: string; files: number }[] = [];
  const names = values.repos ? values.repos.split(",") : REPOS;
  for (const repo of names) {
    const dir = join(values.mirrors!, repo.replace("/", "+"), "repo");
    if (!existsSync(dir)) {
      console.error(`${repo}: no mirror at ${dir} (bring it with the fetch tool)`);
      continue;
    }
    const git = (...args: string[]) => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
    const commit = git("rev-parse", "HEAD").trim();
    const branch = git("symbolic-ref", "--short", "HEAD").trim();
    const files = git("ls-tree", "--name-only", "HEAD", ".github/workflows/")
      .split("\n")
      .filter((f) => /\.ya?ml$/.test(f));
    repos.push({ repo, commit, branch, files: files.length });
    for (const f of files) {
      const text = git("show", `HEAD:${f}`);
      rows.push({ repo, file: f, result: checkWorkflow(f.split("/").pop()!, text, branch), text, branch, dir });
    }
  }
  return { rows, repos };
}

/**
 * What refuses an action whose kind the agent runs: the agent's own action.yml reader
 * (cli/runner/actions/action-yml.ts), then svc's expression parser over the file's `${{ }}` and
 * `if:` (the agent evaluates them when the action runs).
 */
const CHECKED_WITH = "the agent's parseActionYml (cli/runner/actions/action-yml.ts) and svc's expression parser";
const actionYmlCheck: ActionYmlCheck = (text, what) => {
  try {
    parseActionYml(text, what);
  } catch (e) {
    return e instanceof Error ? e.message.slice(0, 200) : String(e);
  }
  return expressionProblem(text);
};

/** Writes bench/fixtures/action-kinds.json: the kind of every remote action the corpus names (and the composites' own). */
function resolveActions(rows: CorpusFile[]): ActionKindsFile {
  const uses = new Set<string>();
  for (const r of rows) for (const u of runnable(r.file, r.text, r.branch, r.result, { repoDir: r.dir, actions: {} }).uses) uses.add(u);
  const old = loadActionKinds().actions;
  const actions = resolveAll(uses, values.mirrors!, (u) => builtinFor(u) !== null, actionYmlCheck);
  // A kind read by hand (`via`: the search tool's stored copy) stays when the mirrors know no better.
  for (const [k, v] of Object.entries(actions)) if (old[k]?.via && (v.kind === "unknown" || v.kind === "missing" || v.atHead)) actions[k] = old[k]!;
  const file: ActionKindsFile = {
    source:
      "runs.using of each action.yml at the ref the workflow (or composite action) names, read from the newest stored snapshot of the action's repository (the fetch tool, /work/.mirror); atHead: the ref is not in the snapshot, HEAD's kind is taken; `read_file` entries: a stored copy of the file read by hand (no snapshot to be had)",
    date: new Date().toISOString().slice(0, 10),
    checkedWith: CHECKED_WITH,
    actions,
  };
  writeFileSync(ACTION_KINDS_FILE, `${JSON.stringify(file, null, 2)}\n`);
  return file;
}

if (import.meta.main) {
  const started = performance.now();
  const load = loadavg().map((x) => +x.toFixed(2));
  const { rows, repos } = values.check
    ? { rows: fixtureRows().map((r): CorpusFile => ({ ...r, text: readFileSync(join(FIXTURES, r.file), "utf8"), branch: "main", dir: null })), repos: [] }
    : corpusRows();
  if (values["resolve-actions"]) {
    const f = resolveActions(rows);
    const kinds: Record<string, number> = {};
    for (const v of Object.values(f.actions)) kinds[v.kind] = (kinds[v.kind] ?? 0) + 1;
    const refused = Object.entries(f.actions).flatMap(([k, v]) => (v.refused ? [`${k}: ${v.refused}`] : []));
    console.log(JSON.stringify({ written: ACTION_KINDS_FILE, references: Object.keys(f.actions).length, kinds, checkedWith: f.checkedWith, refused }, null, 2));
    process.exit(0);
  }
  const s = corpusSummary(rows);
  const actions = loadActionKinds().actions;
  const runRows: RunnableRow[] = rows.map((r) => ({
    repo: r.repo,
    file: r.file,
    result: runnable(r.file, r.text, r.branch, r.result, { repoDir: r.dir, actions }),
  }));
  const runs = runnableSummary(runRows, actions);
  for (const r of rows) {
    const res = r.result;
    if (res.kind === "failed") console.log(`FAIL  ${r.repo} ${r.file}: ${res.error.slice(0, 300)}`);
    else if (res.kind === "different") console.log(`DIFF  ${r.repo} ${r.file}: ${res.detail}`);
    else if (values.verbose)
      console.log(`${res.kind === "excluded" ? "EXCL" : "ok  "}  ${r.repo} ${r.file}${res.kind === "excluded" ? `: ${res.reason}` : ""}`);
  }
  if (values.verbose)
    for (const r of runRows)
      console.log(
        `${r.result.now ? "RUNS" : "STOP"}  ${r.repo} ${r.file}${r.result.blockers.length ? `: ${r.result.blockers.join("; ")}` : ""}${r.result.blocking.length ? ` [${r.result.blocking.map((b) => b.name).join(", ")}]` : ""}`,
      );
  console.log(
    JSON.stringify(
      {
        ...s,
        runsUnmodified: runs,
        ms: Math.round(performance.now() - started),
        load,
        machine: values.check ? undefined : machine(),
        repos: values.check ? undefined : repos,
      },
      null,
      2,
    ),
  );
  if (values.check && s.graphEqual !== s.files - s.excluded) process.exit(1);
}
