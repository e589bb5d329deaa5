// Whether a corpus workflow runs unmodified on svc (issue 30, corpus check): it plans (the part F
// check, workflow-corpus.ts), nothing in it is refused when run (`notRunYet`, each job asked on
// its own so every reason is counted), it needs no container (`services:`, `container:`,
// `docker://`), and every `uses:` step resolves: a built-in of the agent (`builtinFor`, any
// version), an action of the workflow's repository (`./path`, `$/path`: its action.yml at HEAD,
// or in the repository checked out into that path by an earlier built-in checkout), or a mirror
// of `owner/repo[/path]@ref` whose action.yml at that ref is composite or JavaScript
// (bench/fixtures/action-kinds.json). A composite action's own `uses:` must resolve as well.
import { parse as parseYaml } from "yaml";
import { notRunYet, parseWorkflow, type TriggerContext } from "../../src/services/ci/workflow.ts";
import { builtinFor } from "../../cli/runner/builtins/index.ts";
import { isNamespaceName, isRepoName, RESERVED_NAMESPACES } from "../../src/services/names.ts";
import { actionName, actionYmlAt, COMPOSITE_DEPTH, readActionYml, remoteKey, type ActionInfo, type ActionKind, type ActionYmlCheck } from "./action-kinds.ts";
import { eventOf, dispatchInputs, excludedBecause, type FileResult } from "./workflow-corpus.ts";

/** The kinds the agent runs (ACTIONS: node12 is accepted by its action.yml reader as well). */
export const RUNNABLE_KINDS: ReadonlySet<ActionKind> = new Set(["composite", "node12", "node16", "node20", "node24"]);

/** What stops a file, one key per reason (a file may have several). */
export type Blocker =
  | "services (a job container for a service)"
  | "container (a job in a container)"
  | "docker:// step"
  | "the parser refuses it"
  | "reusable workflow call (jobs.<id>.uses)"
  | "parallel: step group"
  | "placeholder job reading needs without needs"
  | "concurrency group reading needs without needs"
  | "other notRunYet refusal"
  | "docker action (runs.using: docker)"
  | "action with no mirror to be had"
  | "no action.yml at the ref"
  | "unsupported runs.using"
  | "local action not in the repository"
  | "the agent refuses its action.yml"
  | "an owner or repository name svc cannot hold"
  | "composite actions nested too deep";

export interface RunnableResult {
  /** Ran before issue 30: plans, nothing refused, no `uses:` step at all. */
  before: boolean;
  /** Runs unmodified now. */
  now: boolean;
  blockers: Blocker[];
  /** Every `uses:` of the file's steps, as written (with those of the composites they reach). */
  uses: string[];
  /** The `uses:` of the file's own steps, as written. */
  steps: string[];
  /** Action names (lowercased, no ref) that block it, with the blocker. */
  blocking: { name: string; blocker: Blocker }[];
  /** Local actions (`./x`, `$/x`) used, with their kind. */
  local: { uses: string; kind: ActionKind }[];
  /** Which node versions and composites it relies on (for the figures). */
  kinds: ActionKind[];
  /** Runner systems other than Linux its jobs ask for (runs-on, or the matrix it reads): a runner with that label is needed. */
  os: ("windows" | "macos")[];
}

type Y = unknown;
const isObj = (v: Y): v is Record<string, Y> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Maps a notRunYet message to its reason. */
function refusalOf(message: string): Blocker {
  if (message.includes("a call of the reusable workflow") || message.includes("so the job is planned once its needs ended"))
    return "reusable workflow call (jobs.<id>.uses)";
  if (message.includes(".parallel (")) return "parallel: step group";
  if (message.includes("has no needs)")) return "placeholder job reading needs without needs";
  if (message.includes(".concurrency (")) return "concurrency group reading needs without needs";
  return "other notRunYet refusal";
}

