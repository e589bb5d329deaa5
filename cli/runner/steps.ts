// How one step runs (plan-29 part D "Step options"): its shell, its working directory (inside the
// workspace), its process group (killed whole on cancel or timeout), and the files it writes to
// talk to the runner ($GITHUB_OUTPUT, $GITHUB_ENV, $GITHUB_PATH; $GITHUB_STEP_SUMMARY is created
// and ignored).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  type Dirent,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { delimiter, isAbsolute, join, relative, resolve, sep } from "node:path";
import { compileGlob } from "../../src/util/glob.ts";
import { FILE_COMMAND_LIMITS, parseFileCommands, parsePathFile } from "./files.ts";

/** Kills a step's whole process group: TERM, then KILL if it lingers. */
export function killGroup(child: ChildProcess): void {
  if (!child.pid || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  setTimeout(() => {
    try {
      if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }, 3000).unref();
}

/** Runs a command in its own process group, streaming merged output to `out`; resolves with its exit code. */
export function runProcess(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string>; out: (s: string) => void; onChild?: (c: ChildProcess) => void },
): Promise<number> {
  return new Promise((resolvePromise) => {
    // Why detached: the step becomes a process group leader, so a cancel kills everything it started.
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    opts.onChild?.(child);
    const out = new TextDecoder();
    const err = new TextDecoder();
    child.stdout!.on("data", (b: Buffer) => opts.out(out.decode(b, { stream: true })));
    child.stderr!.on("data", (b: Buffer) => opts.out(err.decode(b, { stream: true })));
    child.on("error", (e) => {
      opts.out(`${e.message}\n`);
      resolvePromise(127);
    });
    child.on("close", (code, signal) => resolvePromise(code ?? (signal ? 128 + (signal === "SIGKILL" ? 9 : 15) : 1)));
  });
}

/** Whether `name` is an executable file in one of `path`'s directories. */
export function onPath(name: string, path: string | undefined): boolean {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

/** A shell as a command with `{0}` for the script, whether `exec 2>&1` may open the script (a POSIX shell), and the script's file extension. */
export interface Shell {
  argv: string[];
  posix: boolean;
  ext?: string;
}

/** GitHub's other named shells (they run where the machine has them; a missing one fails the step with exit 127). */
const NAMED: Readonly<Record<string, Shell>> = {
  python: { argv: ["python", "{0}"], posix: false, ext: ".py" },
  pwsh: { argv: ["pwsh", "-command", ". '{0}'"], posix: false, ext: ".ps1" },
  powershell: { argv: ["powershell", "-command", ". '{0}'"], posix: false, ext: ".ps1" },
  cmd: { argv: ["cmd", "/D", "/E:ON", "/V:OFF", "/S", "/C", 'CALL "{0}"'], posix: false, ext: ".cmd" },
};

/**
 * The command that runs a step (GitHub's): `sh` → `sh -e {0}`, `bash` → `bash --noprofile --norc
 * -eo pipefail {0}`, anything else is a command split on spaces with `{0}` for the script (added
 * at the end when missing). No shell: `bash -e {0}` when bash is on PATH, else `sh -e {0}`; a
 * format-1 job (planned before issue 29) keeps `sh -e`.
 */
export function shellOf(shell: string | null | undefined, path: string | undefined, format: number): Shell {
  const s = (shell ?? "").trim();
  if (!s) {
    if (format >= 2 && onPath("bash", path)) return { argv: ["bash", "-e", "{0}"], posix: true };
    return { argv: ["sh", "-e", "{0}"], posix: true };
  }
  if (s === "sh") return { argv: ["sh", "-e", "{0}"], posix: true };
  if (s === "bash") return { argv: ["bash", "--noprofile", "--norc", "-eo", "pipefail", "{0}"], posix: true };
  const named = NAMED[s];
  if (named) return { ...named, argv: [...named.argv] };
  const argv = s.split(/\s+/);
  if (!argv.some((a) => a.includes("{0}"))) argv.push("{0}");
  const cmd = argv[0]!.replace(/^.*\//, "");
  return { argv, posix: cmd === "sh" || cmd === "bash" || cmd === "dash" || cmd === "zsh" };
}

/** The step's directory: `dir` under the workspace, refused when it leaves it (`..`, an absolute path elsewhere, a symlink out) or does not exist. */
export function workingDirectory(workspace: string, dir: string | null | undefined): { ok: true; path: string } | { ok: false; error: string } {
  if (!dir) return { ok: true, path: workspace };
  const target = isAbsolute(dir) ? resolve(dir) : resolve(workspace, dir);
  const inside = (root: string, p: string) => {
    const rel = relative(root, p);
    return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
  };
  if (!inside(workspace, target)) return { ok: false, error: `working-directory ${JSON.stringify(dir)} is outside the workspace` };
  if (!existsSync(target) || !statSync(target).isDirectory()) return { ok: false, error: `working-directory ${JSON.stringify(dir)} does not exist` };
  if (!inside(realpathSync(workspace), realpathSync(target)))
    return { ok: false, error: `working-directory ${JSON.stringify(dir)} is outside the workspace (through a symbolic link)` };
  return { ok: true, path: target };
}

/** The four files of one step, fresh and empty. */
export interface StepFiles {
  output: string;
  env: string;
  path: string;
  summary: string;
}

/** Creates the step's files under `temp/_runner_file_commands/`. */
export function stepFiles(temp: string, index: number): StepFiles {
  const dir = join(temp, "_runner_file_commands");
  mkdirSync(dir, { recursive: true });
  const f = (name: string) => {
    const p = join(dir, `${name}_${index}`);
    writeFileSync(p, "");
    return p;
  };
  return { output: f("set_output"), env: f("set_env"), path: f("add_path"), summary: f("step_summary") };
}

/** At most `limit` bytes of a file as UTF-8 (null when it holds more: the caller refuses it). */
function readBounded(path: string, limit: number): string | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return "";
  }
  try {
    const buf = Buffer.alloc(limit + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got <= 0) break;
      n += got;
      if (n > limit) return null;
    }
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** What a step wrote to its files: outputs, env for later steps, dirs for PATH, or why the files are malformed. */
export type StepWrites = { ok: true; outputs: [string, string][]; env: [string, string][]; path: string[] } | { ok: false; error: string };

/** Reads the step's files after it ran. */
export function readStepFiles(files: StepFiles): StepWrites {
  const limit = FILE_COMMAND_LIMITS.bytes;
  const output = readBounded(files.output, limit);
  if (output === null) return { ok: false, error: `GITHUB_OUTPUT is larger than ${limit} bytes` };
  const env = readBounded(files.env, limit);
  if (env === null) return { ok: false, error: `GITHUB_ENV is larger than ${limit} bytes` };
  const path = readBounded(files.path, limit);
  if (path === null) return { ok: false, error: `GITHUB_PATH is larger than ${limit} bytes` };
  const o = parseFileCommands(output, "output");
  if (!o.ok) return o;
  const e = parseFileCommands(env, "env");
  if (!e.ok) return e;
  return { ok: true, outputs: o.entries, env: e.entries, path: parsePathFile(path) };
}

/** Files `hashFiles` looks at, at most (a workspace past it hashes what was found first). */
const HASH_FILES_LIMIT = 100_000;

/**
 * `hashFiles(patterns…)` (GitHub's): the files of the workspace matching any pattern and no `!`
 * pattern (paths relative to the workspace, `**` across directories, `.git` skipped), in path
 * order, as the SHA-256 of their SHA-256s; "" when none matches.
 */
export function hashFiles(workspace: string, patterns: string[]): string {
  const rel = (p: string) => {
    const q = p.startsWith(`${workspace}/`) ? p.slice(workspace.length + 1) : p;
    return q.startsWith("./") ? q.slice(2) : q;
  };
  const include = patterns.filter((p) => !p.startsWith("!")).map((p) => compileGlob(rel(p.trim())));
  const exclude = patterns.filter((p) => p.startsWith("!")).map((p) => compileGlob(rel(p.slice(1).trim())));
  const found: string[] = [];
  const walk = (dir: string, prefix: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (found.length >= HASH_FILES_LIMIT) return;
      const path = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name !== ".git") walk(join(dir, e.name), path);
      } else if (e.isFile() && include.some((g) => g.match(path)) && !exclude.some((g) => g.match(path))) found.push(path);
    }
  };
  walk(workspace, "");
  if (!found.length) return "";
  found.sort();
  const all = createHash("sha256");
  for (const f of found)
    all.update(
      createHash("sha256")
        .update(readFileSync(join(workspace, f)))
        .digest(),
    );
  return all.digest("hex");
}
