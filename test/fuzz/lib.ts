// Deterministic fuzzing: seeded inputs (mutations of valid seeds, and generated ones), each case
// run with a time cap, failures recorded with the seed and case number that reproduce them.
// Used by the fuzz tests in `npm test` (small counts) and by bench/fuzz.ts (long runs).

/** A seeded source of randomness (xorshift32; the same seed gives the same cases everywhere). */
export class Rand {
  private s: number;
  constructor(seed: number) {
    // Nearby seeds (seed + case number) must give unrelated sequences: mix them first
    // (murmur3's finalizer over both halves of the seed), since xorshift does not.
    let h = (Math.floor(seed / 4294967296) ^ Math.imul(seed >>> 0, 0x9e3779b1)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    this.s = (h ^ (h >>> 16)) >>> 0 || 0x9e3779b9;
  }
  /** A float in [0, 1). */
  next(): number {
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

/** Byte values that tend to find edge cases (lengths, signs, NUL, newlines, high bits). */
const INTERESTING = [0, 1, 0x0a, 0x20, 0x2f, 0x30, 0x39, 0x3c, 0x3e, 0x40, 0x5c, 0x7f, 0x80, 0xc0, 0xe2, 0xef, 0xfe, 0xff];

/** One to `rounds` random edits of `input`: bit flips, interesting bytes, inserts, deletes, duplicated or cut ranges. */
export function mutate(input: Uint8Array, r: Rand, rounds = 4): Uint8Array {
  let b = Array.from(input);
  const n = 1 + r.int(rounds);
  for (let k = 0; k < n; k++) {
    const at = b.length ? r.int(b.length) : 0;
    switch (r.int(8)) {
      case 0:
        if (b.length) b[at] = b[at]! ^ (1 << r.int(8));
        break;
      case 1:
        if (b.length) b[at] = r.pick(INTERESTING);
        break;
      case 2:
        b.splice(at, 0, ...r.bytes(1 + r.int(8)));
        break;
      case 3:
        b.splice(at, 1 + r.int(16));
        break;
      case 4: {
        const len = 1 + r.int(32);
        b.splice(r.int(b.length + 1), 0, ...b.slice(at, at + len));
        break;
      }
      case 5:
        b = b.slice(0, r.int(b.length + 1));
        break;
      case 6:
        if (b.length) b[at] = r.int(256);
        break;
      default: {
        // Overwrite 2-4 bytes with a big-endian number near a boundary (lengths, counts, offsets).
        const v = r.pick([0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0xffffffff, r.int(1 << 30)]);
        for (let i = 0; i < 4 && at + i < b.length; i++) b[at + i] = (v >>> (8 * (3 - i))) & 0xff;
      }
    }
  }
  return new Uint8Array(b);
}

/** Cuts `bytes` into random chunks, as a network delivers them. */
export function chunked(bytes: Uint8Array, r: Rand): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; ) {
    const n = 1 + r.int(r.chance(0.5) ? 16 : 4096);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

/** An async iterable over chunks. */
export async function* stream(chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  for (const c of chunks) yield c;
}

/** One fuzz target: makes a case from the randomness and runs it; throws only on a real failure. */
export interface Target {
  name: string;
  /** Runs one case; resolves when the input was handled (accepted or cleanly refused). */
  run(r: Rand, caseNo: number): Promise<void> | void;
  /** Checked every `every` cases and at the end (e.g. a full connectivity check of the repository). */
  invariant?: () => Promise<void> | void;
  every?: number;
  /** Called once at the end. */
  close?: () => Promise<void> | void;
}

/** What a run found. */
export interface FuzzReport {
  target: string;
  seed: number;
  cases: number;
  ms: number;
  slowestMs: number;
  failures: string[];
}

/** Whether an error is a clean refusal (the engine's GitError, the service's AppError), not a crash. */
export function isRefusal(e: unknown): boolean {
  const name = (e as Error | null)?.name;
  return name === "GitError" || name === "FsckError" || name === "AppError" || name === "RateLimited";
}

/**
 * Runs `cases` cases of `target` from `seed`: each case gets its own Rand (seed + case number),
 * so any failure is reproduced by its pair. A case longer than `capMs` is a failure (a hang would
 * also be caught by the caller's overall timeout).
 */
export async function runTarget(target: Target, opts: { seed: number; cases: number; capMs: number; maxFailures?: number }): Promise<FuzzReport> {
  const started = performance.now();
  const failures: string[] = [];
  let slowest = 0;
  let n = 0;
  for (; n < opts.cases && failures.length < (opts.maxFailures ?? 5); n++) {
    const r = new Rand(opts.seed * 1_000_003 + n);
    const t0 = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(() => target.run(r, n)),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`case took longer than ${opts.capMs} ms`)), opts.capMs);
        }),
      ]);
    } catch (e) {
      failures.push(`${target.name} seed=${opts.seed} case=${n}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    } finally {
      clearTimeout(timer);
    }
    const took = performance.now() - t0;
    slowest = Math.max(slowest, took);
    if (took > opts.capMs && !failures.some((f) => f.includes(`case=${n}:`)))
      failures.push(`${target.name} seed=${opts.seed} case=${n}: took ${Math.round(took)} ms (cap ${opts.capMs} ms)`);
    if (target.invariant && (n + 1) % (target.every ?? 1) === 0) {
      try {
        await target.invariant();
      } catch (e) {
        failures.push(`${target.name} seed=${opts.seed} after case=${n}: invariant broken: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  if (target.invariant) {
    try {
      await target.invariant();
    } catch (e) {
      failures.push(`${target.name} seed=${opts.seed} at the end: invariant broken: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  await target.close?.();
  return { target: target.name, seed: opts.seed, cases: n, ms: Math.round(performance.now() - started), slowestMs: Math.round(slowest), failures };
}

/** Runs `fn`, rethrowing anything that is not a clean refusal. */
export async function refusedOrOk(fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!isRefusal(e)) throw e;
  }
}
