// The files of an artifact on the runner (issue 30): which files upload-artifact's `path` names
// (GitHub's rules: newline-separated globs, `!` excludes, a directory means everything under it,
// hidden files left out unless asked, the zip's root the least common ancestor of the search
// paths), the zip written once with yazl, and download-artifact's extraction with yauzl, bounded
// (no entry outside the target, entry count and total size capped: a zip bomb stops early).
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { lstat, mkdir, realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Readable } from "node:stream";
import * as yauzl from "yauzl";
import * as yazl from "yazl";

/** Bounds of one extraction (a zip bomb stops at the first entry past them). */
export const UNZIP_LIMITS = Object.freeze({ entries: 100_000, bytes: 16 * 1024 ** 3 });
/** Files one upload may hold. */
export const UPLOAD_LIMITS = Object.freeze({ files: 100_000 });

const GLOB_CHARS = /[*?[{]/;

/** A file to put in the zip: where it is, and its name inside the zip (`/`-separated). */
export interface ZipInput {
  path: string;
  name: string;
}

/** `~` and relative paths of a pattern, resolved against `workspace`. */
function absolutePattern(pattern: string, workspace: string): string {
  const p = pattern === "~" || pattern.startsWith("~/") ? join(homedir(), pattern.slice(1)) : pattern;
  return isAbsolute(p) ? resolve(p) : resolve(workspace, p);
}

/** The directory part of a pattern before its first segment with a glob character, and the rest. */
function splitPattern(abs: string): { base: string; rest: string | null } {
  const parts = abs.split(sep);
  const i = parts.findIndex((s) => GLOB_CHARS.test(s));
  if (i < 0) return { base: abs, rest: null };
  return { base: parts.slice(0, i).join(sep) || sep, rest: parts.slice(i).join("/") };
}

async function kindOf(path: string): Promise<"file" | "dir" | null> {
  try {
    const s = await stat(path);
    return s.isDirectory() ? "dir" : s.isFile() ? "file" : null;
  } catch {
    return null;
  }
}

/** Every file under `dir` (following GitHub: symbolic links to files are files). */
async function filesUnder(dir: string, into: Set<string>): Promise<void> {
  for await (const rel of new Bun.Glob("**/*").scan({ cwd: dir, dot: true, onlyFiles: true, followSymlinks: true })) {
    into.add(join(dir, rel));
    if (into.size > UPLOAD_LIMITS.files) throw new Error(`the path names more than ${UPLOAD_LIMITS.files} files`);
  }
}

/** Whether a path relative to its search path has a hidden segment (`.git`, `.env`). */
const hidden = (rel: string) => rel.split(/[\\/]/).some((s) => s.startsWith(".") && s !== "." && s !== "..");

/** The longest common ancestor directory of absolute paths. */
function commonAncestor(paths: string[]): string {
  let common = paths[0]!.split(sep);
  for (const p of paths.slice(1)) {
    const parts = p.split(sep);
    let i = 0;
    while (i < common.length && i < parts.length && common[i] === parts[i]) i++;
    common = common.slice(0, i);
  }
  return common.join(sep) || sep;
}

/**
 * The files upload-artifact's `path` input names, with their names in the zip: each line a
 * path or glob (relative to the workspace, `~` for home), `!` lines excluding what they match
 * (a directory excludes all under it). The zip's root is the search paths' least common ancestor
 * (one file alone: its directory).
 */
export async function uploadFiles(pathInput: string, workspace: string, o: { includeHidden: boolean }): Promise<{ root: string; files: ZipInput[] }> {
  const lines = pathInput
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const includes = lines.filter((l) => !l.startsWith("!")).map((l) => absolutePattern(l, workspace));
  const excludes = lines.filter((l) => l.startsWith("!")).map((l) => absolutePattern(l.slice(1).trim(), workspace));
  const found = new Set<string>();
  const searchPaths: string[] = [];
  const singleFiles = new Set<string>();
  for (const pattern of includes) {
    const { base, rest } = splitPattern(pattern);
    searchPaths.push(base);
    const before = new Set(found);
    if (rest === null) {
      const kind = await kindOf(base);
      if (kind === "file") {
        found.add(base);
        singleFiles.add(base);
      } else if (kind === "dir") await filesUnder(base, found);
    } else if ((await kindOf(base)) === "dir") {
      const glob = new Bun.Glob(rest);
      for await (const rel of glob.scan({ cwd: base, dot: true, onlyFiles: false, followSymlinks: true })) {
        const abs = join(base, rel);
        const kind = await kindOf(abs);
        if (kind === "file") found.add(abs);
        else if (kind === "dir") await filesUnder(abs, found);
        if (found.size > UPLOAD_LIMITS.files) throw new Error(`the path names more than ${UPLOAD_LIMITS.files} files`);
      }
    }
    if (!o.includeHidden) for (const f of found) if (!before.has(f) && hidden(relative(base, f) || f.split(sep).pop()!)) found.delete(f);
  }
  const excluded = (f: string) =>
    excludes.some((x) => {
      if (f === x || f.startsWith(x.endsWith(sep) ? x : x + sep)) return true;
      const { base, rest } = splitPattern(x);
      if (rest === null || !f.startsWith(base === sep ? sep : base + sep)) return false;
      const rel = relative(base, f).split(sep).join("/");
      // A glob matching a directory excludes what is under it.
      const g = new Bun.Glob(rest);
      const parts = rel.split("/");
      for (let i = 1; i <= parts.length; i++) if (g.match(parts.slice(0, i).join("/"))) return true;
      return false;
    });
  const files = [...found].filter((f) => !excluded(f)).sort();
  if (!files.length) return { root: workspace, files: [] };
  const unique = [...new Set(searchPaths)];
  let root = unique.length === 1 ? unique[0]! : commonAncestor(unique);
  // A single file (or the same file named twice): its directory is the root.
  if (singleFiles.has(root) || files.includes(root)) root = dirname(root);
  return { root, files: files.map((f) => ({ path: f, name: relative(root, f).split(sep).join("/") })) };
}

/** Writes the zip of `files` to `dest` (deflate at `level`, 0 = stored); answers its size and SHA-256. */
export async function writeZip(files: readonly ZipInput[], dest: string, level: number): Promise<{ size: number; sha256: string }> {
  const zip = new yazl.ZipFile();
  for (const f of files) zip.addFile(f.path, f.name, level > 0 ? { compress: true, compressionLevel: level } : { compress: false });
  zip.end();
  const hash = createHash("sha256");
  let size = 0;
  const out = zip.outputStream as Readable;
  out.on("data", (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.byteLength;
  });
  await pipeline(out, createWriteStream(dest));
  return { size, sha256: hash.digest("hex") };
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((res, rej) =>
    yauzl.open(path, { lazyEntries: true, autoClose: true, validateEntrySizes: true, strictFileNames: false }, (e, z) => (e ? rej(e) : res(z))),
  );
}

function readStreamOf(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((res, rej) => zip.openReadStream(entry, (e, s) => (e ? rej(e) : res(s))));
}

/** Whether `path` is `root` or inside it. */
const inside = (root: string, path: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * Makes directory `dir` under `root` after checking that the deepest part of it that already
 * exists is really inside `root` (a symbolic link there would make mkdir create directories
 * elsewhere); the parts made anew cannot be links.
 */
async function mkdirInside(root: string, dir: string, name: string): Promise<void> {
  let existing = dir;
  while (existing !== root && !(await lstat(existing).catch(() => null))) existing = dirname(existing);
  if (!inside(root, await realpath(existing))) throw new Error(`the zip entry ${JSON.stringify(name)} would land outside the target`);
  await mkdir(dir, { recursive: true });
}

/**
 * Extracts the zip at `zipPath` into `target` (made if missing): every entry must stay inside
 * it (yauzl refuses absolute names and `..`; the real path of each parent is checked too, so a
 * symbolic link already in the target leads nowhere else); at most UNZIP_LIMITS entries and
 * bytes, each entry's size checked while it is written. Answers files and bytes written.
 */
export async function extractZip(
  zipPath: string,
  target: string,
  limits: { entries: number; bytes: number } = UNZIP_LIMITS,
): Promise<{ files: number; bytes: number }> {
  await mkdir(target, { recursive: true });
  const root = await realpath(target);
  const zip = await openZip(zipPath);
  if (zip.entryCount > limits.entries) {
    zip.close();
    throw new Error(`the zip holds ${zip.entryCount} entries; at most ${limits.entries} are extracted`);
  }
  let files = 0;
  let bytes = 0;
  try {
    await new Promise<void>((res, rej) => {
      const fail = (e: unknown) => {
        zip.close();
        rej(e);
      };
      zip.on("error", fail);
      zip.on("end", () => res());
      zip.on("entry", (entry: yauzl.Entry) => {
        void (async () => {
          const dest = resolve(root, entry.fileName);
          if (!inside(root, dest)) throw new Error(`the zip entry ${JSON.stringify(entry.fileName)} would land outside ${target}`);
          if (entry.fileName.endsWith("/")) {
            await mkdirInside(root, dest, entry.fileName);
          } else {
            bytes += entry.uncompressedSize;
            if (bytes > limits.bytes) throw new Error(`the zip unpacks to more than ${limits.bytes} bytes`);
            await mkdirInside(root, dirname(dest), entry.fileName);
            // Why lstat: writing through a symbolic link already at the destination would write elsewhere.
            const existing = await lstat(dest).catch(() => null);
            if (existing?.isSymbolicLink()) throw new Error(`the zip entry ${JSON.stringify(entry.fileName)} would write through a symbolic link`);
            await pipeline(await readStreamOf(zip, entry), createWriteStream(dest));
            files++;
          }
          zip.readEntry();
        })().catch(fail);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return { files, bytes };
}
