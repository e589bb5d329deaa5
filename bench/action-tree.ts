// What checking a cached action against its commit's tree costs the agent (issue 30 audit, FIX30):
// checks out `--repo <git dir>` at `--rev` the way cli/runner/actions/fetch.ts does (init, attributes
// unsetting conversions, shallow fetch, checkout, .git removed), then times treeOidOfDir over the
// copy `--rounds` times and, beside it, what a re-fetch costs (the same checkout again).
//   bun bench/action-tree.ts --repo /path/to/setup-node.git [--rev HEAD] [--rounds 30]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { treeOidOfDir } from "../cli/runner/actions/tree-hash.ts";

const { values } = parseArgs({ options: { repo: { type: "string" }, rev: { type: "string", default: "HEAD" }, rounds: { type: "string", default: "30" } } });
if (!values.repo) throw new Error("--repo <git dir> is required");
const repo = values.repo;
const rounds = Number(values.rounds);

function git(cwd: string, args: string[]): string {
  const p = Bun.spawnSync(["git", ...args], { cwd, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr.toString()}`);
  return p.stdout.toString().trim();
}

const commit = git(repo, ["rev-parse", `${values.rev}^{commit}`]);
const tree = git(repo, ["rev-parse", `${commit}^{tree}`]);
const root = mkdtempSync(join(tmpdir(), "action-tree-"));

/** The agent's fetch of one commit into `dir`, timed. */
function checkout(dir: string): number {
  const t0 = performance.now();
  mkdirSync(dir);
  git(dir, ["init", "-q", "."]);
  mkdirSync(join(dir, ".git", "info"), { recursive: true });
  writeFileSync(join(dir, ".git", "info", "attributes"), "* -text -eol -filter -ident -working-tree-encoding\n");
  git(dir, ["fetch", "-q", "--no-tags", "--depth", "1", `file://${repo}`, commit]);
  git(dir, ["checkout", "-q", "--detach", "FETCH_HEAD"]);
  rmSync(join(dir, ".git"), { recursive: true, force: true });
  return performance.now() - t0;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
try {
  const copy = join(root, "copy");
  checkout(copy);
  const files = Number(
    Bun.spawnSync(["sh", "-c", `find '${copy}' -type f | wc -l`])
      .stdout.toString()
      .trim(),
  );
  const bytes = Number(
    Bun.spawnSync(["sh", "-c", `du -sb '${copy}' | cut -f1`])
      .stdout.toString()
      .trim(),
  );
  const verify: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const oid = await treeOidOfDir(copy);
    verify.push(performance.now() - t0);
    if (oid !== tree) throw new Error(`tree mismatch: ${oid} != ${tree}`);
  }
  const refetch: number[] = [];
  for (let i = 0; i < Math.min(rounds, 10); i++) refetch.push(checkout(join(root, `again-${i}`)));
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  console.log(JSON.stringify({ commit, tree, files, bytes }, null, 0));
  console.log(
    `verify (treeOidOfDir)  p50 ${ms(pct(verify, 0.5))}  p90 ${ms(pct(verify, 0.9))}  min ${ms(Math.min(...verify))}  max ${ms(Math.max(...verify))}`,
  );
  console.log(
    `re-fetch (file://)     p50 ${ms(pct(refetch, 0.5))}  p90 ${ms(pct(refetch, 0.9))}  min ${ms(Math.min(...refetch))}  max ${ms(Math.max(...refetch))}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
