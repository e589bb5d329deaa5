// Bounds on concurrency: a counting semaphore, and one semaphore per group (per repository) that
// exists only while the group has requests in flight or waiting.

/** A counting semaphore; waiters are served in arrival order. */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly max: number) {
    if (!Number.isSafeInteger(max) || max <= 0) throw new Error("a limiter needs a positive integer bound");
  }

  /** Slots taken now. */
  get inUse(): number {
    return this.active;
  }

  /** Callers queued for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Take a slot, waiting for one if all are taken; returns its release (idempotent). */
  async acquire(): Promise<() => void> {
    if (this.active < this.max) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }

  /** Run `fn` holding a slot. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/** One Limiter per group key, created on demand and dropped when idle. */
export class GroupLimiter {
  private readonly groups = new Map<string, Limiter>();

  constructor(readonly maxPerGroup: number) {}

  /** Take a slot of `group`; returns its release. */
  async acquire(group: string): Promise<() => void> {
    let limiter = this.groups.get(group);
    if (!limiter) {
      limiter = new Limiter(this.maxPerGroup);
      this.groups.set(group, limiter);
    }
    const release = await limiter.acquire();
    const held = limiter;
    return () => {
      release();
      if (held.inUse === 0 && held.queued === 0 && this.groups.get(group) === held) this.groups.delete(group);
    };
  }

  /** Groups with requests in flight or queued. */
  get size(): number {
    return this.groups.size;
  }
}
