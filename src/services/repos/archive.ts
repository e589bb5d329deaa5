// GET …/repos/{repo}/archive/{ref}?format=tar.gz|zip (DECISIONS §5): the tree at a ref as an
// archive with every path under `{repo}-{ref}/`, made here without the git binary.
//
// In two steps. The plan walks the tree first (entries, modes, sizes from object headers: no
// file is read), so the caps (SVC_ARCHIVE_MAX bytes, SVC_ARCHIVE_MAX_ENTRIES entries) answer a
// clear 413 before any byte is sent. The stream then reads each file as the client drains it
// (a few ahead), big ones resolved on a worker thread (blob-read.ts); gzip and deflate run in
// zlib's own threads. Memory holds the entry list and a few files, never the archive.
//
// As `git archive`: tree order, directories as entries, executable bits kept, symlinks as
// symlinks, the commit's committer time as every mtime; the tar is laid out byte for byte as
// git's (services/git/archive-tar.ts). Unlike it: submodules (gitlinks) are left out rather
// than written as empty directories, .gitattributes (export-ignore, export-subst) is not
// applied, and Git LFS files are their pointers, as stored in the repository.
import { pipeline, Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { isTreeMode, parseTree } from "../../git/object.ts";
import { TimeSlice } from "../../git/time-slice.ts";
import type { Oid } from "../../git/types.ts";
import { NotFound, TooLarge, Unprocessable } from "../../errors.ts";
import { need, type RepoTarget } from "../access/target.ts";
import type { Ctx } from "../context.ts";
import { snapshotOf, type RepoSnapshot } from "../git/snapshot.ts";
import { tarEntryHeader, tarGlobalHeader, tarPadding, tarTrailer } from "../git/archive-tar.ts";
import { zipStream } from "../git/archive-zip.ts";
import { readBlobOffloaded } from "./blob-read.ts";
import { resolveRevision, revisionOptions } from "./content.ts";

/** The formats an archive comes in. */
export const ARCHIVE_FORMATS = ["tar.gz", "zip"] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

/** Files read ahead of the one being written (object storage answers each read slowly). */
const READ_AHEAD = 8;
/** Planned bytes of the files read ahead at most (beyond the next one). */
const READ_AHEAD_BYTES = 8 * 1024 * 1024;
/** Bytes gathered before a chunk goes to the compressor (tiny files make tiny writes). */
const CHUNK_BYTES = 64 * 1024;
/** A big file goes to the compressor (and yazl's CRC) in slices of this size. */
const BIG_SLICE = 1024 * 1024;

/** One entry of the plan, in tree order. */
interface Planned {
  /** Path under the prefix (directories end with `/`). */
  path: string;
  kind: "file" | "dir" | "symlink";
  executable: boolean;
  size: number;
  oid: Oid;
}

/** An archive of a resolved commit; nothing of its tree is read until `open()`. */
export interface Archive {
  /** `{repo}-{ref}.{ext}`, slashes in the ref as `-`. */
  filename: string;
  contentType: string;
  /** The commit archived. */
  commit: Oid;
  /** Whether the ref was the commit's full id (the archive can never change). */
  immutable: boolean;
  /**
   * Plans the tree (413 past the caps, 422 for a name zip cannot carry) and answers the
   * archive's bytes, made as they are read. Call once.
   */
  open(): Promise<ReadableStream<Uint8Array>>;
}

/** `{repo}-{ref}` with each `/` of the ref as `-` (a file name and a top directory). */
export function archiveBase(repo: string, ref: string): string {
  return `${repo}-${ref.replace(/\//g, "-")}`;
}

/** Splits `v1.0.tar.gz` / `main.zip` (the web address) into ref and format; null without a known suffix. */
export function splitArchiveName(name: string): { ref: string; format: ArchiveFormat } | null {
  for (const format of ARCHIVE_FORMATS) {
    const suffix = `.${format}`;
    if (name.endsWith(suffix) && name.length > suffix.length) return { ref: name.slice(0, -suffix.length), format };
  }
  return null;
}

/**
 * The archive of `ref` (a branch, tag, full ref, HEAD or commit id) once repo:read is allowed:
 * the ref resolved (404 unknown), the tree planned and read only when opened (so a revalidation
 * is answered from the commit alone).
 */
export async function getArchive(ctx: Ctx, t: RepoTarget, ref: string, format: ArchiveFormat): Promise<Archive> {
  need(t, "repo:read");
  const snapshot = await snapshotOf(ctx, t);
  const { oid, commit } = await resolveRevision(snapshot, ref, revisionOptions(t.actor));
  const base = archiveBase(t.repo.name, ref);
  // Only a full id never changes: a branch or tag could be named like one.
  const named = snapshot.refs.some((r) => r.name === ref || r.name === `refs/heads/${ref}` || r.name === `refs/tags/${ref}`);
  const immutable = !named && /^[0-9a-f]{40}$/.test(ref) && oid === ref;
  const mtime = commit.committer.timestamp;
  const read = (e: Planned) => readData(ctx, snapshot, e);
  const plan = () => planTree(snapshot, commit.tree, `${base}/`, { maxEntries: ctx.config.archiveMaxEntries, maxBytes: ctx.config.archiveMax });
  if (format === "zip") {
    return {
      filename: `${base}.zip`,
      contentType: "application/zip",
      commit: oid,
      immutable,
      open: async () => {
        const entries = await plan();
        // yazl asks for each file's bytes in entry order, so one read-ahead serves it.
        const ahead = readAhead(
          entries.filter((e) => e.kind !== "dir"),
          read,
        );
        let out: Readable;
        try {
          out = zipStream(entries, new Date(mtime * 1000), () => ahead.next());
        } catch (e) {
          // yazl refuses names zip cannot carry (a backslash path that would climb out): say so rather than 500.
          throw Unprocessable(`this tree cannot be written as a zip (${e instanceof Error ? e.message : String(e)}); download the tar.gz`);
        }
        return webStream(out);
      },
    };
  }
  return {
    filename: `${base}.tar.gz`,
    contentType: "application/gzip",
    commit: oid,
    immutable,
    open: async () => {
      const entries = await plan();
      const gzip = createGzip();
      // pipeline, not pipe: a failed read destroys the gzip stream too, so the client's download fails rather than ends early.
      pipeline(Readable.from(tarChunks(oid, mtime, entries, read)), gzip, () => {});
      return webStream(gzip);
    },
  };
}

/**
 * The tree's entries, depth first in tree order with each directory before what it holds (as
 * git archive writes them), the prefix directory first. Submodules are skipped. 413 past either
 * cap; sizes come from object headers, so no file is read.
 */
async function planTree(snapshot: RepoSnapshot, root: Oid, prefix: string, caps: { maxEntries: number; maxBytes: number }): Promise<Planned[]> {
  const out: Planned[] = [{ path: prefix, kind: "dir", executable: false, size: 0, oid: root }];
  const slice = new TimeSlice();
  let bytes = 0;
  const walk = async (tree: Oid, dir: string): Promise<void> => {
    await slice.tick();
    const obj = await snapshot.objects.read(tree);
    if (!obj || obj.type !== "tree") throw NotFound(`tree ${tree} is missing`);
    for (const e of parseTree(obj.data)) {
      if (e.mode === "160000") continue;
      if (out.length >= caps.maxEntries)
        throw TooLarge(`this tree has more than ${caps.maxEntries} entries, more than an archive holds here; clone it with git`);
      if (isTreeMode(e.mode)) {
        out.push({ path: `${dir}${e.name}/`, kind: "dir", executable: false, size: 0, oid: e.oid });
        await walk(e.oid, `${dir}${e.name}/`);
        continue;
      }
      await slice.tick();
      const head = await snapshot.objects.readHeader(e.oid);
      if (!head) throw NotFound(`blob ${e.oid} is missing`);
      bytes += head.size;
      if (bytes > caps.maxBytes)
        throw TooLarge(`this tree holds more than ${Math.floor(caps.maxBytes / 1024 / 1024)} MiB of files, more than an archive holds here; clone it with git`);
      const symlink = e.mode === "120000";
      out.push({ path: `${dir}${e.name}`, kind: symlink ? "symlink" : "file", executable: e.mode === "100755", size: head.size, oid: e.oid });
    }
  };
  await walk(root, prefix);
  return out;
}

/** A file's bytes or a symlink's target (empty for a directory). */
async function readData(ctx: Ctx, snapshot: RepoSnapshot, e: Planned): Promise<Uint8Array> {
  if (e.kind === "dir") return new Uint8Array(0);
  const obj = await readBlobOffloaded(ctx, snapshot.objects, e.oid);
  if (!obj) throw NotFound(`blob ${e.oid} is missing`);
  return obj.data;
}

/** The tar's bytes in chunks of about CHUNK_BYTES (a big file in slices of BIG_SLICE), files read ahead (readAhead). */
async function* tarChunks(commit: Oid, mtime: number, entries: Planned[], read: (e: Planned) => Promise<Uint8Array>): AsyncGenerator<Uint8Array> {
  const slice = new TimeSlice();
  const ahead = readAhead(entries, read);
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let written = 0;
  const take = () => {
    const chunk = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    return chunk;
  };
  const add = (b: Uint8Array) => {
    if (!b.length) return;
    pending.push(b);
    pendingBytes += b.length;
    written += b.length;
  };
  add(tarGlobalHeader(commit, mtime));
  for (const e of entries) {
    const data = await ahead.next();
    const linkname = e.kind === "symlink" ? data : undefined;
    add(tarEntryHeader({ path: e.path, kind: e.kind, executable: e.executable, size: data.length, linkname, oid: e.oid }, mtime));
    if (e.kind === "file" && data.length >= CHUNK_BYTES) {
      // Why slices: one big write would be copied whole into a chunk, and then compressed in one go.
      yield take();
      for (let at = 0; at < data.length; at += BIG_SLICE) {
        const part = data.subarray(at, Math.min(data.length, at + BIG_SLICE));
        written += part.length;
        yield part;
        await slice.tick();
      }
    } else if (e.kind === "file") add(data);
    if (e.kind === "file") add(tarPadding(data.length));
    if (pendingBytes >= CHUNK_BYTES) yield take();
    await slice.tick();
  }
  add(tarTrailer(written));
  yield take();
}

/**
 * Reads the entries' data in order, a few ahead of the one being written: at most READ_AHEAD
 * files and READ_AHEAD_BYTES of planned size in flight (always at least the next one), so a run
 * of big files is never all in memory at once.
 */
function readAhead(entries: Planned[], read: (e: Planned) => Promise<Uint8Array>): { next(): Promise<Uint8Array> } {
  const inFlight: { size: number; data: Promise<Uint8Array> }[] = [];
  let index = 0;
  let bytes = 0;
  const fill = () => {
    while (index < entries.length && inFlight.length < READ_AHEAD && (inFlight.length === 0 || bytes + entries[index]!.size <= READ_AHEAD_BYTES)) {
      const e = entries[index++]!;
      const data = read(e);
      // Handled where it is awaited; this keeps an early failure from being reported as unhandled.
      data.catch(() => {});
      inFlight.push({ size: e.size, data });
      bytes += e.size;
    }
  };
  return {
    async next() {
      fill();
      const head = inFlight.shift()!;
      bytes -= head.size;
      const data = await head.data;
      fill();
      return data;
    },
  };
}

/** A Node stream as the web stream a Response sends, pulled as the client reads; cancelling destroys it. */
function webStream(source: Readable): ReadableStream<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await it.next();
        if (done) controller.close();
        else controller.enqueue(value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBuffer));
      } catch (e) {
        controller.error(e);
      }
    },
    cancel() {
      source.destroy();
    },
  });
}
