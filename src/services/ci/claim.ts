// The claim (SPEC §4.1 claim rules 1–4, §8): a true long poll. A machine's request waits up to
// SVC_RUNNER_CLAIM_WAIT_MS; the moment a job it may take is queued in this process, a waiting
// machine is woken and claims it. Every 500 ms one cheap query of the queue (per org: how many
// queued, newest) wakes the waiters whose org's queue changed since they last looked, which
// catches jobs queued by another process and any wake-up this process missed.
//
// Across nodes (issue 27): queueing and routing changes are also announced on the `ci.queue`
// signal (services/events/signals.ts, after COMMIT). A hub hearing "queued" looks at the queue at
// once instead of at the next tick; "routing" wakes every waiter of the key, as wakeAll does here.
// The signal is a hint only: the 500 ms tick stays the bound when a notification is lost.
//
// Why the claim is safe: it is one write transaction that re-reads the machine, its group and
// the org's policy, finds the oldest routable job, and moves it from queued to running with a
// compare-and-set on the job row. Two machines can never both move one job, and a machine with a
// running job gets 409 `busy` (one running job per machine, SPEC §8).
import { Conflict, Unauthorized } from "../../errors.ts";
import type { Queryable, Tx } from "../../db/database.ts";
import type { RunnerRow } from "../../db/schema/index.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret } from "../../util/secrets.ts";
import { callerFacts, decide, enforce } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { ANY_KEY, type Signals } from "../events/signals.ts";
import type { Gauge, Registry } from "../telemetry/metrics.ts";
import * as store from "./store.ts";
import * as runs from "./store-runs.ts";
import { checkoutRepoOfJob } from "./store-checkout.ts";
import type { Claim } from "./schemas.ts";

/** SPEC §4.1 claim rule 1: the server's retry period. */
export const CLAIM_RETRY_MS = 500;
/** Waiters woken per newly queued job (the rest are reached by the 500 ms check if those two cannot take it). */
const WAKE_PER_JOB = 2;
/** Claims held open right now, waiting for a job (GET /metrics). */
const HOSTED_KEY = "*hosted";
/**
 * How long a machine's "nothing for me" is trusted while its key's queue is unchanged: the bound
 * for a routing change no announcement reached (another node's, when a notification is lost).
 */
const LOOK_TTL_MS = 5 * 60_000;
/** How often waiting claims' machines are confirmed live on a shared database (a removal answers 401 within about this). */
const LIVENESS_CHECK_MS = 1_000;
/** Machines per liveness query. */
const LIVENESS_BATCH = 1_000;
/** Machines' last looks remembered at most (a map cleared when full). */
const MAX_LOOKS = 100_000;
/** `ci.queue` notification keys: `q:<hub key>` jobs were queued, `r:<hub key>` routing changed. */
const QUEUED = "q:";
const ROUTING = "r:";

/** Announces jobs queued for hub `key` to every node's hub (this one's too); inside `tx`, after COMMIT. */
export function announceQueued(ctx: Ctx, key: string, tx?: Tx): void {
  ctx.signals.notify("ci.queue", QUEUED + key, tx);
}

/** Announces that routing changed for hub `key` (policy, groups, a removed machine): every waiter on every node looks again; inside `tx`, after COMMIT. */
export function announceRouting(ctx: Ctx, key: string, tx?: Tx): void {
  ctx.signals.notify("ci.queue", ROUTING + key, tx);
}

/**
 * Subscriber of `repo.visibility_changed`: a group without allow_public may now take (or no
 * longer take) the repository's queued jobs, so the org's and the instance machines look again
 * instead of trusting their last empty look.
 */
export async function visibilityChanged(ctx: Ctx, tx: Tx, { orgId }: { orgId: string }): Promise<void> {
  announceRouting(ctx, hubKey(false, orgId), tx);
  announceRouting(ctx, hubKey(true, null), tx);
}

/**
 * What a waiting claim knows of its machine's liveness on a shared database (several nodes): the
 * fact its credential was checked against is valid as of fact epoch `epoch` (getWithin may have
 * trusted it for up to a second), so before the claim may answer anything but 401 the machine is
 * confirmed live by an epoch read that started after the claim arrived: the hub's liveness check
 * does that for every waiting claim at once, `confirmLive` for one that ends before it ran.
 */
