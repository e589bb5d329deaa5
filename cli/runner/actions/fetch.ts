// An action from a repository on this server (`org/repo[/path]@ref`): the server resolves the
// reference with the job token's rights (POST /v1/runner/jobs/{id}/actions → repo, commit,
// clone_url, path, tree), the agent fetches that commit once per machine into
// `<workdir>/_actions/<org>/<repo>/<commit>` and reuses it for later jobs, but only after
// recomputing the copy's git tree oid and finding the commit's `tree`: a job of the same machine
// (hosted runners serve many orgs) can write there, and a later job must not run what it left. On
// a mismatch the copy is set aside and the commit fetched afresh. The checkout is byte for byte
// the blobs (no eol conversion, filter or ident: $GIT_DIR/info/attributes overrides the
// repository's .gitattributes) so the recomputed tree is the commit's; .git is removed, so the
// tree is that of the whole checkout. A tree with a submodule (an empty directory on disk) never
// matches and is fetched per use. Atomic: the fetch goes
// to a temp dir renamed into place, so a job never sees half an action and two jobs fetching the
// same commit both end with the same whole copy. The token goes to git as an http.extraHeader by
// environment (GIT_CONFIG_*), never in argv or the URL, and is not kept in the copy.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { ActionProblem, type ActionHost } from "../action-host.ts";
import { call } from "../client.ts";
import { treeOidOfDir } from "./tree-hash.ts";

/** What makes git's checkout the blobs' bytes: highest-precedence attributes unsetting every conversion. */
const RAW_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n";

/** What the server answers for a reference. */
export interface ResolvedAction {
  repo: string;
  commit: string;
  clone_url: string;
  path: string;
  /** The full ref matched; null for a sha (absent from older servers). */
  ref?: string | null;
  /** The commit's root tree (absent from older servers: then a cached copy is never trusted). */
  tree?: string;
}

/** Asks the server which commit of which repository `uses` names; a refusal (404, 400) is an ActionProblem with the server's message. */
export async function resolveAction(host: ActionHost, uses: string): Promise<ResolvedAction> {
  const res = await call(`${host.base}/v1/runner/jobs/${host.job.job_id}/actions`, {
    token: host.token,
    method: "POST",
    body: { uses },
    what: `resolve ${uses.slice(0, 100)}`,
    attempts: 5,
  });
  if (res.status !== 200) throw new ActionProblem(res.body?.error ? String(res.body.error) : `${uses}: the server refused the action (${res.status})`);
  const b = res.body as ResolvedAction;
  if (!/^[0-9a-f]{40,64}$/.test(b.commit) || !/^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]+$/.test(b.repo) || b.repo.includes(".."))
    throw new ActionProblem(`${uses}: the server's answer is malformed`);
  return b;
}

/** The environment the agent's own git runs with (the agent's PATH and HOME, not a step's): the job token as a header by config environment. */
export function gitEnv(host: ActionHost): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    GIT_TERMINAL_PROMPT: "0",
    // Why config by environment: the token stays out of argv (visible to other users) and out of .git/config.
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Bearer ${host.token}`,
  };
}

/** Runs git (its output, quiet unless it fails, into the step's log) as the step's process, so a cancel or the step's timeout kills it. */
export async function git(host: ActionHost, cwd: string, args: string[], env: Record<string, string>): Promise<{ code: number }> {
  return { code: await host.exec("git", args, { cwd, env }) };
}

/** Where an action's commit lives on this machine, and its directory inside. */
export async function fetchAction(host: ActionHost, uses: string): Promise<{ dir: string; repo: string; commit: string; cached: boolean }> {
  const r = await resolveAction(host, uses);
  const [org, name] = r.repo.split("/") as [string, string];
  const root = join(host.workdir, "_actions");
  const final = join(root, org, name, r.commit);
  let cached = true;
  if (existsSync(final)) {
    const found = await treeOidOfDir(final);
    if (!r.tree || found !== r.tree) {
      host.log(
        `The cached copy of ${r.repo}@${r.commit.slice(0, 12)} differs from the commit's tree ${r.tree?.slice(0, 12) ?? "(not given)"} (found ${found?.slice(0, 12) ?? "none"}): fetching it afresh\n`,
      );
      // Why aside first: a rename is atomic, so no job picks up the altered copy from here on.
      const stale = join(root, `.stale-${randomUUID()}`);
      try {
        renameSync(final, stale);
      } catch (e) {
        if (existsSync(final)) throw e;
      }
      try {
        rmSync(stale, { recursive: true, force: true });
      } catch {
        // What a job left unremovable stays aside under a name no job uses.
      }
    }
  }
  if (!existsSync(final)) {
    cached = false;
    host.log(`Fetching ${r.repo}@${r.commit.slice(0, 12)} for ${uses}\n`);
    const tmp = join(root, `.tmp-${randomUUID()}`);
    mkdirSync(tmp, { recursive: true });
    try {
      const env = gitEnv(host);
      let g = await git(host, tmp, ["init", "-q", "."], env);
      if (g.code === 0) {
        mkdirSync(join(tmp, ".git", "info"), { recursive: true });
        writeFileSync(join(tmp, ".git", "info", "attributes"), RAW_ATTRIBUTES);
      }
      if (g.code === 0) g = await git(host, tmp, ["fetch", "-q", "--no-tags", "--depth", "1", r.clone_url, r.commit], env);
      if (g.code === 0) g = await git(host, tmp, ["checkout", "-q", "--detach", "FETCH_HEAD"], env);
      if (g.code !== 0) throw new ActionProblem(`${uses}: fetching ${r.repo} at ${r.commit.slice(0, 12)} failed (git exit ${g.code})`);
      rmSync(join(tmp, ".git"), { recursive: true, force: true });
      mkdirSync(join(root, org, name), { recursive: true });
      try {
        renameSync(tmp, final);
      } catch (e) {
        // Another job of this machine fetched the same commit first: its copy is the same.
        if (!existsSync(final)) throw e;
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const dir = resolve(final, r.path || ".");
  const rel = relative(final, dir);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new ActionProblem(`${uses}: the path leaves the action's repository`);
  if (!existsSync(dir)) throw new ActionProblem(`${uses}: ${r.path} is not a directory of ${r.repo} at ${r.commit.slice(0, 12)}`);
  return { dir, repo: r.repo, commit: r.commit, cached };
}
