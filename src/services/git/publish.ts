// The commit point of every git write: upload the pack, then in one transaction move refs with
// compare-and-swap, make the pack visible and record the event (DESIGN.md "Git storage").
import { MemoryPacer } from "../../git/buffer-pool.ts";
import { ZERO_OID, type Oid, type RefCommand } from "../../git/types.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now, type Ctx } from "../context.ts";
import { adoptDefaultBranch } from "./default-branch.ts";
import { maybeScheduleCompaction, tierFor } from "./maintenance.ts";
import * as store from "./store.ts";

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

/** A per-ref check against rules already loaded: a refusal message, or null to allow. */
export type RefCheck = (update: RefUpdate, current: Oid | null) => string | null;

/**
 * Where branch protections plug in: given the publish transaction, loads the rules and answers
 * the check every update of this write goes through. Rules are read inside the transaction, so
 * a rule committed while the write was being prepared still applies to it.
 */
export type RefPolicy = (tx: Tx) => Promise<RefCheck>;

/** What publish did with one ref update. */
export type RefOutcome =
  | { kind: "applied" }
  /** The caller expected the ref at an old value, but it no longer exists. */
  | { kind: "stale" }
  /** The ref is not where the caller expected (it exists, at `current`). */
  | { kind: "moved"; current: Oid }
  /** A deletion of a ref that does not exist. */
  | { kind: "missing" }
  /** A new ref whose name clashes with `existing` (`a/b` and `a/b/c` cannot both exist). */
  | { kind: "clash"; existing: string }
  /** A branch protection refused it, with the message for the user. */
  | { kind: "policy"; message: string }
  /** This update was fine, but another update of the same atomic set was refused. */
  | { kind: "atomic-failed" }
  /** The repository was deleted meanwhile. */
  | { kind: "repo-deleted" };

/** Outcome per ref name. */
export type RefResults = Map<string, RefOutcome>;

/** The reason git shows for a refused ref (`ng <ref> <reason>`); null when applied. */
export function refusalReason(ref: string, outcome: RefOutcome): string | null {
  switch (outcome.kind) {
    case "applied":
      return null;
    case "stale":
      return "stale info: the ref no longer exists";
    case "moved":
      return "fetch first: the ref moved since you fetched";
    case "missing":
      return "no such ref";
    case "clash":
      return `cannot create ${ref}: ${outcome.existing} exists`;
    case "policy":
      return outcome.message;
    case "atomic-failed":
      return "atomic push failed";
    case "repo-deleted":
      return "repository was deleted";
  }
}

/**
 * What one publish transaction knows about names while it goes through its updates: the refs it
 * deletes, the refs it creates (and, for each proper prefix of one, that ref), and the stored refs
 * read so far by name. Why: a push of 2,000 tags asked the database about "refs" and "refs/tags"
 * 2,000 times each, and scanned every ref created so far for each new one.
 */
class NameState {
  readonly deleting: Set<string>;
  readonly creating = new Set<string>();
  /** A proper prefix of a created ref → that ref. */
  private readonly createdBelow = new Map<string, string>();
  /** Stored refs by name (null: none), as read in this transaction. */
  private readonly stored = new Map<string, Oid | null>();

  constructor(deleting: Set<string>) {
    this.deleting = deleting;
  }

  create(name: string): void {
    this.creating.add(name);
    for (let i = name.indexOf("/"); i >= 0; i = name.indexOf("/", i + 1)) {
      const prefix = name.slice(0, i);
      if (!this.createdBelow.has(prefix)) this.createdBelow.set(prefix, name);
    }
  }

  createdUnder(name: string): string | undefined {
    return this.createdBelow.get(name);
  }

  async storedRef(tx: Tx, repoId: string, name: string): Promise<Oid | null> {
    if (this.stored.has(name)) return this.stored.get(name)!;
    const value = await store.readRef(tx, repoId, name);
    this.stored.set(name, value);
    return value;
  }
}

/**
 * The existing ref a new ref `name` clashes with: `a/b` and `a/b/c` cannot both exist (git stores
 * refs as paths; clients fail to fetch such a pair). Null when free.
 */
