// Syncing a mirror from its origin (SPEC §6.2): list the origin's branches and tags, fetch what
// the mirror lacks (have negotiation against the mirror's own refs, a thin pack completed from
// its objects), check connectivity, then publish every ref move — new, moved (forced or not) and
// deleted refs — with the pack in one transaction (services/git/publish.ts). A sync that stops
// anywhere before that commit (an error, a crash, SIGKILL) leaves the mirror exactly as it was;
// the pack files it uploaded are invisible orphans for GC. The push event says `via: "mirror"`.
//
// Only refs/heads/* and refs/tags/* are mirrored; the mirror's HEAD follows the origin's.
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { FetchError, openRemote, type FetchStats, type RemoteAuth } from "../../git/fetch-client.ts";
import { HaveWalker } from "../../git/fetch-negotiator.ts";
import { type IndexedPack, indexPack } from "../../git/pack-indexer.ts";
import { checkConnectivity, linksClosed } from "../../git/connectivity.ts";
import { FsckSession } from "../../git/fsck.ts";
import { indexOnThreads } from "../git/serve.ts";
import { openIndexedPack, overlayReader } from "../../git/pack-overlay.ts";
import { checkRefFormat } from "../../git/ref-name.ts";
import { CommitCache } from "../../git/revision.ts";
import { GitError, ZERO_OID, type Oid } from "../../git/types.ts";
import { Unprocessable } from "../../errors.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { writeBlockedReason } from "../billing/write-blocked.ts";
import { now, type Ctx } from "../context.ts";
import { openSnapshot } from "../git/snapshot.ts";
import { publish, type RefUpdate } from "../git/publish.ts";
import { EgressError } from "../../util/egress.ts";
import { recordMetric } from "../metrics/record.ts";
import type { Attempt } from "../jobs/engine.ts";
import { appOrigin } from "./app-auth.ts";
import { requestSync, type SyncJob } from "./queue.ts";
import type { SyncAccepted } from "./schemas.ts";
import * as store from "./store.ts";
import { originTransport } from "./transport.ts";

/** A sync stops after this long. */
const SYNC_TIMEOUT_MS = 60 * 60 * 1000;
/** At most this many unchanged refs are offered as known-common haves (branches first). */
const KNOWN_HAVES = 256;
/** The largest pack a sync accepts. */
const MAX_PACK_BYTES = 4 * 1024 ** 3;

/** What a sync did, for the Repo's sync fields, the metrics and the tests. */
export type SyncOutcome =
  | { kind: "synced"; moved: number; objects: number; packBytes: number; commit: Oid | null; servableAt: number; phasesMs: Record<string, number> }
  | { kind: "failed"; error: string };

/** POST …/sync: queues a sync of a mirror (202). Needs write access, like a push to a native repository. */
export async function syncRequested(ctx: Ctx, t: RepoTarget): Promise<SyncAccepted> {
  need(t, "repo:sync");
  const { repo } = t;
  if (repo.kind !== "mirror") throw Unprocessable(`${t.named.org}/${repo.name} is not a mirror`);
  const how = await ctx.db.transaction((tx) => requestSync(ctx, tx, repo.id, null));
  return { queued: how === "queued" };
}

/**
 * The `mirror.sync` handler: one sync. A mirror's syncs run one at a time (MIRROR_SYNC's key); a
 * stop cuts it short (`at.signal`) and it is queued again for the next start.
 */
export async function runMirrorSync(ctx: Ctx, job: SyncJob, at: Attempt): Promise<void> {
  await syncJob(ctx, job, at.signal);
}

