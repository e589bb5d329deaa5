// Integrity of stored repositories (`svc fsck`, DECISIONS §4): every live pack and idx exists
// with the recorded size and checksum (a pack's name is the SHA-1 of its contents, an idx ends
// with the pack's checksum and its own), and everything reachable from every ref is present
// (the engine's connectivity walk from every tip). Files no pack row names are reported as
// orphans: garbage the sweeper deletes after its grace period, not damage.
import { checkConnectivity } from "../../git/connectivity.ts";
import { bytesToHex } from "../../git/oid.ts";
import { PackIndex } from "../../git/pack-index.ts";
import type { Pack } from "../../git/pack-reader.ts";
import { PackSet } from "../../git/pack-set.ts";
import { GitError } from "../../git/types.ts";
import type { Ctx } from "../context.ts";
import { packKey } from "../git/snapshot.ts";
import * as store from "./store.ts";
import { readChunks } from "./transfer.ts";

/** What fsck found in one repository. */
export interface RepoCheck {
  repo: string;
  packs: number;
  objects: number;
  refs: number;
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
  const rows = await store.packRows(ctx.db.read, { repoId: repo.id });
  const refs = await store.refRows(ctx.db.read, repo.id);
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
  return { repo: repo.name, packs: rows.length, objects, refs: refs.length, problems };
}

const PACK_FILE = /^repos\/([A-Za-z0-9._-]+)\/packs\/pack-([0-9a-f]{40})\.(pack|idx)$/;

/**
 * Stored files under `repos/` (or one repository's prefix) that no pack row, live or replaced, of
 * any repository names: a fork's rows keep its parent's files (even a deleted parent's) known.
 */
export async function findOrphans(ctx: Ctx, repoId?: string): Promise<Orphan[]> {
  const known = new Set((await store.packRows(ctx.db.read, { withReplaced: true })).map((p) => `${p.storageRepoId}/${p.name}`));
  const repos = await store.repoIds(ctx.db.read);
  const out: Orphan[] = [];
  for await (const o of ctx.store.list(repoId ? `repos/${repoId}/` : "repos/")) {
    const m = PACK_FILE.exec(o.key);
    if (!m) out.push({ key: o.key, size: o.size, reason: "not a pack file" });
    else if (known.has(`${m[1]}/${m[2]}`)) continue;
    else if (!repos.has(m[1]!)) out.push({ key: o.key, size: o.size, reason: "its repository was deleted (the purge job removes it)" });
    else out.push({ key: o.key, size: o.size, reason: "no pack row (an upload that never committed; swept after the grace period)" });
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
