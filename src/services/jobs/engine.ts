// The durable-work engine (DESIGN.md "Background work"): `ctx.work`, one per context.
//
// A job is a `jobs` row written in the transaction of its cause (`enqueue`). One dispatcher loop
// per node (`start`, `svc serve` only) claims due rows of every defined kind with free
// concurrency in one transaction per wake, runs each handler under a lease that it renews every
// leaseMs/3 (a renewal that finds the lease gone aborts the attempt), and records the outcome
// fenced by the lease token: done, retried after the kind's backoff, given up, put off (`Later`)
// or given back uncounted (`Released`, shutdown). Rows with a `key` run one at a time per key, in
// `seq` order (a retrying head holds the rest back); `unique` folds an enqueue into the pending
// row with the same value. Wake-ups come from `ctx.signals` after COMMIT (topic `work`, the kind's
// name); idle, the loop makes one indexed read per second at most and no write transaction.
// Periodic kinds: `cluster` ones enqueue a row once per wall-clock slot across nodes
// (`job_schedules`), `node` ones run on a local timer with no row.
import type { Database, Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { now } from "../../util/clock.ts";
import type { Ctx, Logger } from "../context.ts";
import { ANY_KEY, type Signals } from "../events/signals.ts";
import { attemptsOf, backoffOf, type JobKind } from "./kind.ts";
import * as store from "./store.ts";
import type { JobRow } from "./store.ts";

/** One attempt as its handler sees it. */
export interface Attempt {
  readonly jobId: string;
  /** 1 for the first attempt. */
  readonly n: number;
  /** Whether a failure now gives the job up. */
  readonly final: boolean;
  /** Aborts on stop, when the lease was lost, or at the time limit (then its reason is a TimeoutError). */
  readonly signal: AbortSignal;
  /** The attempt's time limit (the kind's, or runDue's), when it has one. */
  readonly timeoutMs: number | undefined;
  /** The handler's closing write and the job's completion in one transaction, only while the lease is ours. */
  complete(fn: (tx: Tx) => Promise<void>): Promise<void>;
}

/** Runs one attempt; throws to fail it (retried by the kind's rule). */
export type Handler<P> = (ctx: Ctx, payload: P, at: Attempt) => Promise<void>;

/** Thrown by a handler: run again in `ms`, not a failure (the attempt is not counted). */
export class Later extends Error {
  constructor(readonly ms: number) {
    super("later");
  }
}

/** Thrown by a handler: give the row back uncounted (the server is stopping). */
export class Released extends Error {
  constructor() {
    super("released");
  }
}

/** Thrown by a handler: a failure whose record (`record(tx)`) commits with the job's new state. */
export class Failure extends Error {
  constructor(
    message: string,
    readonly record: (tx: Tx) => Promise<void>,
  ) {
    super(message);
  }
}

/** The lease was lost before the outcome could be recorded (another attempt owns the row now). */
export class LeaseLost extends Error {
  constructor() {
    super("the job's lease was lost");
  }
}

export interface Work {
  /** Registers the handler of `kind` (the composition root, `src/wiring.ts`). */
  define<P>(kind: JobKind<P>, run: Handler<P>): void;
  /** In the caller's transaction; wakes the kind (every node) after COMMIT. Answers the row's id (the folded one for `unique`). */
  enqueue<P>(tx: Tx, kind: JobKind<P>, payload: P, o?: { delayMs?: number; id?: string; seq?: number }): Promise<string>;
  /**
   * `enqueue` of many payloads of one kind, in multi-row INSERTs (a fan-out's mail jobs): the
   * same rows, unique folding and per-key order as enqueueing them one by one in this order.
   * Answers each payload's row id, in order (payloads folded together share one).
   */
  enqueueMany<P>(tx: Tx, kind: JobKind<P>, payloads: readonly P[], o?: { delayMs?: number }): Promise<string[]>;
  /** Starts the dispatcher and the periodic kinds (`svc serve` only). */
  start(): void;
  /** Stops claiming, aborts running attempts after `graceMs` (default at once), waits for them. */
  stop(o?: { graceMs?: number }): Promise<void>;
  /** Runs job `jobId` now (or joins its attempt in this process), waiting at most `waitMs` for the outcome. */
  runNow(jobId: string, waitMs: number): Promise<{ state: "done" | "failed" | "pending"; error?: string }>;
  /** One pass with no timers: claims every due row (of `kinds`) and runs it; answers how many ran. Tests and the CLI. */
  runDue(o?: { kinds?: readonly JobKind<any>[]; limit?: number; timeoutMs?: number }): Promise<number>;
  /** Deletes the pending rows of `key` in the caller's transaction (their subject is gone). */
  drop(tx: Tx, key: string): Promise<number>;
  /** Per kind: pending, due, leased and the oldest due time (/metrics). */
  stats(): Promise<{ kind: string; pending: number; due: number; leased: number; oldestDue: number | null }[]>;
  /** The defined kinds (diagnostics and tests). */
  kinds(): JobKind<any>[];
}

interface Defined {
  kind: JobKind<any>;
  run: Handler<any>;
}

/** The outcome of one attempt, as runNow reports it. */
interface Outcome {
  state: "done" | "failed" | "pending";
  error?: string;
}

/** How long the idle dispatcher waits at most between reads. */
const IDLE_POLL_MS = 1000;
/** While claims keep failing, at most one log line per this long. */
const CLAIM_FAILURE_LOG_MS = 60_000;

export class WorkEngine implements Work {
  private readonly defined = new Map<string, Defined>();
  /** Attempts running in this process, by job id. */
  private readonly running = new Map<
    string,
    {
      kind: string;
      outcome: Promise<Outcome>;
      abort: AbortController;
      start(go: { timeoutMs?: number } | null): void;
      /** Forgets the row now (running map, kind concurrency); idempotent. */
      release(): void;
    }
  >();
  private readonly inflight = new Map<string, number>();
  /** Claims failed in a row (the database down or busy), and when that was last logged. */
  private claimFailures = 0;
  private claimFailureLoggedAt = 0;
  private started = false;
  private stopping = false;
  private poked = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly nodeRuns = new Set<Promise<void>>();
  private unsubscribe: (() => void) | null = null;
  /** Aborted by stop: the signal of node-scoped periodic runs. */
  private stopSignal = new AbortController();
  private tokenSeq = 0;
  private readonly node = newId().slice(0, 8);

  constructor(
    private readonly db: Database,
    private readonly signals: Signals,
    private readonly ctxOf: () => Ctx,
    private readonly logOf: () => Logger,
  ) {}

  define<P>(kind: JobKind<P>, run: Handler<P>): void {
    this.defined.set(kind.name, { kind, run });
  }

  kinds(): JobKind<any>[] {
    return [...this.defined.values()].map((d) => d.kind);
  }

  async enqueue<P>(tx: Tx, kind: JobKind<P>, payload: P, o: { delayMs?: number; id?: string; seq?: number } = {}): Promise<string> {
    const t = now();
    const delayMs = o.delayMs ?? 0;
    const runAt = t + delayMs;
    const uniqueKey = kind.unique?.(payload) ?? null;
    if (uniqueKey !== null) {
      const pending = await store.pendingUnique(tx, kind.name, uniqueKey);
      if (pending) {
        if (pending.runAt > runAt) await store.runSooner(tx, pending.id, runAt);
        if (delayMs <= 0) this.signals.notify("work", kind.name, tx);
        return pending.id;
      }
    }
    const key = kind.key?.(payload) ?? null;
    const seq = key === null ? 0 : (o.seq ?? (await store.nextSeq(tx, key)));
    const id = o.id ?? newId();
    await store.insertJob(tx, { id, kind: kind.name, payload, runAt, createdAt: t, key, seq, uniqueKey });
    if (delayMs <= 0) this.signals.notify("work", kind.name, tx);
    return id;
  }

  async enqueueMany<P>(tx: Tx, kind: JobKind<P>, payloads: readonly P[], o: { delayMs?: number } = {}): Promise<string[]> {
    if (payloads.length === 0) return [];
    const t = now();
    const delayMs = o.delayMs ?? 0;
    const runAt = t + delayMs;
    // Ids in payload order: rows written in one millisecond list (created_at, id) in the order
    // they were enqueued, not in random id order.
    const ids = payloads.map(() => newId()).sort();
    const rows: Parameters<typeof store.insertJobs>[1][number][] = [];
    /** Per payload: its row's id, or its unique key (the id is known after the INSERT). */
    const out: ({ id: string } | { unique: string })[] = [];
    const seen = new Set<string>();
    const seqs = new Map<string, number>();
    for (const [i, payload] of payloads.entries()) {
      const uniqueKey = kind.unique?.(payload) ?? null;
      if (uniqueKey !== null) {
        out.push({ unique: uniqueKey });
        // A second payload with the key folds into the first one's row.
        if (seen.has(uniqueKey)) continue;
        seen.add(uniqueKey);
      } else out.push({ id: ids[i]! });
      const key = kind.key?.(payload) ?? null;
      let seq = 0;
      if (key !== null) {
        // Why a gap is harmless: a row that folds into a pending one leaves its seq unused; order is by `<` only.
        seq = seqs.get(key) ?? (await store.nextSeq(tx, key));
        seqs.set(key, seq + 1);
      }
      rows.push({ id: ids[i]!, kind: kind.name, payload, runAt, createdAt: t, key, seq, uniqueKey });
    }
    const held = await store.insertJobs(tx, rows);
    if (delayMs <= 0) this.signals.notify("work", kind.name, tx);
    return out.map((r) => ("id" in r ? r.id : held.get(r.unique)!));
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.stopSignal = new AbortController();
    this.unsubscribe = this.signals.subscribe("work", (name) => {
      if (name === ANY_KEY || this.defined.has(name)) this.poke();
    });
    for (const d of this.defined.values()) {
      if (d.kind.every?.scope === "cluster") this.scheduleCluster(d);
      else if (d.kind.every?.scope === "node") this.scheduleNode(d);
    }
    this.loop = this.dispatch().catch((error) => this.logOf().error("work dispatcher stopped", { error: String(error) }));
  }

  async stop(o: { graceMs?: number } = {}): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.wake?.();
    await this.loop;
    this.loop = null;
    const all = () => Promise.all([...this.running.values()].map((r) => r.outcome));
    if (o.graceMs && o.graceMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([all(), new Promise<void>((r) => (timer = setTimeout(r, o.graceMs)))]);
      clearTimeout(timer);
    }
    this.stopSignal.abort(new Error("server stopping"));
    for (const r of this.running.values()) r.abort.abort(new Error("server stopping"));
    await all();
    await Promise.all(this.nodeRuns);
    this.started = false;
  }

  async runNow(jobId: string, waitMs: number): Promise<Outcome> {
    let outcome = this.running.get(jobId)?.outcome;
    if (!outcome) {
      const claimed = await this.reserved(async (tx, reserve) => {
        const row = await store.jobById(tx, jobId);
        const d = row ? this.defined.get(row.kind) : undefined;
        if (!d) return [];
        const t = now();
        const got = await store.claimOne(tx, jobId, t, t + d.kind.leaseMs, this.token());
        return got ? reserve([got]) : [];
      });
      if (claimed.length) outcome = this.launch(claimed[0]!);
      // A dispatcher claim just before ours registered its attempt before committing: join it.
      outcome ??= this.running.get(jobId)?.outcome;
    }
    if (!outcome) return this.stateOf(jobId);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
    try {
      return (await Promise.race([outcome, timeout])) ?? { state: "pending" };
    } finally {
      clearTimeout(timer);
    }
  }

  async runDue(o: { kinds?: readonly JobKind<any>[]; limit?: number; timeoutMs?: number } = {}): Promise<number> {
    const names = (o.kinds ?? this.kinds()).map((k) => k.name).filter((n) => this.defined.has(n) && this.defined.get(n)!.kind.every?.scope !== "node");
    const claimed = await this.claim(names, o.limit ?? 1000, true);
    await Promise.all(claimed.map((row) => this.launch(row, o.timeoutMs)));
    return claimed.length;
  }

  drop(tx: Tx, key: string): Promise<number> {
    return store.dropKey(tx, key);
  }

  stats() {
    return store.queueStats(this.db.read, now());
  }

  // ── the dispatcher ──────────────────────────────────────────────────────────────────────────

  private poke(): void {
    this.poked = true;
    this.wake?.();
  }

  private free(d: Defined): number {
    return Math.max(0, d.kind.concurrency - (this.inflight.get(d.kind.name) ?? 0));
  }

  /** Kinds the dispatcher claims (periodic node kinds have no rows). */
  private claimable(): string[] {
    return [...this.defined.values()].filter((d) => d.kind.every?.scope !== "node" && this.free(d) > 0).map((d) => d.kind.name);
  }

  private async dispatch(): Promise<void> {
    let mustClaim = true;
    while (!this.stopping) {
      // A wake-up (a commit, a freed slot) while claiming or sleeping: claim again.
      if (this.poked) mustClaim = true;
      this.poked = false;
      let next: number | null = null;
      let failed = false;
      try {
        if (mustClaim) {
          mustClaim = false;
          for (const row of await this.claim(await this.dueKinds(), Infinity, false)) void this.launch(row);
        }
        if (!this.poked && !this.stopping) next = await store.nextDueAt(this.db.read, this.claimable());
        if (this.claimFailures > 0) {
          this.logOf().warn("job claims recovered", { failures: this.claimFailures });
          this.claimFailures = 0;
        }
      } catch (error) {
        // Why: a busy or failing database must not end the loop for good; try again after a poll.
        // The first failure is logged, then one line a minute while it lasts (a database down
        // for an hour would otherwise write 3,600 lines per node).
        this.claimFailures++;
        if (this.claimFailures === 1 || now() - this.claimFailureLoggedAt >= CLAIM_FAILURE_LOG_MS) {
          this.claimFailureLoggedAt = now();
          this.logOf().error("job claim failed", { error: String(error), failures: this.claimFailures });
        }
        failed = true;
      }
      if (this.stopping) break;
      if (this.poked || (!failed && next !== null && next <= now())) {
        mustClaim = true;
        continue;
      }
      const wait = next === null || failed ? IDLE_POLL_MS : Math.min(IDLE_POLL_MS, Math.max(1, next - now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
      // A failed claim is retried; a due row found by the read is claimed after the wait.
      if (failed || (next !== null && next <= now())) mustClaim = true;
    }
  }

  /**
   * The kinds a wake-up claims. SQLite: one read first, and the claim's write transaction only
   * for kinds with a row due now (a wake-up names work of one kind; most others have nothing, and
   * claiming all 22 cost ~4 ms of CPU per wake). PostgreSQL: the same read, but a wake-up with
   * anything due claims every claimable kind, as before — claiming only the due ones, the claim
   * came right inside the next write to the same key queue and under 4 concurrent commenters on
   * one thread the comment writes kept failing to serialize (503 database_busy after 8 attempts
   * in bench/review.ts --pg; bench/README §29).
   */
  private async dueKinds(): Promise<string[]> {
    const t = now();
    const claimable = this.claimable();
    const due = [...(await store.dueByKind(this.db.read, claimable))].filter(([, at]) => at <= t).map(([name]) => name);
    return this.db.dialect === "sqlite" || due.length === 0 ? due : claimable;
  }

  /** Claims due rows of `names` (each kind up to its free concurrency, or `cap`) in one transaction. */
  private async claim(names: readonly string[], cap: number, ignoreConcurrency: boolean): Promise<JobRow[]> {
    if (names.length === 0) return [];
    return this.reserved(async (tx, reserve) => {
      const t = now();
      const out: JobRow[] = [];
      for (const name of names) {
        const d = this.defined.get(name)!;
        const limit = Math.min(cap - out.length, ignoreConcurrency ? cap : this.free(d));
        if (limit <= 0) continue;
        out.push(...reserve(await store.claim(tx, name, t, limit, t + d.kind.leaseMs, this.token())));
      }
      return out;
    });
  }

  /**
   * Runs a claim transaction whose rows are registered as running before it commits (`reserve`),
   * so a runNow right after joins them instead of finding the row leased; a rollback forgets them.
   * Safe to re-run (a database that retries the transaction): a run first forgets the rows an
   * earlier, rolled-back run of the callback registered.
   */
  private async reserved(claim: (tx: Tx, reserve: (rows: JobRow[]) => JobRow[]) => Promise<JobRow[]>): Promise<JobRow[]> {
    const mine: JobRow[] = [];
    const forget = () => {
      for (const row of mine.splice(0)) this.unreserve(row.id);
    };
    // Each row is remembered the moment it is registered: a callback that fails after reserving
    // some rows (a serialization failure on a later statement) gives them all back, so none is
    // left registered with an attempt that never starts (holding its kind's slot and stop()).
    const reserve = (rows: JobRow[]) => {
      mine.push(...this.reserve(rows));
      return rows;
    };
    try {
      return await this.db.transaction(async (tx) => {
        forget();
        return await claim(tx, reserve);
      });
    } catch (error) {
      forget();
      throw error;
    }
  }

  /** Gives a reserved, not yet launched row back: its outcome is "pending", its slot free now. */
  private unreserve(jobId: string): void {
    const r = this.running.get(jobId);
    if (!r) return;
    r.release();
    r.start(null);
  }

  /** Registers claimed rows (inside their claim transaction); `launch` starts them once it committed. */
  private reserve(rows: JobRow[]): JobRow[] {
    for (const row of rows) {
      let start!: (go: { timeoutMs?: number } | null) => void;
      const gate = new Promise<{ timeoutMs?: number } | null>((r) => (start = r));
      const abort = new AbortController();
      const d = this.defined.get(row.kind);
      this.inflight.set(row.kind, (this.inflight.get(row.kind) ?? 0) + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        // Why the check: a re-run of the claim may have registered this row again meanwhile.
        if (this.running.get(row.id)?.release === release) this.running.delete(row.id);
        this.inflight.set(row.kind, (this.inflight.get(row.kind) ?? 1) - 1);
      };
      const outcome = gate
        .then(
          (go): Promise<Outcome> => (go === null ? Promise.resolve({ state: "pending" }) : d ? this.attempt(d, row, abort, go.timeoutMs) : this.unknown(row)),
        )
        .finally(() => {
          release();
          // A slot is free: look again (and wake rows queued behind this one's key).
          if (this.started && !this.stopping) this.poke();
        });
      this.running.set(row.id, { kind: row.kind, outcome, abort, start, release });
    }
    return rows;
  }

  private token(): string {
    return `${this.node}.${(++this.tokenSeq).toString(36)}`;
  }

  private async stateOf(jobId: string): Promise<Outcome> {
    const row = await store.jobById(this.db.read, jobId);
    if (!row) return { state: "failed", error: "no such job" };
    if (row.doneAt === null) return { state: "pending", ...(row.lastError ? { error: row.lastError } : {}) };
    return row.lastError === null ? { state: "done" } : { state: "failed", error: row.lastError };
  }

  /** Starts a reserved row (its claim committed); answers its recorded outcome, never rejects. */
  private launch(row: JobRow, timeoutMs?: number): Promise<Outcome> {
    const r = this.running.get(row.id);
    if (!r) return this.stateOf(row.id);
    r.start({ timeoutMs });
    return r.outcome;
  }

  private async unknown(row: JobRow): Promise<Outcome> {
    // Why not fail it: another node (a newer version) may know the kind; ours lets the lease lapse.
    this.logOf().warn("job of an unknown kind left for another node", { job_id: row.id, kind: row.kind });
    return { state: "pending" };
  }

  private async attempt(d: Defined, row: JobRow, abort: AbortController, timeoutOverride?: number): Promise<Outcome> {
    const token = row.leaseToken!;
    const kind = d.kind;
    const n = row.attempts;
    const final = n >= attemptsOf(kind.retry);
    const timeoutMs = timeoutOverride ?? kind.timeoutMs;
    const signal = timeoutMs ? AbortSignal.any([abort.signal, AbortSignal.timeout(timeoutMs)]) : abort.signal;
    let completed = false;
    const at: Attempt = {
      jobId: row.id,
      n,
      final,
      signal,
      timeoutMs,
      complete: async (fn) => {
        const ok = await this.db.transaction(async (tx) => {
          if (!(await store.holds(tx, row.id, token))) return false;
          await fn(tx);
          return store.finish(tx, row.id, token, now());
        });
        if (!ok) throw new LeaseLost();
        completed = true;
      },
    };
    // Renew the lease while the handler runs; a renewal that finds it gone aborts the attempt.
    const renewEvery = Math.max(50, Math.floor(kind.leaseMs / 3));
    const renewer = setInterval(() => {
      void this.db
        .transaction((tx) => store.renew(tx, row.id, token, now() + kind.leaseMs))
        .then((ok) => {
          if (!ok) abort.abort(new LeaseLost());
        })
        .catch(() => undefined);
    }, renewEvery);
    try {
      await d.run(this.ctxOf(), row.payload, at);
      if (completed) return { state: "done" };
      const ok = await this.db.transaction((tx) => store.finish(tx, row.id, token, now()));
      return ok ? { state: "done" } : { state: "pending" };
    } catch (error) {
      return await this.failed(kind, row, token, n, final, error, abort.signal.aborted && this.stopping);
    } finally {
      clearInterval(renewer);
    }
  }

  private async failed(kind: JobKind<any>, row: JobRow, token: string, n: number, final: boolean, error: unknown, stopped: boolean): Promise<Outcome> {
    const log = this.logOf();
    try {
      if (error instanceof LeaseLost) return { state: "pending" };
      if (error instanceof Released || (stopped && !(error instanceof Failure))) {
        await this.db.transaction((tx) => store.release(tx, row.id, token, null));
        return { state: "pending" };
      }
      if (error instanceof Later) {
        await this.db.transaction((tx) => store.release(tx, row.id, token, now() + error.ms));
        return { state: "pending" };
      }
      const message = reasonOf(error);
      const t = now();
      const runAt = final ? t : t + backoffOf(kind.retry, n);
      log.warn(final ? "job given up" : "job failed", { job_id: row.id, kind: row.kind, attempt: n, error: message });
      await this.db.transaction(async (tx) => {
        if (!(await store.holds(tx, row.id, token))) return;
        if (error instanceof Failure) await error.record(tx);
        await store.fail(tx, row.id, token, message, runAt, final ? t : null);
      });
      return final ? { state: "failed", error: message } : { state: "pending", error: message };
    } catch (e) {
      // The lease expires and the row is retried then.
      log.error("job outcome not recorded", { job_id: row.id, kind: row.kind, error: String(e) });
      return { state: "pending", error: reasonOf(error) };
    }
  }

  // ── periodic kinds ──────────────────────────────────────────────────────────────────────────

  /** A periodic kind's period (some depend on the configuration). */
  private periodOf(d: Defined): number {
    const ms = d.kind.every!.ms;
    return typeof ms === "function" ? ms(this.ctxOf().config) : ms;
  }

  private scheduleCluster(d: Defined): void {
    const every = d.kind.every!;
    const ms = this.periodOf(d);
    const tick = async () => {
      const t = now();
      const slot = Math.floor(t / ms);
      try {
        await this.db.transaction(async (tx) => {
          if (await store.takeSlot(tx, d.kind.name, slot, every.immediate ? slot - 1 : slot, t)) await this.enqueue(tx, d.kind, { slot });
        });
      } catch (error) {
        this.logOf().error("periodic job not scheduled", { kind: d.kind.name, error: String(error) });
      }
      if (this.stopping) return;
      // The next slot boundary (wall clock, so a restart does not reset the period).
      const wait = Math.max(50, (slot + 1) * ms - now() + 5);
      this.later(() => void tick(), Math.min(wait, 2 ** 31 - 1));
    };
    void tick();
  }

  private scheduleNode(d: Defined): void {
    const every = d.kind.every!;
    const ms = this.periodOf(d);
    const tick = () => {
      if (this.stopping) return;
      const run = d
        .run(this.ctxOf(), null, { jobId: "", n: 1, final: true, signal: this.stopSignal.signal, timeoutMs: undefined, complete: async () => {} })
        .catch((error) => this.logOf().error(`${d.kind.name} failed`, { error: String(error) }))
        .finally(() => {
          this.nodeRuns.delete(run);
          if (!this.stopping) this.later(tick, ms);
        });
      this.nodeRuns.add(run);
    };
    this.later(tick, every.immediate ? 0 : ms);
  }

  private later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }
}

/** A failure reason fit for a row and a log line: one line, bounded. */
export function reasonOf(error: unknown): string {
  const raw = error instanceof Error ? error.message || error.name : String(error);
  const line = raw.replace(/\s+/g, " ").trim() || "unknown error";
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}
