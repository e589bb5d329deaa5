// The built-in `actions/checkout` (any version; issue 30): the job's repository (or another one on
// this server the job token can read) into the workspace or a path inside it.
//
//   repository     org/repo on this server (default: the job's); resolved by the server like a
//                  `uses:` reference (POST /v1/runner/jobs/{id}/actions), so the same rights apply
//   ref            branch, tag or sha (default: the job's commit; for another repository, its
//                  default branch)
//   path           inside the workspace (default: the workspace)
//   fetch-depth    1 (default); 0 = all history, branches and tags
//   submodules     only false (true/recursive are refused with a message)
//   clean          true (default): the target directory is emptied first
//   persist-credentials, token, ssh-key, lfs, …: accepted; credentials are never persisted (the
//                  token goes to git by environment, never in the URL or .git/config)
//
// Outputs: `ref` (what was asked for, or the job's ref) and `commit`.
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { ActionProblem, type ActionHost, type ActionResult, type ActionStep } from "../action-host.ts";
import { git, gitEnv, resolveAction } from "../actions/fetch.ts";
import { workingDirectory } from "../steps.ts";

/** The value of an input, or `fallback` when it is not given or empty. */
function input(step: ActionStep, name: string, fallback: string): string {
  for (const [k, v] of Object.entries(step.inputs)) if (k.toLowerCase() === name && v !== "") return v;
  return fallback;
}

/** A path inside the workspace (created), refused when it leaves it (`..`, a symbolic link out). */
function targetDir(host: ActionHost, path: string): string {
  if (!path || path === ".") return host.workspace;
  if (path.split(/[\\/]/).includes("..")) throw new ActionProblem(`actions/checkout: path ${JSON.stringify(path.slice(0, 200))} leaves the workspace`);
  const abs = join(host.workspace, path.replace(/^\/+/, ""));
  const wd0 = workingDirectory(host.workspace, dirname(abs));
  if (existsSync(dirname(abs)) && !wd0.ok) throw new ActionProblem(`actions/checkout: ${wd0.error.replace("working-directory", "path")}`);
  mkdirSync(abs, { recursive: true });
  const wd = workingDirectory(host.workspace, abs);
  if (!wd.ok) throw new ActionProblem(`actions/checkout: ${wd.error.replace("working-directory", "path")}`);
  return wd.path;
}

export async function checkout(host: ActionHost, step: ActionStep): Promise<ActionResult> {
  const submodules = input(step, "submodules", "false").toLowerCase();
  if (submodules !== "false")
    throw new ActionProblem(
      `actions/checkout: submodules: ${submodules} is not supported by the svc runner; check submodules out in a run: step (git submodule update --init)`,
    );
  const depthText = input(step, "fetch-depth", "1");
  const depth = Number(depthText);
  if (!Number.isInteger(depth) || depth < 0)
    throw new ActionProblem(`actions/checkout: fetch-depth ${JSON.stringify(depthText.slice(0, 40))} is not a whole number (0 = all history)`);
  const repository = input(step, "repository", host.job.repo);
  const ref = input(step, "ref", "");
  const own = repository.toLowerCase() === host.job.repo.toLowerCase();
  let cloneUrl = host.job.clone_url;
  let commit = host.job.commit;
  let shownRef = host.job.ref;
  // A branch is checked out under its name (as GitHub does); a tag or a sha detached.
  let branch = own && host.job.ref.startsWith("refs/heads/") ? host.job.ref.slice(11) : "";
  if (own && /^[0-9a-f]{40}$/.test(ref)) {
    // A commit of the job's own repository (e.g. ${{ github.sha }}): fetched where the job's commit is (for a change from a fork: the fork).
    commit = ref;
    shownRef = ref;
    branch = "";
  } else if (!own || ref) {
    // Another repository or ref: the server says which commit, with the job token's rights (masked 404 otherwise).
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]+$/.test(repository))
      throw new ActionProblem(`actions/checkout: repository ${JSON.stringify(repository.slice(0, 200))} is not org/repo`);
    const r = await resolveAction(host, `${repository}@${ref || "HEAD"}`);
    commit = r.commit;
    cloneUrl = r.clone_url;
    shownRef = ref || "HEAD";
    branch = r.ref?.startsWith("refs/heads/") ? r.ref.slice(11) : "";
  }
  const dir = targetDir(host, input(step, "path", ""));
  if (input(step, "clean", "true").toLowerCase() !== "false" && existsSync(dir))
    for (const e of readdirSync(dir)) rmSync(join(dir, e), { recursive: true, force: true });
  host.log(
    `Checking out ${repository} at ${commit}${shownRef ? ` (${shownRef})` : ""} into ${dir === host.workspace ? "the workspace" : dir.slice(host.workspace.length + 1)}\n`,
  );
  const env = gitEnv(host);
  const run = async (args: string[]) => {
    const r = await git(host, dir, args, env);
    if (r.code !== 0) throw new ActionProblem(`actions/checkout: git ${args[0]} failed (exit ${r.code})`);
  };
  await run(["init", "-q", "."]);
  await run(["remote", "add", "origin", cloneUrl]);
  if (depth === 0) {
    await run(["fetch", "-q", "--prune", "--tags", "origin", "+refs/heads/*:refs/remotes/origin/*"]);
    await run(["fetch", "-q", "origin", commit]);
  } else await run(["fetch", "-q", "--no-tags", "--depth", String(depth), "origin", commit]);
  if (branch) await run(["checkout", "-q", "-B", branch, commit]);
  else await run(["checkout", "-q", "--detach", commit]);
  return { exit: 0, outputs: { ref: shownRef, commit } };
}
