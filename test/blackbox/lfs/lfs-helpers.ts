// Helpers of the Git LFS tests: the real `git lfs` client (Debian's git-lfs, installed by
// scripts/install-test-tools.sh) in a git sandbox, files pushed as LFS objects and compared after a clone.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gitSandbox, type GitSandbox } from "../../helpers/git.ts";

export const LFS_TYPE = "application/vnd.git-lfs+json";

/** A git sandbox whose HOME has the LFS filters installed (`git lfs install`). */
export async function lfsSandbox(): Promise<GitSandbox> {
  const g = gitSandbox("svc-lfs-");
  await g.ok(["lfs", "install", "--skip-repo"]);
  return g;
}

/** Random file contents by name (each a distinct LFS object). */
export function randomFiles(names: string[], size = 64 * 1024): Record<string, Uint8Array> {
  return Object.fromEntries(names.map((n) => [n, new Uint8Array(randomBytes(size))]));
}

/** The LFS oid of some bytes. */
export function oidOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A new repository tracking `*.bin` with LFS, with `files` committed; returns its directory. */
export async function lfsRepo(
  g: GitSandbox,
  files: Record<string, Uint8Array>,
  opts: { env?: Record<string, string>; track?: string[] } = {},
): Promise<string> {
  const dir = g.path("work");
  await g.ok(["init", "-q", "-b", "main", dir]);
  await g.ok(["lfs", "track", ...(opts.track ?? ["*.bin"])], { cwd: dir, env: opts.env });
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dir, name), bytes);
  await g.ok(["add", "."], { cwd: dir, env: opts.env });
  await g.ok(["commit", "-q", "-m", "lfs files"], { cwd: dir, env: opts.env });
  return dir;
}

/** Whether every file of `files` is in `dir` with the same bytes (the smudged content, not a pointer). */
export function sameFiles(dir: string, files: Record<string, Uint8Array>): boolean {
  return Object.entries(files).every(([name, bytes]) => Buffer.from(readFileSync(join(dir, name))).equals(Buffer.from(bytes)));
}

/** A batch request body. */
export function batchBody(operation: "download" | "upload", objects: { oid: unknown; size: unknown }[], extra: Record<string, unknown> = {}) {
  return JSON.stringify({ operation, transfers: ["basic"], objects, hash_algo: "sha256", ...extra });
}

/** POSTs a batch request; the status and parsed body. */
export async function postBatch(
  url: string,
  org: string,
  repo: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${url}/${org}/${repo}.git/info/lfs/objects/batch`, {
    method: "POST",
    headers: { accept: LFS_TYPE, "content-type": LFS_TYPE, ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
