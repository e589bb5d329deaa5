// A small pool of worker threads for work that grows with hostile input (pack indexing, delta
// resolution, pack generation, YAML, Markdown). Why: the event loop serves every request; a
// task that takes seconds on it stalls them all. On a thread it stalls only that thread, and a
// task past its time limit has its thread terminated (a fresh one replaces it).
//
// The pool knows nothing of the tasks: `src/thread-tasks.ts` names them, `src/thread-main.ts`
// is the thread's entry point. A task is `(input, emit) => result`. `emit` streams values to
// the caller (a pack as it is generated) with credit-based backpressure: a thread stops at
// `window` unacknowledged values until the caller has taken them.

/** What a task function sees besides its input. */
export interface TaskIo {
  /** Sends one value to the caller; resolves once the caller has room for more. */
  emit(value: unknown, transfer?: Transferable[]): Promise<void>;
}

/** A task: runs on a thread; its result (and each emitted value) must be structured-cloneable. */
export type TaskFn = (input: any, io: TaskIo) => unknown;

/** The tasks a pool runs, by name. */
export type TaskTable = Record<string, TaskFn>;

/** Why a task did not return. `kind` is stable for callers to switch on. */
export class ThreadTaskError extends Error {
  constructor(
    readonly kind: "time_limit" | "busy" | "failed" | "aborted" | "closed",
    message: string,
    /** For `failed`: the thrown error's name and `code` on the thread (e.g. an engine refusal). */
    readonly data: { name?: string; code?: string; details?: unknown } = {},
  ) {
    super(message);
    this.name = "ThreadTaskError";
  }
}

export interface RunOptions {
  /** Terminate the thread and reject with `time_limit` after this long (running time, not queue time). */
  timeLimitMs?: number;
  /** Values transferred (not copied) with the input. */
  transfer?: Transferable[];
  /** Receives each emitted value, in order; a returned promise delays the acknowledgement (backpressure). */
  onEmit?: (value: unknown) => void | Promise<void>;
  /** Aborting removes a queued task, or terminates its running thread, and rejects with `aborted`. */
  signal?: AbortSignal;
}

export interface PoolOptions {
  /** Threads at most (default: the machine's cores, at least 1, at most 8). */
  size?: number;
  /** Tasks waiting beyond this many are refused with `busy` at once (default 256). */
  maxQueue?: number;
  /** Unacknowledged emitted values a thread may have in flight (default 4). */
  window?: number;
  /** Default time limit of a task (default none). */
  timeLimitMs?: number;
}

/** Messages between the pool and a thread (src/thread-main.ts speaks the other side). */
export type ToThread = { type: "run"; id: number; task: string; input: unknown; window: number } | { type: "ack"; id: number };
export type FromThread =
  | { type: "emit"; id: number; value: unknown }
  | { type: "done"; id: number; result: unknown }
  | { type: "error"; id: number; message: string; name?: string; code?: string; details?: unknown };

interface Pending {
  id: number;
  task: string;
  input: unknown;
  options: RunOptions;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  job: Pending | null;
  timer: ReturnType<typeof setTimeout> | null;
  /** Emitted values being consumed in order. */
  chain: Promise<void>;
}

/** A fixed-size pool of threads running the tasks of `T`. */
export class ThreadPool<T extends TaskTable> {
  /** Threads at most. */
  readonly size: number;
  private readonly maxQueue: number;
  private readonly window: number;
  private readonly defaultLimit: number | undefined;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private busyCount = 0;
  private completedCount = 0;
  private failedCount = 0;

  constructor(
    /** The thread's entry module (src/thread-main.ts, resolved by the caller for source or binary). */
    private readonly entry: string | URL,
    options: PoolOptions = {},
  ) {
    const cores = navigator.hardwareConcurrency || 1;
    this.size = Math.max(1, Math.min(8, options.size ?? cores));
    this.maxQueue = options.maxQueue ?? 256;
    this.window = Math.max(1, options.window ?? 4);
    this.defaultLimit = options.timeLimitMs;
  }

