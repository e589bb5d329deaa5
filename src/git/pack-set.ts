// One snapshot of a repository's live packs, read as a single object database.
import { MultiPackIndex } from "./multi-pack-index.ts";
import type { Pack } from "./pack-reader.ts";
import type { ObjectReader, ObjectType, Oid, RawObject } from "./types.ts";

/** Where multi-pack indexes of pack sets are kept between requests (keyed by the packs' names). */
export interface MultiPackIndexCache {
  get(key: string): MultiPackIndex | undefined;
  set(key: string, midx: MultiPackIndex): void;
}

/** The live packs of a repository (newest first) as an ObjectReader; misses are cached per instance. */
export class PackSet implements ObjectReader {
  private readonly missing = new Set<Oid>();
  private midx: MultiPackIndex | null = null;

  constructor(
    readonly packs: Pack[],
    private readonly midxCache?: MultiPackIndexCache,
  ) {}

  /** One index over all the packs (built on first use, or taken from the cache). */
  multiPackIndex(): MultiPackIndex {
    if (this.midx) return this.midx;
    const key = this.packs.map((p) => p.name).join("\n");
    this.midx = this.midxCache?.get(key) ?? MultiPackIndex.build(this.packs);
    this.midxCache?.set(key, this.midx);
    return this.midx;
  }

  /** The first pack holding `oid` and its offset there, or null. */
  locate(oid: Oid): { pack: Pack; offset: number } | null {
    if (this.missing.has(oid)) return null;
    for (const pack of this.packs) {
      const offset = pack.idx.find(oid);
      if (offset >= 0) return { pack, offset };
    }
    this.missing.add(oid);
    return null;
  }

  /** True when some pack holds `oid`. */
  async has(oid: Oid): Promise<boolean> {
    return this.locate(oid) !== null;
  }

  /** The resolved object, or null when absent. */
  async read(oid: Oid): Promise<RawObject | null> {
    const at = this.locate(oid);
    return at ? at.pack.readAt(at.offset) : null;
  }

  /** Hint that these objects (with `bases`, their delta bases too) will be read soon; each pack's source may fetch them in the background. */
  prefetch(oids: readonly Oid[], bases = true): void {
    if (!this.packs.some((p) => p.source.prefetch)) return;
    const byPack = new Map<Pack, number[]>();
    for (const oid of oids) {
      const at = this.locate(oid);
      if (!at) continue;
      const list = byPack.get(at.pack);
      if (list) list.push(at.offset);
      else byPack.set(at.pack, [at.offset]);
    }
    for (const [pack, offsets] of byPack) pack.prefetch(offsets, bases);
  }

  /** Type and size; non-delta entries are not inflated, deltas only read their header. */
  async readHeader(oid: Oid): Promise<{ type: ObjectType; size: number } | null> {
    const at = this.locate(oid);
    return at ? at.pack.headerAt(at.offset) : null;
  }
}
