// Where a fetch's pack is made: on the event loop when it is small, on a worker thread otherwise.
//
// Why: listing a history and writing its pack grows with the repository (seconds of CPU for a
// big clone), and on the event loop that stalls every other request. A worker thread
// (upload-thread.ts) does it with its own store and caches while the event loop only writes the
// bytes it emits to the client. A small incremental fetch costs less than handing it over (the
// thread's caches are colder, the pool may be busy with clones), so it is first tried here with
// a small work budget (MAIN_BUDGET_UNITS units of work and MAIN_BUDGET_MS, MAIN_OUTPUT_BYTES of
// response held back): if it finishes within it, the held response is sent; if not, nothing has been sent
// and the thread does it from the start. A clone (no common commit) goes to the thread at once
// unless the repository's packs are small (SMALL_REPO_BYTES). The cut-over and the figures that
// chose it: docs/architecture.md "Serving fetches" and bench/README.md.
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { createPackFile, packSink, type Packer, type PackJob } from "../../git/create-pack-file.ts";
import type { RepoSnapshot } from "../../git/repo-snapshot.ts";
import { GitError, type GitErrorCode } from "../../git/types.ts";
import { OverBudget, WorkBudget } from "../../git/work-budget.ts";
import { newId } from "../../util/ids.ts";
import { ThreadTaskError } from "../../util/thread-pool.ts";
import type { Ctx } from "../context.ts";
import type { PackRow } from "./store.ts";
import { refsToWire, SPOOL_STEP, type SpoolProgress, type ThreadStoreConfig, toWire, type UploadPackTaskInput } from "./upload-thread.ts";

/** Work a fetch may do on the event loop before it moves to a thread (units, see WorkBudget) ... */
export const MAIN_BUDGET_UNITS = 20_000;
/** ... and time it may take there (its awaits included: on object storage, a fetch waiting on reads goes to a thread sooner). */
export const MAIN_BUDGET_MS = 15;
/** Response bytes a fetch tried on the event loop may produce (held until it is known to fit). */
export const MAIN_OUTPUT_BYTES = 2 * 1024 * 1024;
/** Repositories whose packs are this small are cloned on the event loop too (within the same budget). */
export const SMALL_REPO_BYTES = 4 * 1024 * 1024;

const KEEPALIVE_MS = 5000;
const KEEPALIVE_PKT: Readonly<Uint8Array> = new Uint8Array([0x30, 0x30, 0x30, 0x35, 0x01]);

/** Which path served a pack, for tests and metrics. */
export type PackPath = "main" | "thread";

/** The packer upload-pack uses for `snapshot`: the event loop for small fetches, a thread otherwise. */
export function uploadPacker(ctx: Ctx, snapshot: RepoSnapshot, opts: { onPath?: (path: PackPath) => void; mainBudgetMs?: number } = {}): Packer {
  const { onPath } = opts;
  return async (job, write) => {
    const size = snapshot.objects.packs.reduce((sum, p) => sum + p.source.size, 0);
    const clone = job.request.haves.length === 0;
    if (!clone || size <= SMALL_REPO_BYTES) {
      const held = await tryOnEventLoop(snapshot, job, opts.mainBudgetMs ?? MAIN_BUDGET_MS);
      if (held) {
        onPath?.("main");
        for (const chunk of held.chunks) await write(chunk);
        return held.objects;
      }
    }
    onPath?.("thread");
    return onThread(ctx, snapshot, job, write);
  };
}

/** The response of `job` made here within the budget, or null when it is too big for the event loop. */
async function tryOnEventLoop(snapshot: RepoSnapshot, job: PackJob, ms: number): Promise<{ chunks: Uint8Array[]; objects: number } | null> {
  const budget = new WorkBudget(MAIN_BUDGET_UNITS, ms);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const hold = async (chunk: Uint8Array): Promise<void> => {
    bytes += chunk.length;
    if (bytes > MAIN_OUTPUT_BYTES) throw new OverBudget();
    chunks.push(chunk);
  };
  try {
    const objects = await createPackFile(snapshot, job.request, job.options, packSink(hold, job.options), { budget, keepalive: false });
    return { chunks, objects };
  } catch (e) {
    if (e instanceof OverBudget) return null;
    throw e;
  }
}

/** The pack rows of a snapshot (its packs are named `<storage repo id>/<pack name>`). */
export function packRows(snapshot: RepoSnapshot): PackRow[] {
  return snapshot.objects.packs.map((p) => {
    const slash = p.name.indexOf("/");
    return {
      storageRepoId: p.name.slice(0, slash),
      name: p.name.slice(slash + 1),
      size: p.source.size,
      reachTips: p.reachTips ? p.reachTips.join("\n") : null,
    };
  });
}

/**
 * Whether the thread reads a clone's packs from local copies: a whole-repository clone (no
 * haves, no filter) from object storage that is not one recorded pack (streamed as stored), of at
 * most SVC_GIT_MAX_PUSH bytes (the temp room a push needs anyway; all clones' copies together stay
 * within it too, see onThread). Why: such a clone walks the
 * commits and trees of every pack without a reachability record (after stepped pushes, most of
 * the repository), and its reads follow the walk block by block, a round trip each time the walk
 * moves on; the same bytes downloaded first in large ranged reads, several packs at once, cost a
 * few dozen requests, and the walk and the pack writer then read a local file (bench/README.md
 * "Object storage: clone after stepped pushes").
 */