  /** Runs `task` on a thread and resolves with its result. */
  run<K extends keyof T & string>(task: K, input: Parameters<T[K]>[0], options: RunOptions = {}): Promise<Awaited<ReturnType<T[K]>>> {
    if (this.closed) return Promise.reject(new ThreadTaskError("closed", "the thread pool is closed"));
    if (options.signal?.aborted) return Promise.reject(new ThreadTaskError("aborted", "aborted before it started"));
    if (this.queue.length >= this.maxQueue && !this.slots.some((s) => !s.job) && this.slots.length >= this.size) {
      return Promise.reject(new ThreadTaskError("busy", "too much work is waiting for a thread; try again shortly"));
    }
    return new Promise((resolve, reject) => {
      const job: Pending = { id: this.nextId++, task, input, options, resolve: resolve as (v: unknown) => void, reject };
      if (options.signal) {
        job.onAbort = () => this.abort(job);
        options.signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Gauges for /metrics. */
  stats(): { threads: number; busy: number; queued: number; completed: number; failed: number } {
    return { threads: this.slots.length, busy: this.busyCount, queued: this.queue.length, completed: this.completedCount, failed: this.failedCount };
  }

  /** Terminates every thread; queued and running tasks reject with `closed`. */
  close(): void {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, new ThreadTaskError("closed", "the thread pool closed"));
    for (const slot of this.slots.splice(0)) {
      if (slot.timer) clearTimeout(slot.timer);
      slot.worker.terminate();
      if (slot.job) this.settle(slot.job, new ThreadTaskError("closed", "the thread pool closed"));
    }
    this.busyCount = 0;
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.job);
      if (!slot) {
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(this.entry);
    // Why unref: an idle pool must not keep a CLI command (or a test) alive. A thread is ref'd
    // while it runs a task (start/finish): Bun's event loop spins on a CPU while it waits on
    // nothing but an unref'd worker (measured: as much main-thread CPU as the task's own).
    (worker as unknown as { unref(): void }).unref();
    const slot: Slot = { worker, job: null, timer: null, chain: Promise.resolve() };
    worker.onmessage = (event: MessageEvent<FromThread>) => this.receive(slot, event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.replace(slot, new ThreadTaskError("failed", `thread failed: ${event.message}`));
    };
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, job: Pending): void {
    slot.job = job;
    slot.chain = Promise.resolve();
    this.busyCount++;
    (slot.worker as unknown as { ref(): void }).ref();
    const limit = job.options.timeLimitMs ?? this.defaultLimit;
    if (limit !== undefined) {
      slot.timer = setTimeout(() => this.replace(slot, new ThreadTaskError("time_limit", `${job.task} took longer than ${limit} ms`)), limit);
    }
    const message: ToThread = { type: "run", id: job.id, task: job.task, input: job.input, window: this.window };
    slot.worker.postMessage(message, job.options.transfer ?? []);
  }

  private receive(slot: Slot, msg: FromThread): void {
    const job = slot.job;
    if (!job || job.id !== msg.id) return;
    if (msg.type === "emit") {
      const onEmit = job.options.onEmit;
      slot.chain = slot.chain.then(async () => {
        if (slot.job !== job) return;
        try {
          await onEmit?.(msg.value);
        } catch (error) {
          this.replace(slot, error);
          return;
        }
        if (slot.job === job) slot.worker.postMessage({ type: "ack", id: job.id } satisfies ToThread);
      });
      return;
    }
    // The result follows every emitted value: settle after the consumer has taken them all.
    void slot.chain.then(() => {
      if (slot.job !== job) return;
      this.finish(slot);
      if (msg.type === "done") {
        this.completedCount++;
        this.settle(job, undefined, msg.result);
      } else {
        this.failedCount++;
        this.settle(job, new ThreadTaskError("failed", msg.message, { name: msg.name, code: msg.code, details: msg.details }));
      }
      this.pump();
    });
  }

  /** Frees the slot of its job (the thread stays for the next task). */
  private finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    this.busyCount--;
    (slot.worker as unknown as { unref(): void }).unref();
  }

  /** Terminates the slot's thread (time limit, abort, crash): its job rejects, a new thread starts on demand. */
  private replace(slot: Slot, error: unknown): void {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.worker.terminate();
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    if (job) {
      slot.job = null;
      this.busyCount--;
      this.failedCount++;
      this.settle(job, error);
    }
    this.pump();
  }

  private abort(job: Pending): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.settle(job, new ThreadTaskError("aborted", `${job.task} was aborted`));
      return;
    }
    const slot = this.slots.find((s) => s.job === job);
    if (slot) this.replace(slot, new ThreadTaskError("aborted", `${job.task} was aborted`));
  }

  private settle(job: Pending, error: unknown, result?: unknown): void {
    if (job.onAbort) job.options.signal?.removeEventListener("abort", job.onAbort);
    if (error !== undefined) job.reject(error);
    else job.resolve(result);
  }
}
