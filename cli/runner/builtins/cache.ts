// The built-in `actions/cache`, `actions/cache/restore` and `actions/cache/save` (issue 30; GitHub's
// inputs and outputs). An entry is one gzip'd tar made with node-tar (not the machine's tar):
// each line of `path` (globs, `!` excludes, `~` = HOME, relative to the workspace) has a root —
// its directory before the first glob — and its files are stored as `<line index>/<path in the
// root>`, so a restore on another machine puts them under the same roots there. `version` is the
// SHA-256 of the path lines (GitHub's idea: another path list is another cache).
//
// Restoring is bounded: each line's entries are extracted under its root only (node-tar refuses
// `..` and absolute names, and extracting through a symbolic link); links pointing out of their
// root are skipped; entries and bytes written are capped. A failed restore is a miss with a
// warning, and a failed save a warning, as on GitHub: a cache never fails a job unless
// `fail-on-cache-miss` asks.
import { createHash } from "node:crypto";
import { mkdir, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { Glob } from "bun";
import * as tar from "tar";
import type { ActionHost, ActionResult, ActionStep } from "../action-host.ts";
import { call } from "../client.ts";
import { transferTarget } from "./transfer.ts";

/** Bounds of a restore (a hostile or corrupt archive cannot fill the disk past them). */
export const RESTORE_LIMITS = Object.freeze({ entries: 2_000_000, bytes: 64 * 1024 ** 3 });
/** Path lines per cache. */
const MAX_PATH_LINES = 64;
const GLOB_CHARS = /[*?[\]{}]/;

/** One `path` line, resolved: where its files live and which of them it takes. */
interface PathLine {
  /** The directory the line's entries are stored relative to. */
  root: string;
  /** A glob under `root`, or null for the one named path (`root/name`). */
  pattern: string | null;
  /** The named path's base name (no pattern). */
  name: string | null;
}

/** The lines of a multi-line input, trimmed, blanks dropped. */
function lines(v: string | undefined): string[] {
  return (v ?? "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

/** The version of a path list: SHA-256 over the lines as written, and the archive format. */
export function cacheVersion(paths: readonly string[]): string {
  return createHash("sha256")
    .update([...paths, "gzip", "svc-cache-1"].join("|"))
    .digest("hex");
}

/** SHA-256 (hex) of a file, read as a stream. */
async function fileSha256(file: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of Bun.file(file).stream()) h.update(chunk);
  return h.digest("hex");
}

/** A path line made absolute: `~` is HOME, a relative path is under the workspace. */
function absolute(line: string, workspace: string, home: string): string {
  const p = line === "~" ? home : line.startsWith("~/") ? join(home, line.slice(2)) : line;
  return isAbsolute(p) ? resolve(p) : resolve(workspace, p);
}

/** Splits a line into its root (before the first glob segment) and the rest. */
function pathLine(line: string, workspace: string, home: string): PathLine {
  const abs = absolute(line, workspace, home);
  const parts = abs.split(sep);
  const first = parts.findIndex((s) => GLOB_CHARS.test(s));
  if (first === -1) return { root: dirname(abs), pattern: null, name: abs.slice(dirname(abs).length).replace(/^\/+/, "") || "." };
  return { root: parts.slice(0, first).join(sep) || sep, pattern: parts.slice(first).join("/"), name: null };
}

/** Whether `p` is `root` or inside it. */
function within(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

/** The parsed `path` input: include lines (each with a root) and exclude matchers (`!`). */
function parsePaths(input: string | undefined, workspace: string, home: string): { raw: string[]; include: PathLine[]; exclude: Glob[] } {
  const raw = lines(input);
  if (!raw.length) throw new Error("Input required and not supplied: path");
  if (raw.length > MAX_PATH_LINES) throw new Error(`at most ${MAX_PATH_LINES} path lines`);
  const include: PathLine[] = [];
  const exclude: Glob[] = [];
  for (const l of raw) {
    if (l.startsWith("!")) exclude.push(new Glob(absolute(l.slice(1).trim(), workspace, home)));
    else include.push(pathLine(l, workspace, home));
  }
  return { raw, include, exclude };
}

/** The files each include line takes (absolute; a directory stands for all under it). */
async function matches(include: readonly PathLine[], exclude: readonly Glob[]): Promise<string[][]> {
  const out: string[][] = [];
  for (const line of include) {
    const found: string[] = [];
    if (line.name !== null) {
      const p = join(line.root, line.name);
      if (await stat(p).catch(() => null)) found.push(p);
    } else if (await stat(line.root).catch(() => null)) {
      for await (const m of new Glob(line.pattern!).scan({ cwd: line.root, onlyFiles: false, dot: true, followSymlinks: false })) {
        found.push(join(line.root, m));
      }
    }
    // A match inside another match is already in the archive (tar adds a directory with all under it).
    found.sort();
    const kept: string[] = [];
    for (const p of found) {
      if (exclude.some((g) => g.match(p))) continue;
      if (kept.length && within(kept[kept.length - 1]!, p)) continue;
      kept.push(p);
    }
    out.push(kept);
  }
  return out;
}

/** Writes the archive of `include` to `file`; answers how many paths went in. */
async function createArchive(file: string, include: readonly PathLine[], exclude: readonly Glob[]): Promise<number> {
  const found = await matches(include, exclude);
  const total = found.reduce((n, f) => n + f.length, 0);
  if (!total) return 0;
  const index = (abs: string): number => {
    // The line whose root holds the path (the longest root first: nested roots).
    let best = -1;
    for (let i = 0; i < include.length; i++) if (within(include[i]!.root, abs) && (best < 0 || include[i]!.root.length > include[best]!.root.length)) best = i;
    return best;
  };
  const name = (abs: string): string => {
    const i = index(abs);
    const r = relative(include[i]!.root, abs).split(sep).join("/");
    return r ? `${i}/${r}` : `${i}`;
  };
  await tar.c(
    {
      gzip: true,
      file,
      cwd: "/",
      portable: true,
      // Excluded files under an included directory stay out.
      filter: (p) => !exclude.some((g) => g.match(resolve("/", p))),
      onWriteEntry: (entry) => {
        // Why rewrite names: entries are stored relative to their line's root, never as this machine's absolute paths.
        entry.path = name(entry.absolute);
        if (entry.type === "Link" && entry.linkpath) entry.linkpath = name(resolve("/", entry.linkpath));
      },
    },
    found.flat().map((p) => p.slice(1)),
  );
  return total;
}

/** Extracts `file` under the roots of `include`; throws when the archive breaks the bounds. */
async function extractArchive(file: string, include: readonly PathLine[], limits: { entries: number; bytes: number } = RESTORE_LIMITS): Promise<void> {
  let entries = 0;
  let bytes = 0;
  let over = false;
  for (let i = 0; i < include.length; i++) {
    const root = include[i]!.root;
    await mkdir(root, { recursive: true });
    await tar.x({
      file,
      cwd: root,
      strip: 1,
      preservePaths: false,
      filter: (p, entry) => {
        if (!(p === `${i}` || p.startsWith(`${i}/`))) return false;
        const e = entry as tar.ReadEntry;
        if (++entries > limits.entries || (bytes += e.size ?? 0) > limits.bytes) {
          over = true;
          return false;
        }
        if (e.type === "SymbolicLink" || e.type === "Link") {
          // A link whose target leaves the root would let a later entry or a later step reach outside it.
          const at = resolve(root, p.slice(String(i).length + 1));
          const target = e.type === "Link" ? resolve(root, (e.linkpath ?? "").replace(/^[^/]*\/?/, "")) : resolve(dirname(at), e.linkpath ?? "");
          if (!within(root, target)) return false;
        }
        return true;
      },
    });
    if (over) throw new Error(`the archive holds more than ${limits.entries} entries or ${limits.bytes} bytes`);
  }
}

/** Archives what the `path` input names (as the save does) into `file`; answers how many paths matched. */
export async function archivePaths(file: string, path: string, workspace: string, home: string): Promise<number> {
  const p = parsePaths(path, workspace, home);
  return createArchive(file, p.include, p.exclude);
}

/** Extracts `file` under the roots of the `path` input (as the restore does), within `limits`. */
export async function restorePaths(
  file: string,
  path: string,
  workspace: string,
  home: string,
  limits: { entries: number; bytes: number } = RESTORE_LIMITS,
): Promise<void> {
  await extractArchive(file, parsePaths(path, workspace, home).include, limits);
}

/** One JSON call of the job's cache API. */
function api(host: ActionHost, path: string, body?: unknown) {
  return call(`${host.base}/v1/runner/jobs/${host.job.job_id}/caches${path}`, {
    token: host.token,
    method: "POST",
    body,
    what: "cache",
    attempts: 3,
    timeoutMs: 60_000,
  });
}

/** The checks GitHub makes of a key before any call. */
function checkKey(key: string, what: string): void {
  if (key.length > 512) throw new Error(`Key Validation Error: ${what} cannot be larger than 512 characters.`);
  if (key.includes(",")) throw new Error(`Key Validation Error: ${what} cannot contain commas.`);
}

interface RestoreOutcome {
  /** The key of the entry restored (or found, lookup-only), or null for a miss. */
  matched: string | null;
  exact: boolean;
}

/** Looks up and (unless `lookupOnly`) restores; a failed download or extraction is a miss with a warning. */
async function restore(
  host: ActionHost,
  step: ActionStep,
  key: string,
  restoreKeys: string[],
  include: PathLine[],
  version: string,
  lookupOnly: boolean,
): Promise<RestoreOutcome> {
  let found: Awaited<ReturnType<typeof api>>;
  try {
    found = await api(host, "/lookup", { key, restore_keys: restoreKeys, version });
  } catch (e) {
    // The server unreachable after the retries: a miss with a warning, as GitHub's toolkit treats its cache service.
    host.log(`##[warning]Failed to restore: ${(e as Error).message}\n`);
    return { matched: null, exact: false };
  }
  if (found.status === 204) {
    host.log(`Cache not found for input keys: ${[key, ...restoreKeys].join(", ")}\n`);
    return { matched: null, exact: false };
  }
  if (found.status !== 200) {
    host.log(`##[warning]Failed to restore: the cache lookup answered ${found.status}: ${found.body?.error ?? ""}\n`);
    return { matched: null, exact: false };
  }
  const hit = found.body as { cache_id: string; cache_key: string; size: number; exact: boolean; download: { url: string; headers: Record<string, string> } };
  if (lookupOnly) {
    host.log(`Cache found and can be restored from key: ${hit.cache_key}\n`);
    return { matched: hit.cache_key, exact: hit.exact };
  }
  const dir = join(host.temp, `cache-${step.index}-${hit.cache_id}`);
  await mkdir(dir, { recursive: true });
  const file = join(dir, "cache.tgz");
  try {
    const started = Date.now();
    const to = transferTarget(host, hit.download.url, hit.download.headers);
    const res = await fetch(to.url, { headers: to.headers });
    if (res.status !== 200 || !res.body) throw new Error(`download answered ${res.status}`);
    // Why Bun.write: Bun's own response-to-file path runs at about twice a Node stream pipeline's speed (bench/README.md § 40).
    await Bun.write(file, res);
    const got = (await stat(file)).size;
    if (got !== hit.size) throw new Error(`downloaded ${got} bytes of ${hit.size}`);
    const mib = got / 1024 ** 2;
    host.log(`Cache Size: ~${Math.round(mib)} MB (${got} B), received in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    await extractArchive(file, include);
    host.log(`Cache restored from key: ${hit.cache_key}\n`);
    return { matched: hit.cache_key, exact: hit.exact };
  } catch (e) {
    host.log(`##[warning]Failed to restore: ${(e as Error).message}\n`);
    return { matched: null, exact: false };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Archives and uploads; an existing key, nothing to save, or a failure is a log line (a warning), never a failed step. */
async function save(host: ActionHost, key: string, include: PathLine[], exclude: Glob[], version: string, tag: string): Promise<void> {
  const dir = join(host.temp, `cache-save-${tag}-${Date.now()}`);
  await mkdir(dir, { recursive: true });
  const file = join(dir, "cache.tgz");
  try {
    const n = await createArchive(file, include, exclude);
    if (!n) {
      host.log("##[warning]Path Validation Error: Path(s) specified in the action for caching do(es) not exist, hence no cache is being saved.\n");
      return;
    }
    const size = (await stat(file)).size;
    // Why the digest: on S3 the upload address is signed for it, so the bucket takes only this body.
    const sha256 = await fileSha256(file);
    const reserved = await api(host, "", { key, version, size, sha256 });
    if (reserved.status === 409) {
      host.log(`Failed to save: Unable to reserve cache with key ${key}, another job may be creating this cache. (${reserved.body?.error ?? "conflict"})\n`);
      return;
    }
    if (reserved.status !== 201) throw new Error(`reserving the cache answered ${reserved.status}: ${reserved.body?.error ?? ""}`);
    const up = reserved.body as { cache_id: string; upload: { url: string; method: string; headers: Record<string, string> } };
    const to = transferTarget(host, up.upload.url, up.upload.headers);
    const put = await fetch(to.url, { method: "PUT", headers: { ...to.headers, "content-type": "application/octet-stream" }, body: Bun.file(file) });
    if (put.status >= 300) throw new Error(`the upload answered ${put.status}`);
    await put.arrayBuffer();
    const done = await api(host, `/${up.cache_id}/commit`);
    if (done.status !== 200) throw new Error(`committing the cache answered ${done.status}: ${done.body?.error ?? ""}`);
    host.log(`Cache Size: ~${Math.round(size / 1024 ** 2)} MB (${size} B)\nCache saved with key: ${key}\n`);
  } catch (e) {
    host.log(`##[warning]Failed to save: ${(e as Error).message}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The inputs every variant reads. */
function setup(host: ActionHost, step: ActionStep) {
  const home = host.env().HOME || homedir();
  const paths = parsePaths(step.inputs.path, host.workspace, home);
  const key = (step.inputs.key ?? "").trim();
  if (!key) throw new Error("Input required and not supplied: key");
  checkKey(key, "Key");
  const restoreKeys = lines(step.inputs["restore-keys"]);
  if (restoreKeys.length > 10) throw new Error("Key Validation Error: at most 10 restore keys");
  for (const k of restoreKeys) checkKey(k, "Restore key");
  return { ...paths, key, restoreKeys, version: cacheVersion(paths.raw) };
}

const yes = (v: string | undefined) => (v ?? "").trim().toLowerCase() === "true";

function failed(e: unknown): ActionResult {
  return { exit: 1, outputs: {}, error: (e as Error).message };
}

/** `actions/cache`: restore now, and save in the post phase when the job succeeded and the key did not hit exactly. */
export async function cache(host: ActionHost, step: ActionStep): Promise<ActionResult> {
  try {
    const s = setup(host, step);
    const r = await restore(host, step, s.key, s.restoreKeys, s.include, s.version, yes(step.inputs["lookup-only"]));
    if (!r.matched && yes(step.inputs["fail-on-cache-miss"])) {
      return { exit: 1, outputs: { "cache-hit": "false" }, error: `Failed to restore cache entry. Exiting as fail-on-cache-miss is set. Input key: ${s.key}` };
    }
    host.addPost({
      name: step.name,
      when: "success",
      run: async () => {
        if (r.exact) {
          host.log(`Cache hit occurred on the primary key ${s.key}, not saving cache.\n`);
          return;
        }
        await save(host, s.key, s.include, s.exclude, s.version, String(step.index));
      },
    });
    return { exit: 0, outputs: { "cache-hit": r.exact ? "true" : "false" } };
  } catch (e) {
    return failed(e);
  }
}

/** `actions/cache/restore`: outputs cache-hit, cache-primary-key, cache-matched-key. */
export async function restoreCache(host: ActionHost, step: ActionStep): Promise<ActionResult> {
  try {
    const s = setup(host, step);
    const r = await restore(host, step, s.key, s.restoreKeys, s.include, s.version, yes(step.inputs["lookup-only"]));
    const outputs = { "cache-hit": r.exact ? "true" : "false", "cache-primary-key": s.key, "cache-matched-key": r.matched ?? "" };
    if (!r.matched && yes(step.inputs["fail-on-cache-miss"])) {
      return { exit: 1, outputs, error: `Failed to restore cache entry. Exiting as fail-on-cache-miss is set. Input key: ${s.key}` };
    }
    return { exit: 0, outputs };
  } catch (e) {
    return failed(e);
  }
}

/** `actions/cache/save`: saves now (an existing key is a log line, not a failure). */
export async function saveCache(host: ActionHost, step: ActionStep): Promise<ActionResult> {
  try {
    const s = setup(host, step);
    await save(host, s.key, s.include, s.exclude, s.version, String(step.index));
    return { exit: 0, outputs: {} };
  } catch (e) {
    return failed(e);
  }
}
