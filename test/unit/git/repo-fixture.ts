// Test-only: a generated git repository (made with the real git CLI via fast-import) and a
// PackSet over its packed objects, so walks can be compared with `git rev-list`.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openFileSource } from "../../../src/git/file-source.ts";
import { PackIndex } from "../../../src/git/pack-index.ts";
import { Pack } from "../../../src/git/pack-reader.ts";
import { PackSet } from "../../../src/git/pack-set.ts";

const IDENTITY = {
  GIT_AUTHOR_NAME: "A U Thor",
  GIT_AUTHOR_EMAIL: "author@example.com",
  GIT_COMMITTER_NAME: "C O Mitter",
  GIT_COMMITTER_EMAIL: "committer@example.com",
};

/** Run git; returns stdout (trimmed end); throws with stderr on failure. */
export function git(cwd: string, args: string[], input?: string | Uint8Array, env?: Record<string, string>): string {
  const r = Bun.spawnSync(["git", ...args], {
    cwd,
    stdin: input === undefined ? "ignore" : typeof input === "string" ? new TextEncoder().encode(input) : input,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd, GIT_TERMINAL_PROMPT: "0", ...IDENTITY, ...env },
  });
  if (r.exitCode !== 0) {
    throw new Error(`git ${args.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}`);
  }
  return r.stdout.toString().replace(/\s+$/, "");
}

/** Run git without blocking the event loop (needed when the server runs in this process). */
export async function gitAsync(cwd: string, args: string[], env?: Record<string, string>): Promise<string> {
  const r = await runGit(cwd, args, env);
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed (${r.exitCode}): ${r.stderr}`);
  return r.stdout.replace(/\s+$/, "");
}

/** Run git asynchronously and return its exit code and output, failing or not. */
export async function runGit(cwd: string, args: string[], env?: Record<string, string>): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["git", ...args], {
    cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd, GIT_TERMINAL_PROMPT: "0", ...IDENTITY, ...env },
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

/** Lines of output, empty lines dropped. */
export function gitLines(cwd: string, args: string[]): string[] {
  const out = git(cwd, args);
  return out === "" ? [] : out.split("\n");
}

/** A deterministic pseudo-random generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const BASE_TIME = 1_600_000_000;

/**
 * A bare repository with `commits` commits on main, side branches merged back, a branch left
 * unmerged, renames and re-added content, a gitlink, a large blob every so often, clock skew,
 * annotated/lightweight/nested tags and tags of a tree and a blob.
 */
export async function makeFixtureRepo(commits: number, seed = 1): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-walk-fixture-"));
  git(dir, ["init", "-q", "--bare", "-b", "main"]);
  const rand = rng(seed);
  const lines: string[] = [];
  const enc = new TextEncoder();
  const data = (s: string): void => {
    lines.push(`data ${enc.encode(s).length}`, s);
  };
  const files = new Map<string, string>();
  let mark = 0;
  let mainMark = 0;
  let sideMark = 0;
  let sideBase = 0;
  for (let i = 0; i < commits; i++) {
    const onSide = sideMark !== 0 && rand() < 0.4;
    const skew = rand() < 0.03 ? -7200 : 0;
    const time = BASE_TIME + i * 3600 + skew;
    const m = ++mark;
    lines.push(`commit refs/heads/${onSide ? "side" : "main"}`, `mark :${m}`);
    lines.push(`committer C O Mitter <c@example.com> ${time} +0000`);
    data(`commit ${i}\n`);
    const parent = onSide ? sideMark : mainMark;
    if (parent) lines.push(`from :${parent}`);
    if (!onSide && sideMark && rand() < 0.15) {
      lines.push(`merge :${sideMark}`);
      sideMark = 0;
    }
    const edits = 1 + Math.floor(rand() * 3);
    for (let e = 0; e < edits; e++) {
      const r = rand();
      const path = `d${Math.floor(rand() * 6)}/s${Math.floor(rand() * 4)}/f${Math.floor(rand() * 12)}.txt`;
      if (r < 0.1 && files.size > 5) {
        const victim = [...files.keys()][Math.floor(rand() * files.size)]!;
        files.delete(victim);
        lines.push(`D ${victim}`);
      } else if (r < 0.2 && files.size > 0) {
        const [, content] = [...files.entries()][Math.floor(rand() * files.size)]!;
        files.set(path, content);
        lines.push(`M 100644 inline ${path}`);
        data(content);
      } else if (r < 0.23) {
        const big = `big ${i}\n`.repeat(700);
        files.set(path, big);
        lines.push(`M 100644 inline ${path}`);
        data(big);
      } else {
        const content = `file ${path} at ${i} ${Math.floor(rand() * 3)}\n`;
        files.set(path, content);
        lines.push(`M ${rand() < 0.05 ? "100755" : "100644"} inline ${path}`);
        data(content);
      }
    }
    if (i === 10) lines.push(`M 160000 ${"ab".repeat(20)} vendor/sub`);
    if (onSide) sideMark = m;
    else mainMark = m;
    if (!onSide && sideMark === 0 && rand() < 0.05) {
      sideBase = mainMark;
      lines.push(`reset refs/heads/side`, `from :${sideBase}`);
      sideMark = sideBase;
    }
    if (i % 250 === 0 && i > 0) {
      lines.push(`tag v${i}`, `from :${m}`, `tagger T Agger <t@example.com> ${time} +0000`);
      data(`release ${i}\n`);
    }
  }
  git(dir, ["fast-import", "--quiet"], lines.join("\n") + "\n");
  git(dir, ["branch", "-f", "old", "main~40"]);
  git(dir, ["tag", "light", "main~7"]);
  const orphan = git(dir, ["commit-tree", "-m", "orphan", "main~2^{tree}"]);
  git(dir, ["update-ref", "refs/heads/orphan", orphan]);
  git(dir, ["-c", "advice.nestedTag=false", "tag", "-a", "-m", "nested", "nested", "v250"]);
  git(dir, ["tag", "-a", "-m", "tree tag", "treetag", "main~3^{tree}"]);
  const blob = git(dir, ["rev-parse", "main:d0/s0/f0.txt"], undefined).trim();
  git(dir, ["tag", "-a", "-m", "blob tag", "blobtag", blob]);
  git(dir, ["repack", "-adq"]);
  return dir;
}

/** Open every pack of a (bare) repository as one PackSet; close() releases the files. */
export async function openRepoPacks(gitDir: string): Promise<{ set: PackSet; close(): Promise<void> }> {
  const packDir = join(gitDir, "objects", "pack");
  const names = (await readdir(packDir)).filter((n) => n.endsWith(".idx"));
  const sources: { close(): Promise<void> }[] = [];
  const packs: Pack[] = [];
  for (const idxName of names) {
    const idx = PackIndex.parse(new Uint8Array(await readFile(join(packDir, idxName))));
    const source = await openFileSource(join(packDir, idxName.replace(/\.idx$/, ".pack")));
    sources.push(source);
    packs.push(new Pack(idx.packChecksum, idx, source));
  }
  return {
    set: new PackSet(packs),
    close: async () => {
      await Promise.all(sources.map((s) => s.close()));
    },
  };
}

/** Remove a temp directory. */
export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
