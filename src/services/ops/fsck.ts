// Integrity of stored repositories (`svc fsck`, DECISIONS §4): every live pack and idx exists
// with the recorded size and checksum (a pack's name is the SHA-1 of its contents, an idx ends
// with the pack's checksum and its own), everything reachable from every ref is present (the
// engine's connectivity walk from every tip), and every CI job log is whole (its chunks present
// with their recorded sizes, contiguous from byte 0 to the recorded length, UTF-8 text). Stored
// files are told apart by kind (object-kinds.ts): a file no row accounts for is an orphan, with
// its kind's reason (garbage the sweeper or the purge deletes, not damage); a key of no kind is
// reported as unknown.
//
// Several nodes (issue 27): the rows each step needs are read first, in one consistent view
// (Database.readView: REPEATABLE READ READ ONLY on PostgreSQL), then the object store is checked
// against them outside any transaction. One view per repository, not one for the whole run: a
// repository's pack rows, refs and log rows are committed together and must agree, while a view
// held through hours of pack hashing would keep PostgreSQL from vacuuming and compare the store
// with rows hours old (every pack pushed since would show as an orphan).
import { checkConnectivity } from "../../git/connectivity.ts";
import { bytesToHex } from "../../git/oid.ts";
import { PackIndex } from "../../git/pack-index.ts";
import type { Pack } from "../../git/pack-reader.ts";
import { PackSet } from "../../git/pack-set.ts";
import { GitError } from "../../git/types.ts";
import type { Ctx } from "../context.ts";
import { packKey } from "../git/snapshot.ts";
import * as store from "./store.ts";
import { OBJECT_KINDS, kindOf, lfsKey, objectRoots, repoIdOf, type ObjectKind } from "./object-kinds.ts";
import { readChunks } from "./transfer.ts";

/** What fsck found in one repository. */
export interface RepoCheck {
  repo: string;
  packs: number;
  objects: number;
  refs: number;
  /** Jobs with a log, and the bytes of those logs. */
  logs: number;
  logBytes: number;
  /** Git LFS objects of the network this repository is the root of, and their bytes. */
  lfs: number;
  lfsBytes: number;
  /** Each problem in a line (empty when the repository is sound). */
  problems: string[];
}

/** A stored file that no pack row names. */
export interface Orphan {
  key: string;
  size: number;
  reason: string;
}

/** Progress inside one repository: which step, and how far. */
export type FsckProgress = (note: string) => void;

