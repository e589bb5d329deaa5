// What kind of action a workflow's `uses: owner/repo[/path]@ref` names (issue 30, corpus check):
// its action.yml's `runs.using` at that ref — composite, node12/16/20/24 or docker — read from
// mirrors of the action repositories (brought by the `fetch` tool into /work/.mirror/<owner>+<name>,
// the same place as the corpus) by `bun bench/workflows.ts --resolve-actions`, and kept in
// bench/fixtures/action-kinds.json so the corpus figures are computed offline afterwards. A
// composite action's own `uses:` are resolved too (they must run as well), to a bounded depth.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { parseCondition, parseTemplate } from "../../src/services/ci/expr/index.ts";

/** `runs.using` as read, or why it could not be read. */
export type ActionKind =
  | "composite"
  | "node12"
  | "node16"
  | "node20"
  | "node24"
  | "docker"
  /** No action.yml/action.yaml at that path and ref. */
  | "missing"
  /** No mirror of the repository could be had (the fetch tool has no snapshot). */
  | "unknown"
  /** action.yml there, with a `runs.using` svc has no runner for (e.g. node10), or unreadable. */
  | "other";

export interface ActionInfo {
  kind: ActionKind;
  /** The commit the action.yml was read at (the ref resolved in the mirror, or its HEAD when the ref is not in the snapshot). */
  commit?: string;
  /** True when the ref named is not in the mirror and the kind is HEAD's. */
  atHead?: boolean;
  /** A composite action's own `uses:` (as written). */
  uses?: string[];
  /** The `runs.using` value when the kind is "other". */
  using?: string;
  /** Why the agent would not run it although its kind is one it runs: its action.yml reader or the expression parser refuses the file. */
  refused?: string;
  /** Read by hand where no mirror (or no mirror at that ref) had it: e.g. "read_file vitejs/release-scripts action/release-pr/action.yml @4ab5285". */
  via?: string;
}

export interface ActionKindsFile {
  source: string;
  date: string;
  /** By `owner/repo[/path]@ref`, the name lowercased (GitHub's names are case-insensitive), the ref as written. */
  actions: Record<string, ActionInfo>;
  /** What read each action.yml besides `runs.using` (the agent's reader when the checkout has it, and the expression parser). */
  checkedWith?: string;
}

/** A further check of an action.yml's text: null when it passes, else why not. */
export type ActionYmlCheck = (text: string, what: string) => string | null;

/**
 * The first `${{ }}` (or `if:`) of an action.yml that svc's expression parser refuses, or null:
 * the agent evaluates them when the action runs (descriptions are text, not read).
 */
export function expressionProblem(text: string): string | null {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: -1 });
  } catch {
    return null;
  }
  const walk = (v: unknown, key: string): string | null => {
    if (typeof v === "string") {
      const cond = key === "if" || key === "pre-if" || key === "post-if";
      if (!cond && !v.includes("${{")) return null;
      try {
        if (cond) parseCondition(v);
        else parseTemplate(v);
        return null;
      } catch (e) {
        return `${key}: ${e instanceof Error ? e.message.slice(0, 160) : String(e)}`;
      }
    }
    if (Array.isArray(v)) {
      for (const x of v) {
        const p = walk(x, key);
        if (p) return p;
      }
    } else if (typeof v === "object" && v !== null)
      for (const [k, x] of Object.entries(v)) {
        if (k === "description") continue;
        const p = walk(x, k);
        if (p) return p;
      }
    return null;
  };
  return walk(doc, "");
}

export const ACTION_KINDS_FILE = join(import.meta.dir, "..", "fixtures", "action-kinds.json");

/** How deep composite actions may nest their `uses:` before the check gives up (GitHub allows 10). */
export const COMPOSITE_DEPTH = 10;

/** `owner/repo[/path]@ref` → its key in the file (name lowercased), or null for a local or docker:// reference. */
export function remoteKey(uses: string): string | null {
  if (uses.startsWith("./") || uses.startsWith("$/") || uses.startsWith("docker://")) return null;
  const at = uses.lastIndexOf("@");
  if (at <= 0) return null;
  return `${uses.slice(0, at).toLowerCase()}@${uses.slice(at + 1)}`;
}

/** `owner/repo[/path]` without its ref, lowercased. */
export function actionName(uses: string): string {
  const at = uses.lastIndexOf("@");
  return (at > 0 ? uses.slice(0, at) : uses).toLowerCase();
}