/** Where a job's built-in checkouts put repositories: path (no leading ./, no trailing /) → "self" or the other repository named. */
function checkoutPaths(steps: Y[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of steps) {
    if (!isObj(s) || typeof s.uses !== "string" || actionName(s.uses) !== "actions/checkout") continue;
    const w = isObj(s.with) ? s.with : {};
    const path = String(w.path ?? "")
      .replace(/^\.\//, "")
      .replace(/\/+$/, "");
    const repo = w.repository === undefined ? "self" : String(w.repository);
    out.set(path, repo.includes("${{") && repo.includes("github.repository") ? "self" : repo);
  }
  return out;
}

export interface RunnableContext {
  /** The workflow repository's git directory (local actions are read at its HEAD), or null (fixtures: none). */
  repoDir: string | null;
  /** The committed kinds of remote actions. */
  actions: Record<string, ActionInfo>;
  /** The further check of a local action's action.yml (the remote ones' verdicts are in `actions`). */
  check?: ActionYmlCheck;
}

/** Classifies one corpus file, given the part F result for it. */
export function runnable(path: string, text: string, defaultBranch: string, planned: FileResult, ctx: RunnableContext): RunnableResult {
  const out: RunnableResult = { before: false, now: false, blockers: [], uses: [], steps: [], blocking: [], local: [], kinds: [], os: [] };
  const block = (b: Blocker, name?: string) => {
    if (!out.blockers.includes(b)) out.blockers.push(b);
    if (name !== undefined && !out.blocking.some((x) => x.name === name && x.blocker === b)) out.blocking.push({ name, blocker: b });
  };
  let doc: Y;
  try {
    doc = parseYaml(text, { maxAliasCount: -1 });
  } catch {
    block("the parser refuses it");
    return out;
  }
  // Containers: each reason the file has (excludedBecause names only the first).
  if (isObj(doc) && isObj(doc.jobs))
    for (const job of Object.values(doc.jobs)) {
      if (!isObj(job)) continue;
      if (job.services !== undefined) block("services (a job container for a service)");
      if (job.container !== undefined) block("container (a job in a container)");
      if (Array.isArray(job.steps))
        for (const s of job.steps) if (isObj(s) && typeof s.uses === "string" && s.uses.startsWith("docker://")) block("docker:// step");
    }
  if (planned.kind === "failed" && !excludedBecause(doc)) block("the parser refuses it");

  // notRunYet, each job on its own so that every reason is seen (it stops at the first).
  if (planned.kind !== "excluded" && planned.kind !== "failed") {
    const trigger: TriggerContext = {
      sha: "0123456789abcdef0123456789abcdef01234567",
      ref: `refs/heads/${defaultBranch}`,
      repository: "corpus/repo",
      event: eventOf(doc),
    };
    if (trigger.event === "workflow_dispatch") trigger.inputs = dispatchInputs(doc);
    const name = path.split("/").pop()!;
    const parsed = parseWorkflow(`.svc/workflows/${name}`, text, trigger);
    if (parsed.ok)
      for (const j of parsed.jobs) {
        const m = notRunYet(`.svc/workflows/${name}`, { jobs: [j] });
        if (m) block(refusalOf(m));
      }
  }

  // Every uses: of every job's steps, and of the composite actions they reach.
  const visit = (uses: string, depth: number, checkouts: Map<string, string>) => {
    out.uses.push(uses);
    if (uses.startsWith("docker://") || builtinFor(uses)) return;
    if (depth > COMPOSITE_DEPTH) return block("composite actions nested too deep", actionName(uses));
    let info: ActionInfo | undefined;
    if (uses.startsWith("./") || uses.startsWith("$/")) {
      const rel = uses.slice(2).replace(/\/+$/, "");
      // The repository checked out at the longest path that holds this one (the workspace root by default).
      let base = "";
      for (const p of checkouts.keys()) if (p && (rel === p || rel.startsWith(`${p}/`)) && p.length > base.length) base = p;
      const repo = checkouts.get(base) ?? "self";
      const inRepo = base ? rel.slice(base.length).replace(/^\//, "") : rel;
      const text = repo === "self" && ctx.repoDir ? actionYmlAt(ctx.repoDir, "HEAD", inRepo) : null;
      if (text === null) {
        out.local.push({ uses, kind: "missing" });
        return block("local action not in the repository", uses);
      }
      const r = readActionYml(text);
      const refused = ctx.check && r.kind !== "docker" && r.kind !== "other" ? ctx.check(text, uses) : null;
      info = { kind: r.kind, uses: r.uses, ...(refused ? { refused } : {}) };
      out.local.push({ uses, kind: r.kind });
    } else {
      const key = remoteKey(uses);
      // The mirror lives at the same org/repo on svc: a name svc refuses (or reserves) cannot be mirrored there.
      const [owner = "", repo = ""] = actionName(uses).split("/");
      if (!isNamespaceName(owner) || RESERVED_NAMESPACES.has(owner) || !isRepoName(repo))
        return block("an owner or repository name svc cannot hold", actionName(uses));
      info = key ? ctx.actions[key] : undefined;
      if (!info) info = { kind: "unknown" };
    }
    const name = actionName(uses);
    if (!out.kinds.includes(info.kind)) out.kinds.push(info.kind);
    if (info.kind === "docker") block("docker action (runs.using: docker)", name);
    else if (info.kind === "unknown") block("action with no mirror to be had", name);
    else if (info.kind === "missing") block("no action.yml at the ref", name);
    else if (info.kind === "other") block("unsupported runs.using", name);
    else if (info.refused) block("the agent refuses its action.yml", name);
    else if (info.kind === "composite") for (const n of info.uses ?? []) visit(n, depth + 1, new Map());
  };
  if (isObj(doc) && isObj(doc.jobs))
    for (const job of Object.values(doc.jobs)) {
      if (!isObj(job) || !Array.isArray(job.steps)) continue;
      const steps = job.steps as Y[];
      for (let i = 0; i < steps.length; i++) {
        const s = steps[i];
        if (!isObj(s) || typeof s.uses !== "string") continue;
        out.steps.push(s.uses);
        visit(s.uses, 1, checkoutPaths(steps.slice(0, i)));
      }
    }
  if (isObj(doc) && isObj(doc.jobs))
    for (const job of Object.values(doc.jobs)) {
      if (!isObj(job)) continue;
      let labels = JSON.stringify(job["runs-on"] ?? "");
      if (labels.includes("matrix.")) labels += JSON.stringify(job.strategy ?? "");
      if (/windows/i.test(labels) && !out.os.includes("windows")) out.os.push("windows");
      if (/macos/i.test(labels) && !out.os.includes("macos")) out.os.push("macos");
    }
  const plans = planned.kind === "equal" || planned.kind === "different";
  out.now = plans && out.blockers.length === 0;
  out.before = out.now && out.uses.length === 0;
  return out;
}

/** One corpus file's verdict. */
export interface RunnableRow {
  repo: string;
  file: string;
  result: RunnableResult;
}

const tally = <K extends string>(m: Map<K, number>, k: K, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
const sortedObj = <K extends string>(m: Map<K, number>, top = Infinity) =>
  Object.fromEntries([...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, top));

/** What a name's references are, over the refs the corpus uses: "built-in", or the kinds seen (e.g. "node20 (v4), node24 (v5)"). */
function kindOf(name: string, refs: Set<string>, actions: Record<string, ActionInfo>): string {
  if (builtinFor(`${name}@x`)) return "built-in";
  const byKind = new Map<string, string[]>();
  for (const ref of [...refs].sort()) {
    const k = actions[`${name}@${ref}`]?.kind ?? "unknown";
    byKind.set(k, [...(byKind.get(k) ?? []), ref.length === 40 ? ref.slice(0, 7) : ref]);
  }
  if (byKind.size === 1) return [...byKind.keys()][0]!;
  return [...byKind].map(([k, r]) => `${k} (${r.slice(0, 3).join(", ")}${r.length > 3 ? ", …" : ""})`).join(", ");
}

/** The figures: files that run unmodified now and before, what stops the rest, and the top actions. */
export function runnableSummary(rows: RunnableRow[], actions: Record<string, ActionInfo>, top = 20) {
  const files = rows.length;
  const now = rows.filter((r) => r.result.now).length;
  const before = rows.filter((r) => r.result.before).length;
  const anyReason = new Map<Blocker, number>();
  const onlyReason = new Map<Blocker, number>();
  const blockingActions = new Map<string, number>();
  const blockingKind = new Map<string, Blocker>();
  for (const r of rows) {
    for (const b of r.result.blockers) tally(anyReason, b);
    if (r.result.blockers.length === 1) tally(onlyReason, r.result.blockers[0]!);
    const names = new Set(r.result.blocking.map((x) => x.name));
    for (const n of names) {
      tally(blockingActions, n);
      blockingKind.set(n, r.result.blocking.find((x) => x.name === n)!.blocker);
    }
  }
  // Uses of each action by the files' own steps (local ones apart), and the refs they name.
  const uses = new Map<string, number>();
  const refs = new Map<string, Set<string>>();
  let local = 0;
  let builtin = 0;
  let total = 0;
  for (const r of rows)
    for (const u of r.result.steps) {
      total++;
      if (u.startsWith("./") || u.startsWith("$/")) {
        local++;
        continue;
      }
      if (u.startsWith("docker://")) continue;
      if (builtinFor(u)) builtin++;
      const n = actionName(u);
      tally(uses, n);
      if (!refs.has(n)) refs.set(n, new Set());
      refs.get(n)!.add(u.slice(u.lastIndexOf("@") + 1));
    }
  const withUses = rows.filter((r) => r.result.steps.length > 0).length;
  const kindCount = (k: ActionKind) => rows.filter((r) => r.result.now && r.result.kinds.includes(k)).length;
  return {
    files,
    before,
    now,
    percentNow: files ? +((100 * now) / files).toFixed(1) : 0,
    filesWithUses: withUses,
    nowWithUses: rows.filter((r) => r.result.now && r.result.steps.length > 0).length,
    /** Of the files that run now, how many rely on each kind (a file counts once per kind). */
    nowRelyOn: {
      builtinOnly: rows.filter((r) => r.result.now && r.result.steps.length > 0 && r.result.uses.every((u) => builtinFor(u))).length,
      composite: kindCount("composite"),
      node12: kindCount("node12"),
      node16: kindCount("node16"),
      node20: kindCount("node20"),
      node24: kindCount("node24"),
      localAction: rows.filter((r) => r.result.now && r.result.local.length > 0).length,
    },
    /** Of the files that run now, how many have a job asking for a Windows or macOS runner (svc runs it when such a runner is registered). */
    nowAskWindows: rows.filter((r) => r.result.now && r.result.os.includes("windows")).length,
    nowAskMacos: rows.filter((r) => r.result.now && r.result.os.includes("macos")).length,
    /** Of the files that run now, how many name an action whose kind is HEAD's because the ref is not in the snapshot. */
    nowKindAtHead: rows.filter(
      (r) =>
        r.result.now &&
        r.result.uses.some((u) => {
          const k = remoteKey(u);
          return k !== null && actions[k]?.atHead === true;
        }),
    ).length,
    stepUses: { total, builtin, local, other: total - builtin - local },
    /** Files stopped by each reason (a file counts under each of its reasons). */
    blockedBy: sortedObj(anyReason),
    /** Files stopped by that reason alone (they would run were it lifted). */
    blockedOnlyBy: sortedObj(onlyReason),
    /** Actions that stop files, with how many files and why. */
    blockingActions: Object.fromEntries(
      [...blockingActions].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([n, c]) => [n, { files: c, why: blockingKind.get(n)! }]),
    ),
    /** The most used actions (the files' own steps), with their kind at the refs used. */
    topActions: [...uses]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, top)
      .map(([name, n]) => ({ name, uses: n, kind: kindOf(name, refs.get(name)!, actions) })),
  };
}
