// A small seeded PRNG (sfc32) for the git benchmark generator: same seed, same sequence, on
// every platform (pure 32-bit integer arithmetic, no Math.random).

/** sfc32 by Chris Doty-Humphrey; state seeded through splitmix32 from one integer seed. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 16; i++) this.u32();
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** An integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.float() * xs.length)]!;
  }

  /** Log-uniform integer in [lo, hi]: many small values, a few large ones. */
  logInt(lo: number, hi: number): number {
    return Math.round(Math.exp(Math.log(lo) + this.float() * (Math.log(hi) - Math.log(lo))));
  }

  /** Fills a buffer with pseudo-random bytes. */
  fill(buf: Uint8Array, start = 0, end = buf.length): void {
    let i = start;
    for (; i + 4 <= end; i += 4) {
      const v = this.u32();
      buf[i] = v & 0xff;
      buf[i + 1] = (v >>> 8) & 0xff;
      buf[i + 2] = (v >>> 16) & 0xff;
      buf[i + 3] = v >>> 24;
    }
    if (i < end) {
      const v = this.u32();
      for (let k = 0; i < end; i++, k += 8) buf[i] = (v >>> k) & 0xff;
    }
  }
}