export interface Liveness {
  runnerId: string;
  epoch: number;
  arrivedAt: number;
  /** When an epoch read that found it live started (0: not yet). */
  confirmedAt: number;
  removed: boolean;
}

interface Waiter {
  key: string;
  live?: Liveness;
  labels: Set<string>;
  /** The queue signature of `key` when the waiter last looked. */
  seen: string;
  wake: () => void;
}

/** The in-process registry of waiting claims, keyed by org id (instance machines share one key). */
export class ClaimHub {
  private waiters = new Map<string, Set<Waiter>>();
  private signatures = new Map<string, string>();
  /** Moves each time jobs are queued or routing changes for a key (closes the look-then-wait race). */
  private generations = new Map<string, number>();
  /** Keys whose last claim transaction found a job: the next claim goes straight to its transaction. */
  private busyKeys = new Set<string>();
  /** Machines whose last look found nothing: the signature and generation of their key then. */
  private looks = new Map<string, { sig: string; gen: number; at: number }>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private ticking = false;
  /** When the last liveness check of waiting claims started. */
  private livenessAt = 0;
  /** A look was asked for while one ran: run another when it ends. */
  private again = false;
  private count = 0;
  stopped = false;

  /** Claims waiting now (svc_runner_claims_waiting). */
  private readonly claimsWaiting: Gauge;

  /** `ctxOf`: the context this hub belongs to (built after the hub, src/runtime.ts); `metrics`: its registry. */
  constructor(
    private readonly ctxOf: () => Ctx,
    metrics: Registry,
    /** Where `ci.queue` announcements arrive (all nodes'); none in tests that build a bare hub. */
    signals?: Signals,
  ) {
    this.claimsWaiting = metrics.gauge("svc_runner_claims_waiting", "Runner claim long-polls waiting for a job");
    this.claimsWaiting.inc(undefined, 0);
    signals?.subscribe("ci.queue", (k) => this.announced(k));
  }

  /** A `ci.queue` notification (announceQueued / announceRouting), from this node or another. */
  private announced(k: string): void {
    // A synthetic "look again" (signals reconnected): every waiter looks, as after a routing change.
    if (k === ANY_KEY) for (const key of [...this.waiters.keys()]) this.wakeAll(key);
    if (k.startsWith(ROUTING)) this.wakeAll(k.slice(ROUTING.length));
    else if (k.startsWith(QUEUED)) this.queueChanged(k.slice(QUEUED.length));
  }

  /**
   * Jobs were queued for `key`, maybe on another node: arriving claims look again (a new
   * generation) and, when machines wait on `key`, the queue is looked at now rather than at the
   * next tick. One query per announcement at most, and none when nobody waits.
   */
  queueChanged(key: string): void {
    this.bump(key);
    if (!this.waiters.has(key) || this.stopped) return;
    if (this.ticking) this.again = true;
    else void this.tick();
  }

  /** The last known queue signature of `key`. */
  signature(key: string): string {
    return this.signatures.get(key) ?? "";
  }

  /** The in-process change counter of `key`: read it before looking at the queue, pass it to wait. */
  generation(key: string): number {
    return this.generations.get(key) ?? 0;
  }

  /** Whether the last claim transaction for `key` found a job (so the queue is probably not empty). */
  busy(key: string): boolean {
    return this.busyKeys.has(key);
  }

  /**
   * Whether machine `runnerId`'s last look found nothing and nothing changed for `key` since: the
   * queue signature the tick last saw and the key's generation (local queueing, announcements,
   * routing changes) are what they were before that look, and the look is younger than
   * LOOK_TTL_MS. Then its claim can wait without a query; a job queued meanwhile on another node
   * changes the signature at the next tick, which wakes it.
   */
  nothingNew(runnerId: string, key: string): boolean {
    const l = this.looks.get(runnerId);
    return !!l && l.sig === this.signature(key) && l.gen === this.generation(key) && Date.now() - l.at < LOOK_TTL_MS;
  }