export function copyForClone(ctx: Ctx, snapshot: RepoSnapshot, job: PackJob): boolean {
  if (ctx.store.kind === "fs" || job.request.haves.length > 0 || job.request.filter || (job.request.shallow?.length ?? 0) > 0) return false;
  if (job.request.depth || job.request.deepenSince || (job.request.deepenNot?.length ?? 0) > 0) return false;
  const packs = snapshot.objects.packs;
  if (packs.length === 1 && packs[0]!.reachTips) return false;
  return packs.reduce((sum, p) => sum + p.source.size, 0) <= ctx.config.gitMaxPush;
}

/** What a thread needs to reach the store, and its share of SVC_GIT_CACHE (half of it, split between the threads). */
export function threadStoreConfig(ctx: Ctx): ThreadStoreConfig {
  return { storage: ctx.config.storage, cacheBytes: Math.floor(ctx.config.gitCacheBytes / 2 / ctx.threads.size) };
}

// `ctx.uploads.spooledUnsent`: unsent spool bytes of all requests together, beyond which a thread
// waits for its own client (SVC_GIT_MAX_PUSH: the room in the temp dir a push needs anyway).
// Below it a thread never waits on a client; above it, slow clients hold threads rather than
// fill the disk.
async function onThread(ctx: Ctx, snapshot: RepoSnapshot, job: PackJob, write: (chunk: Uint8Array) => Promise<void>): Promise<number> {
  const path = join(ctx.tmpDir, `upload-${newId()}.spool`);
  const file = await open(path, "w+");
  let linked = true;
  const unlinkSpool = async (): Promise<void> => {
    if (!linked) return;
    linked = false;
    await rm(path, { force: true });
  };
  const input: UploadPackTaskInput = {
    store: threadStoreConfig(ctx),
    refs: refsToWire(snapshot.refs),
    head: snapshot.head,
    packs: packRows(snapshot),
    job: toWire(job),
    spool: path,
    copyPacks: false,
  };
  // Local copies of every clone in progress together stay within SVC_GIT_MAX_PUSH of temp room
  // (`ctx.uploads.copiedBytes`); past it a clone reads the store directly, as before.
  const copyBytes = snapshot.objects.packs.reduce((sum, p) => sum + p.source.size, 0);
  if (copyForClone(ctx, snapshot, job) && ctx.uploads.copiedBytes + copyBytes <= ctx.config.gitMaxPush) {
    input.copyPacks = true;
    ctx.uploads.copiedBytes += copyBytes;
  }
  // While the thread lists (it may not yield for seconds) the client hears keep-alives from here.
  let streaming = false;
  const keepalive = job.options.sideband > 0 ? setInterval(() => void (streaming ? null : write(KEEPALIVE_PKT).catch(() => {})), KEEPALIVE_MS) : null;
  let written = 0;
  let sent = 0;
  let finished = false;
  // Both sides wait for the other: the pump for bytes written, the thread (past the budget) for bytes sent.
  let waiters: (() => void)[] = [];
  const changed = (): Promise<void> => new Promise((resolve) => waiters.push(resolve));
  const notify = (): void => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  const abort = new AbortController();
  // The event loop's side: the file from `sent` to `written`, 1 MiB at a time, at the client's pace.
  const pump = (async () => {
    while (!(finished && sent >= written)) {
      if (sent >= written) {
        await changed();
        continue;
      }
      const n = Math.min(SPOOL_STEP, written - sent);
      const chunk = new Uint8Array(n);
      for (let got = 0; got < n; ) {
        const r = await file.read(chunk, got, n - got, sent + got);
        if (r.bytesRead === 0) throw new Error("upload spool ended early");
        got += r.bytesRead;
      }
      if (!streaming && keepalive) clearInterval(keepalive);
      streaming = true;
      await write(chunk);
      sent += n;
      ctx.uploads.spooledUnsent -= n;
      notify();
    }
  })();
  // A client that goes away (the write fails) ends the thread's work too.
  pump.catch(() => abort.abort());
  try {
    let result: { objects: number } | undefined;
    let failure: unknown;
    try {
      result = await ctx.threads.run("git.uploadPack", input, {
        signal: abort.signal,
        onEmit: async (value) => {
          // The thread has the file open: it needs no name any more (nothing is left behind by a crash).
          await unlinkSpool();
          const progress = value as SpoolProgress;
          ctx.uploads.spooledUnsent += progress.written - written;
          written = progress.written;
          notify();
          // Past the spool budget, this thread waits until its own client has nearly caught up.
          while (ctx.uploads.spooledUnsent > ctx.config.gitMaxPush && written - sent > SPOOL_STEP && !abort.signal.aborted) {
            await changed();
          }
        },
      });
    } catch (e) {
      failure = e;
    }
    finished = true;
    notify();
    // What the thread wrote before a refusal is whole packets: it goes out first, then the refusal.
    await pump;
    if (failure !== undefined) throw threadFailure(failure);
    return result!.objects;
  } finally {
    finished = true;
    notify();
    ctx.uploads.spooledUnsent -= written - sent;
    if (input.copyPacks) ctx.uploads.copiedBytes -= copyBytes;
    if (keepalive) clearInterval(keepalive);
    await file.close().catch(() => {});
    await unlinkSpool();
  }
}

/** A thread's failure as the engine reports it: a GitError for the engine's refusals and a full pool. */
function threadFailure(e: unknown): unknown {
  if (e instanceof ThreadTaskError) {
    // The engine's refusals (a missing object, a corrupt pack) reach the client as they would from here.
    if (e.kind === "failed" && e.data.name === "GitError") return new GitError(e.message, (e.data.code as GitErrorCode | undefined) ?? "invalid");
    if (e.kind === "busy") return new GitError("upload-pack: the server is busy; try again shortly");
  }
  return e;
}
