// The workflow corpus (issue 29 part F, plan-29 §3.F): the `.github/workflows/*.yml` of real
// public repositories (mirrors brought by the `fetch` tool into /work/.mirror/<owner>+<name>/repo,
// read at their HEAD) are classified, parsed and planned by svc's parser, and compared with a
// reference computed from the raw YAML (bench/lib/workflow-corpus.ts): job ids, needs edges,
// matrix cells per job. Target: ≥ 90 % of the files that are not excluded (docker actions,
// services/container jobs) parse and plan the same graph.
//
//   bun bench/workflows.ts [--mirrors /work/.mirror] [--repos owner/name,…] [--verbose]
//   bun bench/workflows.ts --check      # the fixtures in test/fixtures/workflows/ (no network, seconds)
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { checkWorkflow, corpusSummary, fixtureRows, type CorpusRow as Row } from "./lib/workflow-corpus.ts";
import { machine } from "./lib/machine.ts";

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

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: "/work/.mirror" },
    repos: { type: "string" },
    check: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
});

function corpusRows(): { rows: Row[]; repos: { repo: string; commit: string; branch: string; files: number }[] } {
  const rows: Row[] = [];
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
      rows.push({ repo, file: f, result: checkWorkflow(f.split("/").pop()!, text, branch) });
    }
  }
  return { rows, repos };
}

if (import.meta.main) {
  const started = performance.now();
  const load = loadavg().map((x) => +x.toFixed(2));
  const { rows, repos } = values.check ? { rows: fixtureRows(), repos: [] } : corpusRows();
  const s = corpusSummary(rows);
  for (const r of rows) {
    const res = r.result;
    if (res.kind === "failed") console.log(`FAIL  ${r.repo} ${r.file}: ${res.error.slice(0, 300)}`);
    else if (res.kind === "different") console.log(`DIFF  ${r.repo} ${r.file}: ${res.detail}`);
    else if (values.verbose)
      console.log(`${res.kind === "excluded" ? "EXCL" : "ok  "}  ${r.repo} ${r.file}${res.kind === "excluded" ? `: ${res.reason}` : ""}`);
  }
  console.log(
    JSON.stringify(
      { ...s, ms: Math.round(performance.now() - started), load, machine: values.check ? undefined : machine(), repos: values.check ? undefined : repos },
      null,
      2,
    ),
  );
  if (values.check && s.graphEqual !== s.files - s.excluded) process.exit(1);
}