  /** Records that machine `runnerId` looked and found nothing, with the signature and generation read before the look. */
  noteNothing(runnerId: string, sig: string, gen: number): void {
    if (this.looks.size >= MAX_LOOKS && !this.looks.has(runnerId)) this.looks.clear();
    this.looks.set(runnerId, { sig, gen, at: Date.now() });
  }

  /** Forgets machine `runnerId`'s last look (it claimed a job: its next claim looks, and meets 409 `busy` while the job runs). */
  forgetLook(runnerId: string): void {
    this.looks.delete(runnerId);
  }

  /** Records whether a claim transaction for `key` found a job. */
  noteClaimed(key: string, found: boolean): void {
    if (found) this.busyKeys.add(key);
    else this.busyKeys.delete(key);
  }

  private bump(key: string): void {
    this.generations.set(key, this.generation(key) + 1);
  }

  /**
   * Waits until woken, `ms` pass or `signal` aborts. `seen` is the queue signature and `gen` the
   * generation read before the caller last looked: if jobs were queued since, it returns at once.
   */
  wait(key: string, labels: string[], seen: string, gen: number, ms: number, signal: AbortSignal | null, live?: Liveness): Promise<void> {
    if (this.stopped || this.generation(key) !== gen) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const done = () => {
        clearTimeout(timeout);
        signal?.removeEventListener("abort", done);
        if (this.waiters.get(key)?.delete(w)) {
          this.count--;
          this.claimsWaiting.dec();
        }
        if (this.waiters.get(key)?.size === 0) this.waiters.delete(key);
        if (this.count === 0) this.stopTicking();
        resolve();
      };
      const w: Waiter = { key, live, labels: new Set(labels), seen, wake: done };
      set.add(w);
      this.count++;
      this.claimsWaiting.inc();
      const timeout = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done);
      this.startTicking();
    });
  }

  /** Jobs with these runs-on label sets were queued for `key`: wake the longest-waiting machines that could take them. */
  jobsQueued(key: string, runsOn: string[][]): void {
    this.bump(key);
    const set = this.waiters.get(key);
    if (!set) return;
    const picked: Waiter[] = [];
    for (const labels of runsOn) {
      let n = 0;
      for (const w of set) {
        if (n >= WAKE_PER_JOB) break;
        if (picked.includes(w) || !labels.every((l) => w.labels.has(l))) continue;
        picked.push(w);
        n++;
      }
    }
    for (const w of picked) w.wake();
  }

  /** Routing changed for `key` (policy, groups): every waiter looks again. */
  wakeAll(key: string): void {
    this.bump(key);
    for (const w of [...(this.waiters.get(key) ?? [])]) w.wake();
  }

  /** Answers every waiting claim now (shutdown); later claims answer at once. */
  stop(): void {
    this.stopped = true;
    for (const key of [...this.waiters.keys()]) this.wakeAll(key);
    this.stopTicking();
  }

  private startTicking(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => void this.tick(), CLAIM_RETRY_MS);
    // Why unref: a waiting claim keeps its own timer; the check alone must not hold a CLI process open.
    this.timer.unref?.();
  }

  private stopTicking(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Every LIVENESS_CHECK_MS while claims wait (shared database only): one read of the fact epoch
   * and, for the waiting claims whose machine was last checked at another epoch, one query of
   * which of them are still live. A removed machine's claim is woken and answers 401.
   */
  private async checkLiveness(): Promise<void> {
    const at = Date.now();
    if (at - this.livenessAt < LIVENESS_CHECK_MS) return;
    this.livenessAt = at;
    const waiting: Liveness[] = [];
    for (const set of this.waiters.values()) for (const w of set) if (w.live && !w.live.removed) waiting.push(w.live);
    if (waiting.length === 0) return;
    const epoch = await this.ctxOf().facts.epochNow();
    if (epoch === null) return;
    await this.settle(
      waiting.filter((l) => l.epoch !== epoch),
      epoch,
      at,
    );
    for (const l of waiting) if (!l.removed && l.epoch === epoch) l.confirmedAt = at;
    for (const set of this.waiters.values()) for (const w of [...set]) if (w.live?.removed) w.wake();
  }

  /** Re-reads the machines of `stale` (checked at another epoch): live ones move to `epoch`, others are marked removed. */
  private async settle(stale: Liveness[], epoch: number, at: number): Promise<void> {
    const ids = [...new Set(stale.map((l) => l.runnerId))];
    const live = new Set<string>();
    for (let i = 0; i < ids.length; i += LIVENESS_BATCH)
      for (const id of await store.liveRunnerIds(this.ctxOf().db.read, ids.slice(i, i + LIVENESS_BATCH))) live.add(id);
    for (const l of stale) {
      if (live.has(l.runnerId)) {
        l.epoch = epoch;
        l.confirmedAt = at;
      } else l.removed = true;
    }
  }

  /**
   * Whether a claim about to answer without a job may: its machine was confirmed live by a read
   * that started after it arrived, or is now (one epoch read, and one query if the epoch moved).
   * Always true on SQLite, where the credential's own lookup was strict.
   */
  async confirmLive(live: Liveness): Promise<boolean> {
    if (live.removed) return false;
    if (live.confirmedAt >= live.arrivedAt) return true;
    const at = Date.now();
    const epoch = await this.ctxOf().facts.epochNow();
    if (epoch === null) return true;
    if (live.epoch === epoch) live.confirmedAt = at;
    else await this.settle([live], epoch, at);
    return !live.removed;
  }

  /** One look at the queue: wake the waiters whose org's queue changed since they last looked. */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const next = new Map<string, string>();
      for (const row of await runs.queueSignature(this.ctxOf().db.read)) {
        const key = row.hosted ? HOSTED_KEY : row.orgId;
        next.set(key, `${row.n}:${row.newest}`);
      }
      this.signatures = next;
      for (const [key, set] of [...this.waiters]) {
        const sig = next.get(key) ?? "";
        if (sig === "") continue;
        for (const w of [...set]) if (w.seen !== sig) w.wake();
      }
      await this.checkLiveness();
    } catch (error) {
      this.ctxOf().log.warn("claim queue check failed", { error: String(error) });
    } finally {
      this.ticking = false;
      if (this.again) {
        this.again = false;
        if (this.count > 0 && !this.stopped) void this.tick();
      }
    }
  }
}

