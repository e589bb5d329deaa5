// Long loops over client input, cut into slices of the event loop. Why: a request may carry a
// hundred thousand lines (haves, wants, shallow, ref prefixes), each cheap, but together they
// would hold the event loop for seconds; every other request waits behind them. A loop that
// ticks a TimeSlice yields (setImmediate) once it has run SLICE_MS, so others get their turn.
import { PackSet, type MultiPackIndexCache } from "./pack-set.ts";
import type { Pack } from "./pack-reader.ts";
import type { ObjectType, Oid, RawObject } from "./types.ts";

/** Longest run between yields. */
export const SLICE_MS = 5;
/** Calls between clock reads (a clock read costs more than most loop bodies). */
const CHECK_EVERY = 4;

/** Yields to the event loop once the current slice has run SLICE_MS. */
export class TimeSlice {
  private start = performance.now();
  private calls = 0;

  /** A promise to await when the slice is spent, else undefined (no await, no microtask). */
  tick(): Promise<void> | undefined {
    if (++this.calls < CHECK_EVERY) return undefined;
    this.calls = 0;
    if (performance.now() - this.start < SLICE_MS) return undefined;
    return this.yield();
  }

  private async yield(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}

/**
 * A PackSet whose reads yield to the event loop between slices: every walk over it (negotiation,
 * shallow boundaries, reachability of wants, peeling) shares the event loop, however long it is.
 */
export class SlicedPackSet extends PackSet {
  private readonly slice = new TimeSlice();

  constructor(packs: Pack[], midxCache?: MultiPackIndexCache) {
    super(packs, midxCache);
  }

  override async has(oid: Oid): Promise<boolean> {
    await this.slice.tick();
    return super.has(oid);
  }

  override async read(oid: Oid): Promise<RawObject | null> {
    await this.slice.tick();
    return super.read(oid);
  }

  override async readHeader(oid: Oid): Promise<{ type: ObjectType; size: number } | null> {
    await this.slice.tick();
    return super.readHeader(oid);
  }
}
