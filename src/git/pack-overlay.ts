// Packs received by a push, readable before they are published: open one written by
// indexPack, and read it in front of the repository's own objects.
import { openFileSource } from "./file-source.ts";
import { PackIndex } from "./pack-index.ts";
import type { IndexedPack } from "./pack-indexer.ts";
import { Pack } from "./pack-reader.ts";
import { PackSet } from "./pack-set.ts";
import type { ObjectReader, ObjectType, Oid, RawObject } from "./types.ts";

/** Open the .pack/.idx written by indexPack; close() releases the file. */
export async function openIndexedPack(pack: IndexedPack): Promise<{ pack: Pack; close(): Promise<void> }> {
  const idx = PackIndex.parse(new Uint8Array(await Bun.file(pack.idxPath).arrayBuffer()));
  const source = await openFileSource(pack.packPath);
  return { pack: new Pack(pack.name, idx, source), close: () => source.close() };
}

/** `packs` read before `base`: the repository as it will be once they are published. */
export function overlayReader(packs: Pack[], base: ObjectReader): ObjectReader {
  if (base instanceof PackSet) return new PackSet([...packs, ...base.packs]);
  const front = new PackSet(packs);
  return {
    has: async (oid: Oid) => (await front.has(oid)) || base.has(oid),
    read: async (oid: Oid): Promise<RawObject | null> => (await front.read(oid)) ?? base.read(oid),
    readHeader: async (oid: Oid): Promise<{ type: ObjectType; size: number } | null> => (await front.readHeader(oid)) ?? base.readHeader(oid),
  };
}