/** The claim registry of this context (`ctx.ci.claims`). */
export function claimHub(ctx: Ctx): ClaimHub {
  return ctx.ci.claims;
}

/** The hub key of a job or machine: its org, or the instance key for hosted ones. */
export function hubKey(hosted: boolean, orgId: string | null): string {
  return hosted ? HOSTED_KEY : orgId!;
}

/** What routing needs about a machine now (SPEC §4.1 claim rule 2), or null when it may take nothing. */
async function routeOf(q: Queryable, runner: { hosted: boolean; orgId: string | null; groupId: string | null; labels: string[] }): Promise<runs.Route | null> {
  if (runner.hosted) return { hosted: true, orgId: null, labels: runner.labels, groupId: null, groupAll: true, allowPublic: true, policyAll: true };
  const r = await store.routeRow(q, runner.orgId!, runner.groupId);
  if (!r || r.selfHosted === "disabled") return null;
  return {
    hosted: false,
    orgId: runner.orgId,
    labels: runner.labels,
    groupId: r.groupId,
    groupAll: r.repoAccess === "all",
    allowPublic: r.allowPublic,
    policyAll: r.selfHosted === "all",
  };
}

const BUSY = () => Conflict("busy");

/**
 * One claim attempt: the claim, "none" when a look on the read connection found nothing routable,
 * or "taken" when the transaction found nothing (a competitor took it first). Unless the org's
 * queue is known to be non-empty (`busyQueue`), it first looks on the read connection, so idle
 * machines never take the write lock.
 */
