// The commit point of every git write: upload the pack, then in one transaction move refs with
// compare-and-swap, make the pack visible and record the event (DESIGN.md "Git storage").
import { and, eq, sql } from "drizzle-orm";
import { ZERO_OID, type Oid, type RefCommand } from "../../git/types.ts";
import { packs, refs, repos, type Org, type Repo } from "../../db/schema/index.ts";
import type { Tx } from "../../db/client.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { recordEvent } from "../hooks/events.ts";
import { packKey, readRef } from "./snapshot.ts";
import { maybeScheduleCompaction, tierFor } from "./maintenance.ts";

/** A pack ready to publish: local files produced by the indexer (or built in memory). */
export interface PackToPublish {
  name: string;
  packPath: string;
  idxPath: string;
  objectCount: number;
  size: number;
  idxSize: number;
  /** When the pack holds exactly what these ids reach (its reachability record; see Pack.reachTips). */
  reachTips?: Oid[];
}

/** A ref update with what the caller knows about it. */
export interface RefUpdate extends RefCommand {
  /** For updates of an existing ref: whether new descends from old (computed before publishing). */
  fastForward?: boolean;
}

/**
 * A per-ref policy check run inside the transaction (branch protections plug in here);
 * returns a refusal reason or null.
 */
export type RefPolicy = (update: RefUpdate, current: Oid | null) => string | null;

/** Outcome per ref name: null when applied, else the reason it was refused. */
export type RefResults = Map<string, string | null>;

/**
 * Why a new ref cannot be created next to the existing ones: `a/b` and `a/b/c` cannot both exist
 * (git stores refs as paths; clients fail to fetch such a pair). Null when free.
 */
function refNameClash(tx: Tx, repoId: string, name: string, deleting: Set<string>, creating: Set<string>): string | null {
  const parts = name.split("/");
  for (let n = 2; n < parts.length; n++) {
    const prefix = parts.slice(0, n).join("/");
    if ((readRef(tx, repoId, prefix) !== null && !deleting.has(prefix)) || creating.has(prefix)) return `cannot create ${name}: ${prefix} exists`;
  }
  const below = tx
    .select({ name: refs.name })
    .from(refs)
    .where(and(eq(refs.repoId, repoId), sql`${refs.name} > ${`${name}/`} AND ${refs.name} < ${`${name}0`}`))
    .all()
    .find((r) => !deleting.has(r.name));
  if (below) return `cannot create ${name}: ${below.name} exists`;
  for (const c of creating) if (c.startsWith(`${name}/`)) return `cannot create ${name}: ${c} exists`;
  return null;
}

/** Uploads `pack` (if any) and applies `updates` with CAS; atomic = all or nothing. */
export async function publish(
  ctx: Ctx,
  org: Org,
  repo: Repo,
  updates: RefUpdate[],
  pack: PackToPublish | null,
  opts: {
    atomic: boolean;
    event: Record<string, unknown> | null;
    actorUserId: string | null;
    policy?: RefPolicy;
    /** Extra writes that must commit together with the ref moves (e.g. a commit's context). */
    also?: (tx: Tx) => void;
  },
): Promise<RefResults> {
  if (pack) {
    // Files first, rows second: a crash between them leaves only an invisible orphan for GC.
    await ctx.store.putFile(packKey(repo.id, pack.name, "pack"), pack.packPath);
    await ctx.store.putFile(packKey(repo.id, pack.name, "idx"), pack.idxPath);
    ctx.git.rememberIndex(repo.id, pack.name, await Bun.file(pack.idxPath).bytes());
  }
  let packAdded = false;
  const outcome = ctx.db.transaction((tx) => {
    const results: RefResults = new Map();
    const live = tx.select({ id: repos.id }).from(repos).where(eq(repos.id, repo.id)).get();
    const ok: RefUpdate[] = [];
    const deleting = new Set(updates.filter((u) => u.newOid === ZERO_OID).map((u) => u.ref));
    const creating = new Set<string>();
    for (const u of updates) {
      if (!live) {
        results.set(u.ref, "repository was deleted");
        continue;
      }
      const current = readRef(tx, repo.id, u.ref);
      const expected = u.oldOid === ZERO_OID ? null : u.oldOid;
      let reason: string | null = null;
      if (current !== expected) reason = current === null ? "stale info: the ref no longer exists" : "fetch first: the ref moved since you fetched";
      else if (u.newOid === ZERO_OID && current === null) reason = "no such ref";
      else if (current === null && u.newOid !== ZERO_OID) reason = refNameClash(tx, repo.id, u.ref, deleting, creating);
      if (reason === null) reason = opts.policy?.(u, current) ?? null;
      if (reason === null && current === null && u.newOid !== ZERO_OID) creating.add(u.ref);
      results.set(u.ref, reason);
      if (reason === null) ok.push(u);
    }
    if (opts.atomic && ok.length !== updates.length) {
      for (const u of ok) results.set(u.ref, "atomic push failed");
      return results;
    }
    for (const u of ok) {
      if (u.newOid === ZERO_OID) tx.delete(refs).where(and(eq(refs.repoId, repo.id), eq(refs.name, u.ref))).run();
      else if (u.oldOid === ZERO_OID) tx.insert(refs).values({ repoId: repo.id, name: u.ref, target: u.newOid }).run();
      else tx.update(refs).set({ target: u.newOid }).where(and(eq(refs.repoId, repo.id), eq(refs.name, u.ref), eq(refs.target, u.oldOid))).run();
    }
    if (ok.length && pack) {
      const exists = tx.select({ id: packs.id }).from(packs).where(and(eq(packs.repoId, repo.id), eq(packs.name, pack.name))).get();
      if (!exists) {
        packAdded = true;
        tx.insert(packs).values({ id: newId(), repoId: repo.id, name: pack.name, size: pack.size, idxSize: pack.idxSize, objectCount: pack.objectCount, tier: tierFor(pack.objectCount), createdAt: now(), reachTips: pack.reachTips?.join("\n") ?? null }).run();
      }
    }
    if (ok.length && opts.also) opts.also(tx);
    if (ok.length && opts.event) recordEvent(tx, { repoId: repo.id, orgId: org.id, kind: "push", payload: opts.event, actorUserId: opts.actorUserId });
    return results;
  }, { behavior: "immediate" });
  if (packAdded) maybeScheduleCompaction(ctx, repo.id);
  return outcome;
}
