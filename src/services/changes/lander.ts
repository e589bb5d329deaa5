// The lander (a merge queue): per target branch, takes queued changes in order and lands each by
// a fast-forward or a merge commit whose tree touches no path both sides changed, once every
// required check passed for the change's head; otherwise ejects it with a verdict.
//
// The queue is the `changes` rows in state `queued`, written by the land request's own
// transaction. A landing is one `publish`: the target moves by compare-and-swap and, in the same
// transaction, the change rows become `landed` and change.landed is recorded. A server killed
// mid-landing has either published (the rows say landed; nothing is redone) or not (the rows
// still say queued; the landing starts over). A concurrent push to the target fails the CAS and
// the lander recomputes on the new tip; it never overwrites.
import { readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { mergeBases, mergeTrees, reaches } from "../../git/merge.ts";
import { serializeCommit, type Signature } from "../../git/object.ts";
import { FsckError, fsckObjects } from "../../git/fsck.ts";
import { hashObject } from "../../git/oid.ts";
import { openFileSource } from "../../git/file-source.ts";
import { PackIndex, writePackIndex } from "../../git/pack-index.ts";
import { Pack } from "../../git/pack-reader.ts";
import { buildPack } from "../../git/pack-writer.ts";
import { CommitCache } from "../../git/revision.ts";
import type { Oid, RawObject } from "../../git/types.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { Later } from "../jobs/engine.ts";
import { jobKind } from "../jobs/kind.ts";
import { CHANGE_LAND, type LandPayload } from "./land-job.ts";
import { decide, deferredFacts } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { checkStatesOfCommit } from "../ci/checks.ts";
import { PackSet } from "../../git/pack-set.ts";
import { publish, type PackToPublish } from "../git/publish.ts";
import { closurePack } from "../git/share.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { protectionOfBranch, refPolicy, withRefusals } from "../git/policy.ts";
import { lockRefusals, withObjects } from "../git/lfs-locks.ts";
import { changesBeneath, ejectChange } from "./changes.ts";
import { approvalFields, stackApprovals } from "./approvals.ts";
import type { Verdict } from "./schemas.ts";
import * as store from "./store.ts";
import type { ChangeRow } from "./store.ts";

/** What one step of a target's queue did. */
export type Step = "landed" | "ejected" | "waiting" | "idle" | "retry";

/** Attempts per landing when other writers keep moving the target. */
const MAX_RACES = 20;

/** Raised inside the publish transaction when the queue changed since the landing was planned. */
class QueueChanged extends Error {}

/** Lands or ejects the first queued change of `repoId`'s `target`, or reports why it waits. */
export async function landNext(ctx: Ctx, repoId: string, target: string): Promise<Step> {
  for (let race = 0; race < MAX_RACES; race++) {
    const step = await attempt(ctx, repoId, target);
    if (step !== "retry") return step;
  }
  return "retry";
}

async function attempt(ctx: Ctx, repoId: string, target: string): Promise<Step> {
  const change = await store.queueHead(ctx.db.read, repoId, target);
  if (!change) return "idle";
  const found = await store.repoWithOrg(ctx.db.read, repoId);
  if (!found) return "idle";
  const { org, repo } = found;
  const eject = async (verdict: Verdict): Promise<Step> => {
    const done = await ctx.db.transaction(async (tx) => {
      const cur = await store.changeByNumber(tx, repoId, change.number);
      if (cur?.state !== "queued" || cur.queuedAt !== change.queuedAt) return false;
      await ejectChange(ctx, tx, org, cur, verdict, change.queuedByUserId);
      return true;
    });
    return done ? "ejected" : "retry";
  };

  // Why: the lander writes on behalf of whoever queued the change, decided like any write now
  // (their role may have changed, or billing may block writes, since they asked).
  const decision = decide(await deferredFacts(ctx, change.queuedByUserId, org, repo), "repo:write");
  if (!decision.allow) return eject({ kind: "forbidden", message: decision.message });
  if (change.head !== change.queuedHead || !change.head) {
    return eject({
      kind: "head_moved",
      message: "the branch moved after the land request; land it again",
      expected: change.queuedHead ?? "",
      actual: change.head,
    });
  }
  // A change from a fork: its commits live in the fork's packs; the landing brings the objects
  // they need in a pack of their own (closurePack), published with the move of the target.
  const source = change.sourceRepoId ? await store.repoWithOrg(ctx.db.read, change.sourceRepoId) : null;
  if (change.sourceRepoId && !source) return eject({ kind: "unsupported", message: "the repository this change comes from was deleted" });
  let beneath: ChangeRow[];
  try {
    beneath = await changesBeneath(ctx.db.read, repoId, change);
  } catch (e) {
    return eject({ kind: "stack", message: (e as Error).message });
  }

  const rule = await protectionOfBranch(ctx.db.read, repoId, target);
  // Approvals are no pending state: a change that lacks them leaves the queue at once.
  const missing = await stackApprovals(ctx, org, repo, [...beneath, change], rule);
  if (missing) return eject({ kind: "approval", message: missing.message, ...approvalFields(missing) });
  if (rule?.requiredChecks.length) {
    const results = await checkStatesOfCommit(ctx, repoId, change.head);
    for (const key of rule.requiredChecks) {
      const state = results.get(key);
      if (state === "failure" || state === "cancelled")
        return eject({ kind: "check_failed", message: `required check ${key} ended ${state} on ${change.head.slice(0, 12)}`, check: key, state });
    }
    // A skipped required check counts as passed (GitHub's rule: a job skipped by its `if` or a skipped need).
    const pending = rule.requiredChecks.filter((k) => results.get(k) !== "success" && results.get(k) !== "skipped");
    if (pending.length) {
      const key = pending[0]!;
      const state = results.get(key);
      const waiting = `waiting for required check ${key}: ${state ? `it is ${state}` : "no result yet"} for ${change.head.slice(0, 12)}`;
      if (change.waiting !== waiting) await ctx.db.transaction((tx) => store.updateChange(tx, change.id, { waiting }));
      return "waiting";
    }
  }

  const own = await openSnapshot(ctx.db.read, ctx.git, repo);
  // Planning reads this repository's objects and, for a fork's change, the fork's as well.
  const sourcePacks = source ? (await openSnapshot(ctx.db.read, ctx.git, source.repo)).objects.packs : [];
  const objects = source ? new PackSet([...own.objects.packs, ...sourcePacks]) : own.objects;
  const snapshot = { refs: own.refs, objects };
  const ref = `refs/heads/${target}`;
  const tip = snapshot.refs.find((r) => r.name === ref)?.oid ?? null;
  if (!tip) return eject({ kind: "target_missing", message: `target branch ${target} does not exist` });
  // Every change beneath must be in the top's history: landing the top lands their commits.
  const cache = new CommitCache(snapshot.objects);
  for (const b of beneath) {
    if (!b.head || !(await reaches(cache, change.head, b.head))) {
      return eject({ kind: "stack", message: `change #${b.number} beneath is not contained in #${change.number}'s head; rebase the stack` });
    }
  }

  let newTip: Oid;
  /** The merge's new objects (none for a fast-forward), for the LFS lock check. */
  let made: RawObject[] = [];
  let pack: PackToPublish | null = null;
  let cleanup: string[] = [];
  if (tip === change.head || (await reaches(cache, change.head, tip))) {
    newTip = change.head;
  } else if (await reaches(cache, tip, change.head)) {
    // Already in the target: nothing to write, the change lands as the commit that holds it.
    newTip = tip;
  } else {
    const bases = await mergeBases(snapshot.objects, tip, change.head, cache);
    if (bases.length === 0) return eject({ kind: "unrelated", message: `${change.branch} and ${target} share no history` });
    if (bases.length > 1)
      return eject({
        kind: "conflict",
        message: `${change.branch} and ${target} have ${bases.length} merge bases (criss-cross merges); rebase the branch onto ${target}`,
        paths: [],
      });
    const [b, o, t] = await Promise.all([bases[0]!, tip, change.head].map((c) => cache.get(c)));
    const merged = await mergeTrees(snapshot.objects, b!.tree, o!.tree, t!.tree);
    if (merged.kind === "conflict") {
      const shown = merged.paths.slice(0, 5).join(", ");
      return eject({
        kind: "conflict",
        message: `both ${target} and ${change.branch} changed ${shown}${merged.paths.length > 5 ? ` and ${merged.paths.length - 5} more` : ""}`,
        paths: merged.paths,
      });
    }
    const commit = mergeCommit(ctx, repo, org, change, beneath, tip, merged.tree);
    newTip = hashObject("commit", commit);
    const objects: RawObject[] = [];
    for (const obj of merged.objects) if (!(await snapshot.objects.has(hashObject(obj.type, obj.data)))) objects.push(obj);
    objects.push({ type: "commit", data: commit });
    made = objects;
    // The same object checks as a push (git's receive.fsckObjects, issue 11): the merged trees are
    // new objects, so a bad name or mode that slipped into either side is refused here too.
    try {
      await fsckObjects(objects, snapshot.objects);
    } catch (e) {
      if (!(e instanceof FsckError)) throw e;
      return eject({ kind: "conflict", message: `the merged result fails git's object checks: ${e.message}`, paths: [] });
    }
    const built = buildPack(objects);
    const idx = writePackIndex(built.entries, built.checksum);
    const base = join(ctx.tmpDir, `land-${newId()}`);
    writeFileSync(`${base}.pack`, built.pack);
    writeFileSync(`${base}.idx`, idx);
    cleanup = [`${base}.pack`, `${base}.idx`];
    pack = {
      name: built.checksum,
      packPath: `${base}.pack`,
      idxPath: `${base}.idx`,
      objectCount: objects.length,
      size: built.pack.byteLength,
      idxSize: idx.byteLength,
    };
  }

  const closing: (() => Promise<void>)[] = [];
  try {
    if (source && newTip !== tip) {
      // Why a pack of its own: the fork's packs hold whatever else the fork has (another branch
      // of a private fork); sharing them would make all of it readable here. The landing brings
      // exactly what the new tip reaches and this repository's refs do not, copied as stored.
      const extra: Pack[] = [];
      if (pack) {
        const merge = await openFileSource(pack.packPath);
        closing.push(() => merge.close());
        extra.push(new Pack(`land/${pack.name}`, PackIndex.parse(readFileSync(pack.idxPath)), merge));
      }
      const closure = await closurePack(
        ctx,
        { target: own.objects.packs, source: sourcePacks, extra },
        [newTip],
        own.refs.map((r) => r.oid),
      );
      if (closure) {
        closing.push(closure.cleanup);
        pack = closure;
      }
    }

    if (newTip === tip) {
      // Nothing moves: record the landing alone, guarded the same way.
      const ok = await ctx.db.transaction(async (tx) => {
        if ((await store.changeByNumber(tx, repoId, change.number))?.state !== "queued") return false;
        const current = await store.repoWithOrg(tx, repoId);
        if (!current) return false;
        await markLanded(ctx, tx, org, change, beneath, newTip);
        return true;
      });
      return ok ? "landed" : "retry";
    }
    // LFS locks of anyone but whoever queued the change refuse the landing as they would refuse its push.
    const reader = made.length ? withObjects(snapshot.objects, made) : snapshot.objects;
    const locked = await lockRefusals(ctx, repo, own.refs, reader, [{ ref, oldOid: tip, newOid: newTip }], change.queuedByUserId);
    let results: Awaited<ReturnType<typeof publish>>;
    try {
      results = await publish(ctx, org, repo, [{ ref, oldOid: tip, newOid: newTip, fastForward: true }], pack, {
        atomic: true,
        event: { via: "lander", commit: newTip, branch: target, change: change.number },
        actorUserId: change.queuedByUserId,
        policy: withRefusals(refPolicy(repo, "lander"), locked),
        also: async (tx) => {
          // The rows must still say what was planned: queued with the same head, the stack unchanged.
          const cur = await store.changeByNumber(tx, repoId, change.number);
          if (cur?.state !== "queued" || cur.head !== change.head || cur.queuedAt !== change.queuedAt) throw new QueueChanged();
          for (const b of beneath) {
            const now_ = await store.changeByNumber(tx, repoId, b.number);
            if (!now_ || now_.state === "closed" || now_.state === "landed" || now_.head !== b.head) throw new QueueChanged();
          }
          await markLanded(ctx, tx, org, change, beneath, newTip);
        },
      });
    } catch (e) {
      if (e instanceof QueueChanged) return "retry";
      throw e;
    }
    const outcome = results.get(ref)!;
    switch (outcome.kind) {
      case "applied":
        return "landed";
      case "policy":
        return eject({ kind: "forbidden", message: outcome.message });
      case "repo-deleted":
        return "idle";
      default:
        // Another writer moved the target between our read and the CAS: plan again on the new tip.
        return "retry";
    }
  } finally {
    for (const close of closing) await close();
    await Promise.all(cleanup.map((p) => rm(p, { force: true })));
  }
}

/** Marks the top landed and the changes beneath it landed by inclusion; emits change.landed for each, bottom first. */
async function markLanded(ctx: Ctx, tx: Parameters<typeof store.updateChange>[0], org: Org, top: ChangeRow, beneath: ChangeRow[], commit: Oid): Promise<void> {
  const t = now();
  for (const b of beneath) {
    await store.updateChange(tx, b.id, {
      state: "landed",
      landedCommit: commit,
      includedIn: top.number,
      queuedAt: null,
      waiting: null,
      verdict: null,
      updatedAt: t,
    });
    await ctx.events.record(tx, {
      repoId: top.repoId,
      orgId: org.id,
      kind: "change.landed",
      payload: { change: b.number, commit, branch: top.target, included_in: top.number },
      actorUserId: top.queuedByUserId,
    });
  }
  await store.updateChange(tx, top.id, { state: "landed", landedCommit: commit, queuedAt: null, waiting: null, verdict: null, updatedAt: t });
  await ctx.events.record(tx, {
    repoId: top.repoId,
    orgId: org.id,
    kind: "change.landed",
    payload: { change: top.number, commit, branch: top.target, patchset: top.patchset },
    actorUserId: top.queuedByUserId,
  });
  for (const c of [...beneath, top])
    await ctx.events.emit(tx, {
      kind: "thread.activity",
      repoId: top.repoId,
      orgId: org.id,
      subject: { kind: "change", id: c.id, number: c.number, title: c.title },
      activity: "landed",
      actorUserId: top.queuedByUserId,
      participants: [],
      summary: { commit, branch: top.target, ...(c === top ? {} : { included_in: top.number }) },
    });
}

/** The merge commit of a landing: first parent the target's tip, second the change's head. */
function mergeCommit(ctx: Ctx, repo: Repo, org: Org, change: ChangeRow, beneath: ChangeRow[], tip: Oid, tree: Oid): Uint8Array {
  const host = new URL(ctx.baseUrl).hostname;
  const when = { timestamp: Math.floor(now() / 1000), timezone: "+0000" };
  const svc: Signature = { name: "svc lander", email: `lander@${host}`, ...when };
  const stack = beneath.length ? `\nLands the stack ${[...beneath, change].map((c) => `#${c.number}`).join(", ")}.\n` : "";
  const message = `Land change #${change.number}: ${change.title}\n\nMerges ${change.branch} (patchset ${change.patchset}) into ${change.target}.\n${stack}\nChange: ${ctx.baseUrl}/${org.name}/${repo.name}/changes/${change.number}\n`;
  return serializeCommit({ tree, parents: [tip, change.head!], author: svc, committer: svc, message, extraHeaders: [] });
}

/** The safety net: every few seconds, a `change.land` for each target with queued changes (role, billing or protection changes, restarts). */
export const CHANGE_LAND_SCAN = jobKind<unknown>("change.land-scan", { every: { ms: 5000, scope: "node" } });

/** The `change.land` handler: lands or ejects queued changes of one target until it is empty or waiting. */
export async function landQueue(ctx: Ctx, p: LandPayload): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    const step = await landNext(ctx, p.repoId, p.target);
    // Other writers kept moving the target: try again shortly, without counting a failure.
    if (step === "retry") throw new Later(1000);
    if (step === "waiting" || step === "idle") return;
  }
  throw new Later(0);
}

/** The `change.land-scan` pass: one `change.land` per target with queued changes (folded into a pending one). */
export async function scanQueues(ctx: Ctx): Promise<void> {
  const targets = await store.queuedTargets(ctx.db.read);
  if (targets.length === 0) return;
  await ctx.db.transaction(async (tx) => {
    for (const t of targets) await ctx.work.enqueue(tx, CHANGE_LAND, t);
  });
}

/** Enqueues `change.land` for the targets of queued changes whose head is `commit` (a check result arrived). */
export async function checksReported(ctx: Ctx, tx: Tx, e: { repoId: string; commit: string }): Promise<void> {
  for (const target of await store.queuedTargetsAt(tx, e.repoId, e.commit)) await ctx.work.enqueue(tx, CHANGE_LAND, { repoId: e.repoId, target });
}
