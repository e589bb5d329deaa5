// Test fixtures: throwaway repositories made with the real git CLI (the oracle).
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "A U Thor",
  GIT_AUTHOR_EMAIL: "author@example.com",
  GIT_COMMITTER_NAME: "C O Mitter",
  GIT_COMMITTER_EMAIL: "committer@example.com",
  LC_ALL: "C",
};

/** Run git; returns stdout bytes, throws with stderr on failure. */
export function gitBytes(cwd: string, args: string[], input?: Uint8Array | string): Uint8Array {
  const r = Bun.spawnSync(["git", ...args], { cwd, env, stdin: input === undefined ? "ignore" : Buffer.from(input) });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return new Uint8Array(r.stdout);
}

/** Run git; returns trimmed stdout text. */
export function git(cwd: string, args: string[], input?: Uint8Array | string): string {
  return new TextDecoder().decode(gitBytes(cwd, args, input)).trim();
}

/** Run git expecting failure or success; returns exit code and stderr. */
export function gitStatus(cwd: string, args: string[], input?: Uint8Array | string): { code: number; stderr: string } {
  const r = Bun.spawnSync(["git", ...args], { cwd, env, stdin: input === undefined ? "ignore" : Buffer.from(input) });
  return { code: r.exitCode ?? -1, stderr: r.stderr.toString() };
}

/** A temp directory removed by cleanup(). */
export async function tempDir(): Promise<{ path: string; cleanup(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "svc-git-test-"));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** Deterministic pseudo-random generator. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 4294967296;
  };
}

export interface FixtureRepo {
  dir: string;
  /** Paths of the single pack of the repository (after repack -adf). */
  packPath: string;
  idxPath: string;
  /** Commit oids in order of creation on main. */
  commits: string[];
  cleanup(): Promise<void>;
}

/**
 * A bare repository with `commits` commits of churn over text files (plus a binary file,
 * an executable, a symlink, a submodule entry, a non-UTF-8 message, an annotated tag and a
 * commit with gpgsig/mergetag-style extra headers), repacked into one pack full of deltas.
 */
export async function makeFixtureRepo(commits = 40): Promise<FixtureRepo> {
  const tmp = await tempDir();
  const dir = tmp.path;
  git(dir, ["init", "-q", "--bare", "-b", "main"]);
  const rnd = prng(42);
  const word = () => Math.floor(rnd() * 1e6).toString(36);
  const line = () => Array.from({ length: 8 }, word).join(" ") + "\n";
  const files = Array.from({ length: 10 }, () => Array.from({ length: 40 + Math.floor(rnd() * 80) }, line));
  const chunks: (string | Uint8Array)[] = [];
  for (let c = 0; c < commits; c++) {
    const msg = c === 5 ? Uint8Array.from([...Buffer.from("caf"), 0xe9, 0x0a, 0xff, 0x0a]) : Buffer.from(`commit ${c}\n\nbody ${c}\n`);
    chunks.push(`commit refs/heads/main\nmark :${c + 1}\n`);
    chunks.push(`author A U Thor <author@example.com> ${1600000000 + c * 3600} +0200\n`);
    chunks.push(`committer C O Mitter <committer@example.com> ${1600000000 + c * 3600} -0530\n`);
    chunks.push(`data ${msg.length}\n`, msg, "\n");
    const touched = c === 0 ? files.map((_, i) => i) : [Math.floor(rnd() * files.length), Math.floor(rnd() * files.length)];
    for (const f of touched) {
      const lines = files[f]!;
      for (let e = 0; e < 3; e++) lines.splice(Math.floor(rnd() * lines.length), rnd() < 0.5 ? 1 : 0, line());
      const body = Buffer.from(lines.join(""));
      chunks.push(`M ${f === 3 ? "100755" : "100644"} inline dir${f % 3}/file${f}.txt\ndata ${body.length}\n`, body, "\n");
    }
    if (c === 0) {
      const bin = Uint8Array.from({ length: 3000 }, () => Math.floor(rnd() * 256));
      chunks.push(`M 100644 inline binary.bin\ndata ${bin.length}\n`, bin, "\n");
      chunks.push("M 120000 inline link\ndata 14\ndir0/file0.txt\n");
      chunks.push("M 160000 0123456789abcdef0123456789abcdef01234567 sub\n");
    }
  }
  chunks.push("tag v1.0\nfrom :10\ntagger T Agger <tagger@example.com> 1600050000 +0000\ndata 18\nrelease 1.0\nbody.\n\n");
  git(dir, ["fast-import", "--quiet"], Buffer.concat(chunks.map((c) => (typeof c === "string" ? Buffer.from(c) : c))));
  const head = git(dir, ["rev-parse", "main"]);
  const tree = git(dir, ["rev-parse", "main^{tree}"]);
  const signed =
    `tree ${tree}\nparent ${head}\nauthor A U Thor <author@example.com> 1700000000 +0000\n` +
    `committer C O Mitter <committer@example.com> 1700000000 +0000\nencoding ISO-8859-1\n` +
    `gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n =abcd\n -----END PGP SIGNATURE-----\n\nsigned commit\n`;
  const signedOid = git(dir, ["hash-object", "-t", "commit", "-w", "--stdin"], signed);
  git(dir, ["update-ref", "refs/heads/signed", signedOid]);
  git(dir, ["repack", "-adf", "-q", "--window=50", "--depth=50", "--no-write-bitmap-index"]);
  const pack = readdirSync(join(dir, "objects", "pack")).find((f) => f.endsWith(".pack"))!;
  const list = git(dir, ["rev-list", "--reverse", "main"]).split("\n");
  return {
    dir,
    packPath: join(dir, "objects", "pack", pack),
    idxPath: join(dir, "objects", "pack", pack.replace(/\.pack$/, ".idx")),
    commits: list,
    cleanup: tmp.cleanup,
  };
}

/** Every object of a repository as git cat-file --batch-all-objects reports it. */
export function catAllObjects(dir: string): Map<string, { type: string; data: Uint8Array }> {
  const out = gitBytes(dir, ["cat-file", "--batch-all-objects", "--batch"]);
  const objects = new Map<string, { type: string; data: Uint8Array }>();
  let pos = 0;
  while (pos < out.length) {
    const nl = out.indexOf(0x0a, pos);
    const [oid, type, size] = new TextDecoder().decode(out.subarray(pos, nl)).split(" ");
    const start = nl + 1;
    objects.set(oid!, { type: type!, data: out.slice(start, start + Number(size)) });
    pos = start + Number(size) + 1;
  }
  return objects;
}