async function syncJob(ctx: Ctx, job: SyncJob, stop: AbortSignal): Promise<void> {
  const taken = await ctx.db.transaction((tx) => store.takeRequest(tx, job.repoId, job.request));
  const found = await store.repoWithOrg(ctx.db.read, job.repoId);
  if (!found || found.repo.kind !== "mirror") return;
  const started = performance.now();
  const outcome = await syncMirror(ctx, found.org, found.repo, stop);
  const at = now();
  if (outcome.kind === "failed" && stop.aborted) {
    // Cut short by a shutdown: nothing was published; the sync runs again at the next start.
    await ctx.db.transaction((tx) => requestSync(ctx, tx, job.repoId, taken?.receivedAt ?? null));
    return;
  }
  if (outcome.kind === "failed") {
    await ctx.db.transaction((tx) => store.setSyncFields(tx, job.repoId, { at, error: outcome.error }));
    ctx.log.warn("mirror sync failed", { repo: `${found.org.name}/${found.repo.name}`, error: outcome.error });
  } else {
    ctx.log.info("mirror synced", {
      repo: `${found.org.name}/${found.repo.name}`,
      moved: outcome.moved,
      objects: outcome.objects,
      pack_bytes: outcome.packBytes,
      phases_ms: outcome.phasesMs,
    });
  }
  await recordMetric(ctx, {
    orgId: found.org.id,
    repoId: found.repo.id,
    kind: "mirror.sync",
    bytes: outcome.kind === "synced" ? outcome.packBytes : 0,
    durationMs: performance.now() - started,
  });
  const receivedAt = taken?.receivedAt ?? null;
  if (outcome.kind === "synced" && receivedAt !== null) {
    await recordMetric(ctx, {
      orgId: found.org.id,
      repoId: found.repo.id,
      kind: "mirror.freshness",
      bytes: 0,
      durationMs: Math.max(0, outcome.servableAt - receivedAt),
    });
  }
}

/** Where to fetch a mirror from, with which credentials. */
async function originOf(ctx: Ctx, repo: Repo): Promise<{ url: string; auth: RemoteAuth | null }> {
  if (repo.originProvider === "app") return appOrigin(ctx, repo.originUrl!, repo.originInstallation!);
  const m = await store.mirrorOf(ctx.db.read, repo.id);
  const auth: RemoteAuth | null =
    m?.username !== null && m?.username !== undefined ? { kind: "basic", username: m.username, password: m.password ?? "" } : null;
  return { url: repo.originUrl!, auth };
}