async function tryClaim(ctx: Ctx, runner: RunnerRow, busyQueue: boolean): Promise<Claim | "none" | "taken"> {
  const hub = claimHub(ctx);
  const key = hubKey(runner.hosted, runner.orgId);
  if (!busyQueue) {
    if (await runs.hasRunningJob(ctx.db.read, runner.id)) throw BUSY();
    const route = await routeOf(ctx.db.read, runner);
    if (!route || !(await runs.claimableJob(ctx.db.read, route))) return "none";
  }
  const out = await ctx.db.transaction(async (tx) => {
    // Everything re-read inside the transaction: the machine, its group, the policy, the job.
    const fresh = await store.claimingRunner(tx, runner.id);
    if (!fresh) throw Unauthorized("invalid or revoked token");
    if (await runs.hasRunningJob(tx, fresh.id)) throw BUSY();
    const route = await routeOf(tx, fresh);
    if (!route) return null;
    const t = now();
    const tokenId = newId();
    const secret = newSecret();
    const job = await runs.claimNextJob(tx, route, { runnerId: fresh.id, runnerName: fresh.name, tokenId, t });
    if (!job) return null;
    // Why bound to the repository the agent fetches from: a change from a fork runs code its
    // author controls, so its token reads that fork alone (never the target, never a write).
    const from = await checkoutRepoOfJob(tx, job.id);
    const bound = from ? { orgId: from.orgId ?? job.orgId, repoId: from.repoId } : { orgId: job.orgId, repoId: job.repoId };
    await runs.insertJobToken(tx, { id: tokenId, ...bound, secretHash: hashSecret(secret), label: `job ${job.id}`, createdAt: t });
    await runs.startMinutes(tx, { jobId: job.id, orgId: job.orgId, repoId: job.repoId, hosted: job.hosted, startedAt: t });
    await runs.recordRunCheck(tx, { repoId: job.repoId, runId: job.runId, key: job.key, state: "running", jobId: job.id, updatedAt: t });
    await runs.markRunRunning(tx, job.runId);
    return { job_id: job.id, token: `svc_${tokenId}_${secret}`, runner_url: ctx.baseUrl };
  });
  hub.noteClaimed(key, out !== null);
  return out ?? "taken";
}

/**
 * POST /v1/runners/claim: a job for the calling machine, or null (204) after the wait. 409 `busy`
 * when the machine already holds a running job; 401 once the machine is removed.
 */
export async function claimJob(ctx: Ctx, actor: Principal, signal: AbortSignal | null = null): Promise<Claim | null> {
  enforce(decide({ caller: callerFacts(actor), orgRole: null }, { kind: "runner:claim" }));
  const runner = (actor as Extract<Principal, { kind: "runner" }>).runner;
  const hub = claimHub(ctx);
  const key = hubKey(runner.hosted, runner.orgId);
  // The wait is real time (not the service clock): it bounds an open request.
  const deadline = Date.now() + ctx.config.runnerClaimWaitMs;
  const live: Liveness = { runnerId: runner.id, epoch: ctx.facts.epochSeen(), arrivedAt: Date.now(), confirmedAt: 0, removed: false };
  // Its credential fails at its next call (SPEC §3.2): an answer without a job waits for the
  // machine to be confirmed live after this call arrived (several nodes: see Liveness).
  const answerNone = async (): Promise<null> => {
    if (!signal?.aborted && !(await hub.confirmLive(live))) throw Unauthorized("invalid or revoked token");
    return null;
  };
  for (;;) {
    const seen = hub.signature(key);
    const gen = hub.generation(key);
    // An idle machine costs no query (issue 27): when its last look found nothing and nothing was
    // queued or re-routed for its key since, it goes straight to the wait.
    if (!hub.nothingNew(runner.id, key)) {
      for (let attempt = 0; attempt < 3; attempt++) {
        // The first attempt goes straight to the transaction while this org's queue is known to be busy.
        const got = await tryClaim(ctx, runner, attempt === 0 && (seen !== "" || hub.busy(key)));
        if (typeof got === "object") {
          hub.forgetLook(runner.id);
          return got;
        }
        // A competitor took the job we saw: look again at once, a few times, before waiting.
        if (got === "none" || !(await quickLook(ctx, runner))) break;
      }
      hub.noteNothing(runner.id, seen, gen);
    }
    const left = deadline - Date.now();
    if (left <= 0 || hub.stopped || signal?.aborted) return await answerNone();
    await hub.wait(key, runner.labels, seen, gen, left, signal, live);
    if (live.removed || hub.stopped || signal?.aborted) return await answerNone();
  }
}

/** Whether anything routable to `runner` is queued right now. */
async function quickLook(ctx: Ctx, runner: RunnerRow): Promise<boolean> {
  const route = await routeOf(ctx.db.read, runner);
  return !!route && !!(await runs.claimableJob(ctx.db.read, route));
}