/** Checks one pack's files; answers the problems (none when sound) and the parsed index. */
async function checkPack(ctx: Ctx, row: store.PackFacts, progress: FsckProgress): Promise<{ problems: string[]; idx: PackIndex | null }> {
  const problems: string[] = [];
  const packName = `pack-${row.name}`;
  // A shared pack (a fork's inherited one) is checked where it lives, under its owner's prefix.
  const packPath = packKey(row.storageRepoId, row.name, "pack");
  const idxPath = packKey(row.storageRepoId, row.name, "idx");
  const [packStat, idxStat] = await Promise.all([ctx.store.stat(packPath), ctx.store.stat(idxPath)]);
  if (!packStat) problems.push(`${packName}.pack: missing`);
  else if (packStat.size !== row.size) problems.push(`${packName}.pack: ${packStat.size} bytes, recorded ${row.size}`);
  if (!idxStat) problems.push(`${packName}.idx: missing`);
  else if (idxStat.size !== row.idxSize) problems.push(`${packName}.idx: ${idxStat.size} bytes, recorded ${row.idxSize}`);

  let idx: PackIndex | null = null;
  if (idxStat && idxStat.size === row.idxSize) {
    const bytes = await ctx.store.get(idxPath);
    if (!bytes || bytes.length < 40) problems.push(`${packName}.idx: unreadable`);
    else {
      const own = bytesToHex(Bun.SHA1.hash(bytes.subarray(0, bytes.length - 20)) as Uint8Array);
      if (own !== bytesToHex(bytes, bytes.length - 20, 20)) problems.push(`${packName}.idx: checksum mismatch (contents changed)`);
      else if (bytesToHex(bytes, bytes.length - 40, 20) !== row.name) problems.push(`${packName}.idx: describes another pack`);
      else {
        try {
          idx = PackIndex.parse(bytes);
          if (idx.count !== row.objectCount) problems.push(`${packName}.idx: ${idx.count} objects, recorded ${row.objectCount}`);
        } catch (error) {
          problems.push(`${packName}.idx: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
  }

  if (packStat && packStat.size === row.size) {
    if (row.size < 32) problems.push(`${packName}.pack: too short to be a pack`);
    else {
      // The pack's name is the SHA-1 of everything before its 20-byte trailer, which repeats it.
      const h = new Bun.CryptoHasher("sha1");
      const body = row.size - 20;
      const trailer = new Uint8Array(20);
      let at = 0;
      await readChunks(ctx.store, packPath, row.size, (chunk) => {
        const take = Math.max(0, Math.min(chunk.length, body - at));
        if (take > 0) h.update(chunk.subarray(0, take));
        for (let i = take; i < chunk.length; i++) trailer[at + i - body] = chunk[i]!;
        at += chunk.length;
        progress(`${packName}.pack ${Math.round((100 * at) / row.size)}%`);
      });
      const sum = h.digest("hex");
      if (sum !== bytesToHex(trailer)) problems.push(`${packName}.pack: checksum mismatch (contents changed)`);
      else if (sum !== row.name) problems.push(`${packName}.pack: checksum ${sum} does not match its name`);
    }
  }
  return { problems, idx: problems.length ? null : idx };
}

/** Checks one repository: its live packs, then the connectivity of every ref. */
export async function checkRepo(ctx: Ctx, repo: store.RepoName, progress: FsckProgress = () => {}): Promise<RepoCheck> {
  const {
    rows,
    refs,
    logs: logRows,
    lfs: lfsRows,
  } = await ctx.db.readView(async (q) => ({
    rows: await store.packRows(q, { repoId: repo.id }),
    refs: await store.refRows(q, repo.id),
    logs: { chunks: await store.logChunkRows(q, { repoId: repo.id }), jobs: await store.jobsWithLogs(q, repo.id) },
    lfs: await store.lfsObjectRows(q, { networkId: repo.id }),
  }));
  const problems: string[] = [];
  const opened: Pack[] = [];
  let objects = 0;
  for (const [i, row] of rows.entries()) {
    progress(`pack ${i + 1}/${rows.length}`);
    const checked = await checkPack(ctx, row, progress);
    problems.push(...checked.problems);
    if (checked.idx) {
      objects += checked.idx.count;
      opened.push(await ctx.git.openPack(row));
    }
  }
  if (refs.length && !problems.length) {
    progress(`connectivity of ${refs.length} refs`);
    const set = new PackSet(opened);
    const none = new PackSet([]);
    const tips = [...new Set(refs.map((r) => r.target))];
    try {
      await checkConnectivity(set, tips, { existing: none });
    } catch (error) {
      if (!(error instanceof GitError)) throw error;
      // Name the refs that reach the hole (one walk per ref, only on this failure path).
      for (const ref of refs) {
        try {
          await checkConnectivity(new PackSet(opened), [ref.target], { existing: none });
        } catch (e) {
          if (!(e instanceof GitError)) throw e;
          problems.push(`${ref.name} (${ref.target}): ${e.message}`);
        }
      }
    }
  }
  progress("job logs");
  const logs = await checkLogs(ctx, repo.id, logRows);
  problems.push(...logs.problems);
  progress("LFS objects");
  const lfs = await checkLfs(ctx, lfsRows, progress);
  problems.push(...lfs.problems);
  return {
    repo: repo.name,
    packs: rows.length,
    objects,
    refs: refs.length,
    logs: logs.jobs,
    logBytes: logs.bytes,
    lfs: lfsRows.length,
    lfsBytes: lfs.bytes,
    problems,
  };
}

/**
 * Checks the Git LFS objects of a network (at its root repository: a fork shares them): each is
 * stored with its recorded size, and its bytes hash to its oid (SHA-256).
 */
async function checkLfs(ctx: Ctx, rows: store.LfsObjectFacts[], progress: FsckProgress): Promise<{ problems: string[]; bytes: number }> {
  const problems: string[] = [];
  let bytes = 0;
  for (const [i, o] of rows.entries()) {
    progress(`LFS object ${i + 1}/${rows.length}`);
    bytes += o.size;
    const key = lfsKey(o.networkId, o.oid);
    const stat = await ctx.store.stat(key);
    if (!stat) {
      problems.push(`LFS object ${o.oid}: missing (${key})`);
      continue;
    }
    if (stat.size !== o.size) {
      problems.push(`LFS object ${o.oid}: ${stat.size} bytes, recorded ${o.size}`);
      continue;
    }
    const h = new Bun.CryptoHasher("sha256");
    await readChunks(ctx.store, key, o.size, (chunk) => void h.update(chunk));
    const sum = h.digest("hex");
    if (sum !== o.oid) problems.push(`LFS object ${o.oid}: its bytes hash to ${sum} (contents changed)`);
  }
  return { problems, bytes };
}

/**
 * Checks every CI job log of a repository: each chunk the database names is stored with its
 * recorded size and is UTF-8 text (it was encoded from the runner's text), and the chunks run
 * from byte 0 without gap or overlap to the length recorded for the job.
 */
async function checkLogs(
  ctx: Ctx,
  repoId: string,
  rows: { chunks: store.LogChunkFacts[]; jobs: Awaited<ReturnType<typeof store.jobsWithLogs>> },
): Promise<{ problems: string[]; jobs: number; bytes: number }> {
  const problems: string[] = [];
  const stored = new Map<string, number>();
  for await (const o of ctx.store.list(`repos/${repoId}/ci-logs/`)) stored.set(o.key, o.size);
  const chunks = new Map<string, store.LogChunkFacts[]>();
  for (const c of rows.chunks) {
    let list = chunks.get(c.jobId);
    if (!list) chunks.set(c.jobId, (list = []));
    list.push(c);
  }
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const jobs = rows.jobs;
  let bytes = 0;
  for (const job of jobs) {
    const where = `log of job ${job.key} (${job.id}, run ${job.runId})`;
    let at = 0;
    for (const c of chunks.get(job.id) ?? []) {
      if (c.offset !== at)
        problems.push(`${where}: ${c.offset > at ? `bytes ${at}-${c.offset - 1} are in no chunk` : `the chunk at byte ${c.offset} overlaps the one before`}`);
      at = c.offset + c.size;
      const size = stored.get(c.key);
      if (size === undefined) {
        problems.push(`${where}: chunk at byte ${c.offset} missing (${c.key})`);
        continue;
      }
      // A chunk the server's masking pass changed holds fewer bytes than the runner sent (c.size).
      if (size !== c.size && !c.masked) {
        problems.push(`${where}: chunk at byte ${c.offset} is ${size} bytes, recorded ${c.size}`);
        continue;
      }
      const text = await ctx.store.get(c.key);
      try {
        if (!text) throw new Error("gone");
        decoder.decode(text);
      } catch {
        problems.push(`${where}: chunk at byte ${c.offset} is not UTF-8 text (contents changed)`);
      }
    }
    if (at !== job.logSize) problems.push(`${where}: its chunks hold ${at} bytes, recorded ${job.logSize}`);
    bytes += job.logSize;
  }
  return { problems, jobs: jobs.length, bytes };
}

/**
 * Stored files (of one repository, or of all) that no row accounts for: for each kind
 * (object-kinds.ts) the files its rows do not name, live or kept for a grace period, of any
 * repository (a fork's rows keep its parent's files, even a deleted parent's, known); and any key
 * of no kind at all.
 */
export async function findOrphans(ctx: Ctx, repoId?: string): Promise<Orphan[]> {
  const { known, repos } = await ctx.db.readView(async (q) => {
    const known = new Map<ObjectKind, Set<string>>();
    for (const kind of OBJECT_KINDS) known.set(kind, await kind.known(q));
    return { known, repos: await store.repoIds(q) };
  });
  const out: Orphan[] = [];
  const roots = objectRoots().map((root) => (repoId !== undefined && root === "repos/" ? `repos/${repoId}/` : root));
  for (const root of roots) {
    for await (const o of ctx.store.list(root)) {
      const kind = kindOf(o.key);
      if (!kind) out.push({ key: o.key, size: o.size, reason: "not a file svc writes (no kind of stored file has such a key)" });
      else if (known.get(kind)!.has(o.key)) continue;
      else if (kind.derived && repos.has(repoIdOf(o.key) ?? "")) continue;
      else out.push({ key: o.key, size: o.size, reason: `${kind.name}: ${kind.orphanReason(repos.has(repoIdOf(o.key) ?? ""))}` });
    }
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** The repositories to check: one by `org/name`, or all. */
export async function reposToCheck(ctx: Ctx, only?: string): Promise<store.RepoName[]> {
  if (only === undefined) return store.allRepoNames(ctx.db.read);
  const [org, name, extra] = only.split("/");
  const one = org && name && extra === undefined ? await store.repoByFullName(ctx.db.read, org, name) : null;
  return one ? [one] : [];
}