/** The steps' `uses:` of an action.yml text, and its kind. */
export function readActionYml(text: string): { kind: ActionKind; uses: string[]; using?: string } {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: -1 });
  } catch {
    return { kind: "other", uses: [], using: "(unreadable YAML)" };
  }
  const runs = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>).runs : undefined;
  const using = typeof runs === "object" && runs !== null ? String((runs as Record<string, unknown>).using ?? "") : "";
  const u = using.toLowerCase();
  if (u === "composite") {
    const steps = (runs as Record<string, unknown>).steps;
    const uses = Array.isArray(steps)
      ? steps.flatMap((s) =>
          typeof s === "object" && s !== null && typeof (s as Record<string, unknown>).uses === "string" ? [(s as Record<string, string>).uses!] : [],
        )
      : [];
    return { kind: "composite", uses };
  }
  if (u === "docker") return { kind: "docker", uses: [] };
  if (u === "node12" || u === "node16" || u === "node20" || u === "node24") return { kind: u, uses: [] };
  return { kind: "other", uses: [], using: using || "(none)" };
}

/** A git directory's file at a commit, or null. */
function gitShow(dir: string, commit: string, path: string): string | null {
  try {
    return execFileSync("git", ["-C", dir, "show", `${commit}:${path}`], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 16 << 20 });
  } catch {
    return null;
  }
}

/** The action.yml (or action.yaml) text under `path` of a git directory at `commit`, or null. */
export function actionYmlAt(dir: string, commit: string, path: string): string | null {
  const base = path.replace(/^\/+|\/+$/g, "");
  for (const f of ["action.yml", "action.yaml"]) {
    const text = gitShow(dir, commit, base ? `${base}/${f}` : f);
    if (text !== null) return text;
  }
  return null;
}

/** Mirrors by lowercased `owner/name` → their git directory. */
export function mirrorDirs(mirrors: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!existsSync(mirrors)) return out;
  for (const d of readdirSync(mirrors)) {
    const plus = d.indexOf("+");
    if (plus <= 0 || d.endsWith(".part")) continue;
    const dir = existsSync(join(mirrors, d, "repo", ".git")) ? join(mirrors, d, "repo", ".git") : join(mirrors, d, "repo");
    if (existsSync(join(dir, "HEAD"))) out.set(`${d.slice(0, plus)}/${d.slice(plus + 1)}`.toLowerCase(), dir);
  }
  return out;
}

/** Reads one `owner/repo[/path]@ref` from its mirror. */
export function resolveOne(uses: string, dirs: Map<string, string>, check?: ActionYmlCheck): ActionInfo {
  const at = uses.lastIndexOf("@");
  const [owner, repo, ...rest] = uses.slice(0, at).split("/");
  const ref = uses.slice(at + 1);
  const dir = dirs.get(`${owner}/${repo}`.toLowerCase());
  if (!dir) return { kind: "unknown" };
  const rev = (r: string) => {
    try {
      return execFileSync("git", ["-C", dir, "rev-parse", "--verify", "--quiet", `${r}^{commit}`], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
    } catch {
      return null;
    }
  };
  let commit = rev(ref) ?? rev(`refs/tags/${ref}`) ?? rev(`refs/heads/${ref}`);
  const atHead = commit === null;
  commit ??= rev("HEAD");
  if (!commit) return { kind: "unknown" };
  const text = actionYmlAt(dir, commit, rest.join("/"));
  if (text === null) return { kind: "missing", commit, ...(atHead ? { atHead } : {}) };
  const r = readActionYml(text);
  const refused = check && r.kind !== "docker" && r.kind !== "other" ? check(text, uses) : null;
  return {
    kind: r.kind,
    commit,
    ...(atHead ? { atHead } : {}),
    ...(r.kind === "composite" ? { uses: r.uses } : {}),
    ...(r.using ? { using: r.using } : {}),
    ...(refused ? { refused } : {}),
  };
}

/**
 * Resolves every remote reference in `uses` and, through composite actions, the ones they name,
 * from the mirrors: the file's `actions` map.
 */
export function resolveAll(uses: Iterable<string>, mirrors: string, isBuiltin: (uses: string) => boolean, check?: ActionYmlCheck): Record<string, ActionInfo> {
  const dirs = mirrorDirs(mirrors);
  const out: Record<string, ActionInfo> = {};
  const queue = [...uses];
  while (queue.length) {
    const u = queue.shift()!;
    const key = remoteKey(u);
    if (!key || key in out || isBuiltin(u)) continue;
    const info = resolveOne(u, dirs, check);
    out[key] = info;
    for (const n of info.uses ?? []) queue.push(n);
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The committed answers (empty when the file is absent). */
export function loadActionKinds(file = ACTION_KINDS_FILE): ActionKindsFile {
  if (!existsSync(file)) return { source: "", date: "", actions: {} };
  return JSON.parse(readFileSync(file, "utf8")) as ActionKindsFile;
}