/** The message a failed sync leaves in sync_error. */
function failureMessage(ctx: Ctx, repo: Repo, e: unknown): string {
  if (e instanceof FetchError || e instanceof EgressError) return e.message;
  if (e instanceof GitError) return `origin sent unusable data: ${e.message}`;
  if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) return `sync did not finish within ${SYNC_TIMEOUT_MS / 60_000} minutes`;
  ctx.log.error("mirror sync crashed", { repo_id: repo.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  return "internal error while syncing";
}

/** Brings one mirror up to its origin; never throws (the outcome says what happened). */
export async function syncMirror(ctx: Ctx, org: Org, repo: Repo, stop: AbortSignal = new AbortController().signal): Promise<SyncOutcome> {
  const blocked = await writeBlockedReason(ctx, org, repo);
  if (blocked) return { kind: "failed", error: blocked };
  const signal = AbortSignal.any([AbortSignal.timeout(SYNC_TIMEOUT_MS), stop]);
  let pack: IndexedPack | null = null;
  let opened: Awaited<ReturnType<typeof openIndexedPack>> | null = null;
  // Its own scratch directory: two mirrors of one origin receive the same pack, named by its checksum.
  let scratch: string | null = null;
  const phasesMs: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    const t = performance.now();
    phasesMs[name] = Math.round(t - mark);
    mark = t;
  };
  try {
    const origin = await originOf(ctx, repo);
    const remote = await openRemote(origin.url, { transport: originTransport({ allowPrivate: ctx.config.mirrorAllowPrivate, signal }), auth: origin.auth });
    phase("refs");
    const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
    const local = new Map(snapshot.refs.map((r) => [r.name, r.oid]));
    const theirs = new Map(remote.refs.map((r) => [r.name, r.oid]));
    const wants = [...new Set(remote.refs.map((r) => r.oid))].filter((oid) => !snapshot.objects.locate(oid));
    const stats: FetchStats = { rounds: 0, havesSent: 0, acks: 0, packBytes: 0 };
    if (wants.length > 0) {
      // A local ref the origin advertises at the same value is known common: offered as a have
      // at once, never walked. The walk starts only at refs the origin moved or deleted.
      const known: Oid[] = [];
      const walker = snapshot.refs.length > 0 ? new HaveWalker(new CommitCache(snapshot.objects)) : null;
      for (const r of [...snapshot.refs].sort((x, y) => Number(y.name.startsWith("refs/heads/")) - Number(x.name.startsWith("refs/heads/")))) {
        if (theirs.get(r.name) === r.oid) known.push(r.oid);
        else await walker!.addTip(r.oid);
      }
      const stream = await remote.fetchPack(wants, walker, stats, known.slice(0, KNOWN_HAVES));
      scratch = await mkdtemp(join(ctx.tmpDir, "sync-"));
      // Why: an origin is as untrusted as a pusher, so the fetched pack passes the same fsck as
      // receive-pack (receive.fsckObjects): every object as it is indexed, then the .gitmodules
      // and .gitattributes blobs its trees name (docs/architecture.md "Object checks").
      const fsck = new FsckSession();
      pack = await indexPack(stream, {
        tmpDir: scratch,
        thinBaseReader: snapshot.objects,
        maxBytes: MAX_PACK_BYTES,
        maxObjectBytes: ctx.config.gitMaxObject,
        run: indexOnThreads(ctx),
        fsck,
      });
      if (fsck.warnings.total > 0)
        ctx.log.warn("mirror sync accepted objects git's fsck warns about", { repo: repo.id, warnings: Object.fromEntries(fsck.warnings.counts) });
      phase("fetch");
      opened = await openIndexedPack(pack);
      const objects = overlayReader([opened.pack], snapshot.objects);
      await fsck.finish(objects);
      const absent = wants.find((oid) => opened!.pack.idx.find(oid) < 0);
      if (absent) throw new GitError(`origin did not send ${absent}`, "missing");
      // Connectivity as receive-pack checks it: every link of the pack resolves in the pack or the
      // stored objects (whose closure is complete); when one does not, the walk from the new tips.
      if (!linksClosed(pack.links, opened.pack.idx, snapshot.objects, wants)) await checkConnectivity(objects, wants, { existing: snapshot.objects });
      phase("connectivity");
    }
    const updates: RefUpdate[] = [];
    for (const [name, oid] of theirs) {
      const mine = local.get(name);
      if (mine !== oid) updates.push({ ref: name, oldOid: mine ?? ZERO_OID, newOid: oid });
    }
    // Branches and tags deleted at the origin are deleted here too.
    for (const [name, oid] of local) if (!theirs.has(name)) updates.push({ ref: name, oldOid: oid, newOid: ZERO_OID });
    const head = remote.head?.startsWith("refs/heads/") && checkRefFormat(remote.head) ? remote.head.slice("refs/heads/".length) : null;
    const commit = (remote.head ? theirs.get(remote.head) : undefined) ?? null;
    const fields = { commit, error: null, ...(head && head !== repo.defaultBranch ? { defaultBranch: head } : {}) };
    if (updates.length === 0) {
      const at = now();
      await ctx.db.transaction((tx) => store.setSyncFields(tx, repo.id, { at, ...fields }));
      return { kind: "synced", moved: 0, objects: 0, packBytes: stats.packBytes, commit, servableAt: at, phasesMs };
    }
    // The first sync into an empty mirror records the tips its pack is exactly the closure of (as a first push does).
    const reachTips = (pack && snapshot.objects.packs.length === 0 && pack.reachabilityRecord(wants)) || undefined;
    const results = await publish(
      ctx,
      org,
      repo,
      updates,
      pack && {
        name: pack.name,
        packPath: pack.packPath,
        idxPath: pack.idxPath,
        objectCount: pack.objectCount,
        size: pack.size,
        idxSize: pack.idxSize,
        reachTips,
      },
      {
        atomic: true,
        event: { via: "mirror" },
        actorUserId: null,
        // The sync fields commit with the ref moves: a reader never sees refs and fields disagree.
        also: (tx) => store.setSyncFields(tx, repo.id, { at: now(), ...fields }),
      },
    );
    const servableAt = now();
    phase("publish");
    const refused = [...results.entries()].find(([, r]) => r.kind !== "applied" && r.kind !== "atomic-failed");
    if (refused) {
      const [ref, r] = refused;
      if (r.kind === "repo-deleted") return { kind: "failed", error: "repository was deleted" };
      return { kind: "failed", error: `the mirror's ${ref} changed during the sync (${r.kind}); the next sync retries` };
    }
    return { kind: "synced", moved: updates.length, objects: pack?.objectCount ?? 0, packBytes: stats.packBytes, commit, servableAt, phasesMs };
  } catch (e) {
    return { kind: "failed", error: failureMessage(ctx, repo, e) };
  } finally {
    await opened?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}