async function refNameClash(tx: Tx, repoId: string, name: string, names: NameState): Promise<string | null> {
  const parts = name.split("/");
  for (let n = 2; n < parts.length; n++) {
    const prefix = parts.slice(0, n).join("/");
    if (((await names.storedRef(tx, repoId, prefix)) !== null && !names.deleting.has(prefix)) || names.creating.has(prefix)) return prefix;
  }
  const below = (await store.refNamesBelow(tx, repoId, name)).find((n) => !names.deleting.has(n));
  if (below !== undefined) return below;
  return names.createdUnder(name) ?? null;
}

/** The outcome of one update against the ref's current value, before policy. */
async function check(tx: Tx, repoId: string, u: RefUpdate, current: Oid | null, names: NameState): Promise<RefOutcome> {
  const expected = u.oldOid === ZERO_OID ? null : u.oldOid;
  if (current !== expected) return current === null ? { kind: "stale" } : { kind: "moved", current };
  if (u.newOid === ZERO_OID && current === null) return { kind: "missing" };
  if (current === null && u.newOid !== ZERO_OID) {
    const existing = await refNameClash(tx, repoId, u.ref, names);
    if (existing !== null) return { kind: "clash", existing };
  }
  return { kind: "applied" };
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
    also?: (tx: Tx) => Promise<void> | void;
  },
): Promise<RefResults> {
  // Files first, rows second: a crash between them leaves only an invisible orphan for GC.
  if (pack) await ctx.git.storePack(repo.id, pack);
  let packAdded = false;
  const pacer = new MemoryPacer();
  const outcome = await ctx.db.transaction(async (tx) => {
    // Reset per run: a retried transaction starts over (plan-27 §1.4).
    packAdded = false;
    const results: RefResults = new Map();
    const live = await store.repoIsLive(tx, repo.id);
    const policy = live && opts.policy ? await opts.policy(tx) : null;
    const ok: RefUpdate[] = [];
    const names = new NameState(new Set(updates.filter((u) => u.newOid === ZERO_OID).map((u) => u.ref)));
    for (const u of updates) {
      // A push of hundreds of tags is thousands of statements' worth of short-lived objects.
      pacer.tick();
      if (!live) {
        results.set(u.ref, { kind: "repo-deleted" });
        continue;
      }
      const current = await store.readRef(tx, repo.id, u.ref);
      let result = await check(tx, repo.id, u, current, names);
      if (result.kind === "applied") {
        const message = policy?.(u, current) ?? null;
        if (message !== null) result = { kind: "policy", message };
      }
      results.set(u.ref, result);
      if (result.kind !== "applied") continue;
      if (current === null && u.newOid !== ZERO_OID) names.create(u.ref);
      ok.push(u);
    }
    if (opts.atomic && ok.length !== updates.length) {
      for (const u of ok) results.set(u.ref, { kind: "atomic-failed" });
      return results;
    }
    for (const u of ok) {
      if (u.newOid === ZERO_OID) await store.deleteRef(tx, repo.id, u.ref);
      else if (u.oldOid === ZERO_OID) await store.insertRef(tx, repo.id, u.ref, u.newOid);
      else await store.moveRef(tx, repo.id, u.ref, u.oldOid, u.newOid);
    }
    if (ok.length) {
      await adoptDefaultBranch(tx, repo, ok);
      // Explore sorts by activity: every write that moved a ref (a push, a landing, a mirror sync, a web commit) counts.
      await store.touchRepoActive(tx, repo.id, now());
    }
    if (ok.length && pack && !(await store.packByName(tx, repo.id, pack.name))) {
      packAdded = true;
      await store.insertPack(tx, {
        id: newId(),
        repoId: repo.id,
        storageRepoId: repo.id,
        name: pack.name,
        size: pack.size,
        idxSize: pack.idxSize,
        objectCount: pack.objectCount,
        tier: tierFor(pack.objectCount),
        createdAt: now(),
        replacedAt: null,
        reachTips: pack.reachTips?.join("\n") ?? null,
      });
    }
    if (ok.length && opts.also) await opts.also(tx);
    if (ok.length && opts.event) {
      const moves = ok.map((u) => ({ ref: u.ref, old: u.oldOid === ZERO_OID ? null : u.oldOid, new: u.newOid === ZERO_OID ? null : u.newOid }));
      await ctx.events.record(tx, { repoId: repo.id, orgId: org.id, kind: "push", payload: opts.event, actorUserId: opts.actorUserId, moves });
    }
    return results;
  });
  if (packAdded) await maybeScheduleCompaction(ctx, repo.id);
  return outcome;
}
