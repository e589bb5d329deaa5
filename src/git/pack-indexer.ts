// Index a received pack, like `git index-pack --stdin --fix-thin` (gitformat-pack):
//
//   The pack is "PACK", version (2 or 3), object count, the entries, then "a 20-byte SHA-1
//   checksum of all of the above". "The thin pack ... can contain deltified objects whose
//   base is not in the pack"; index-pack --fix-thin appends those bases as whole objects
//   and rewrites the object count and the checksum.
//
// Pass 1 spools the input to a temp file while hashing and decodes every entry, inflating each
// zlib stream incrementally as its bytes arrive (one zlib stream kept across chunks, so every
// byte is inflated once and the pack is complete the moment its checksum arrives: the client is
// answered then, not at end of input); whole objects are hashed and checked right away. Pass 2
// resolves deltas from the file, walking each base's dependants depth-first with a bounded
// amount of resolved data held in memory, in buffers reused from object to object.
//
// Bounds (issue 25): an object's size is checked before any byte of it is inflated (its entry
// header for a whole object, its delta header for a delta, in pass 1 and again before a delta
// is applied), never after; inflation never writes past the declared size; a delta chain deeper
// than `maxDeltaDepth` is refused. With `run` (the process's thread pool), both passes run on a
// worker thread and the caller's thread only writes the input to the temp file
// (pack-index-task.ts speaks the other side).
import { closeSync, ftruncateSync, openSync, readSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { BufferPool, collectGarbage, MemoryPacer } from "./buffer-pool.ts";
import { copyBytes, objectTooLarge } from "./bytes.ts";
import { applyDelta, CopyLog, readDeltaHeader } from "./delta.ts";
import { deflate, inflateExact, PackInflater } from "./inflate.ts";
import { bytesToHex, hexToBytes } from "./oid.ts";
import { OidSet } from "./oid-set.ts";
import { decodeEntryHeader, type EntryHeader, encodeTypeSize, OBJ_OFS_DELTA, OBJ_REF_DELTA, OBJ_TREE, typeCode, typeName } from "./pack-entry.ts";
import { writePackIndexRaw } from "./pack-index.ts";
import { FsckError, type FsckProblem, FsckSession, type FsckSessionState, fsckForIndex, TreeLayout } from "./fsck.ts";
import { GitError, type GitErrorCode, type ObjectReader, type ObjectType, type Oid, type RawObject } from "./types.ts";

/** The result of indexPack: files named after the final pack checksum (plus a unique suffix), in opts.tmpDir. */
export interface IndexedPack {
  /** Final pack checksum (hex); files are pack-<name>-<unique>.pack / .idx. */
  name: string;
  packPath: string;
  idxPath: string;
  objectCount: number;
  /** Size in bytes of the final .pack file. */
  size: number;
  /** Size in bytes of the .idx file. */
  idxSize: number;
  /** Every object of the final pack (appended thin bases included), in pack order (built when first read). */
  readonly objects: { oid: Oid; type: ObjectType }[];
  /** Oids of the bases appended to fix a thin pack (also listed in objects). */
  appendedBases: Oid[];
  /**
   * Every object named by the pack's own commits, trees and tags (gitlinks excepted), each once:
   * with the pack's objects and the repository's, the connectivity check needs no second read.
   */
  links: OidSet;
  /**
   * True when every object of the pack is one of `tips` or is named by another object of the
   * pack (a root of the pack's graph is a tip): with the connectivity check passed and no other
   * objects in the repository, the pack then holds exactly what the tips reach.
   */
  onlyReachableFrom(tips: Oid[]): boolean;
  /**
   * The pack's reachability record for a push of `tips` into an empty repository: the tips no
   * other object of the pack names (the others are reached through them), or null when the pack
   * holds anything they do not reach.
   */
  reachabilityRecord(tips: Oid[]): Oid[] | null;
}

/** Largest object a push may hold once inflated, unless the caller says otherwise (SVC_GIT_MAX_OBJECT's default). */
export const DEFAULT_MAX_OBJECT_BYTES = 100 * 1024 * 1024;

/** Deepest delta chain a received pack may hold: git's own pack.depth maximum. */
export const MAX_DELTA_DEPTH = 4095;

/** Options of indexPack. */
export interface IndexPackOptions {
  /** Where the temp file and the final pack-<name>.pack/.idx are written. */
  tmpDir: string;
  /** Source of ref-delta bases missing from the pack (a thin pack); without it they are an error. */
  thinBaseReader?: ObjectReader;
  /** Reject input longer than this many bytes. */
  maxBytes?: number;
  /** Refuse an object larger than this once inflated (default DEFAULT_MAX_OBJECT_BYTES). */
  maxObjectBytes?: number;
  /** Refuse a delta chain deeper than this (default MAX_DELTA_DEPTH). */
  maxDeltaDepth?: number;
  /** Bytes of resolved delta bases kept in memory while resolving (default 32 MiB). */
  memoryBudget?: number;
  /**
   * Called with every object of the pack once it is hashed (its oid: 20 bytes of `oids` at `at`),
   * blobs included; may throw to refuse the pack. Runs where the indexing runs: not with `run`.
   */
  onObject?: ObjectHook;
  /**
   * The fsck session of the write: its tree findings come from the tree checks every object gets
   * anyway, each blob goes to its `inspectBlob`, accepted problems to its `warnings` (with `run`,
   * a session on the thread does this and its findings are merged into this one at the end).
   */
  fsck?: FsckSession;
  /** Called once the pack's trailing checksum has arrived and checked out (no more input is read). */
  onComplete?: () => void;
  /** Runs the indexing task on a worker thread (the process's pool); without it, on this thread. */
  run?: IndexTaskRunner;
}

/** Runs pack-index-task.ts's task on a thread, transferring `transfer` with the input. */
export type IndexTaskRunner = (input: IndexTaskInput, transfer: Transferable[]) => Promise<IndexTaskResult>;

/** What indexPack tells `onObject` about each object. */
export type ObjectHook = (type: ObjectType, data: Uint8Array, oids: Uint8Array, at: number) => void;

/** Stream, verify and index a pack (fixing it when thin); throws GitError on any corruption. */
export async function indexPack(input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: IndexPackOptions): Promise<IndexedPack> {
  const unique = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const limits: IndexLimits = {
    maxBytes: opts.maxBytes ?? Number.POSITIVE_INFINITY,
    maxObjectBytes: opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES,
    maxDeltaDepth: opts.maxDeltaDepth ?? MAX_DELTA_DEPTH,
    memoryBudget: opts.memoryBudget ?? 32 * 1024 * 1024,
  };
  const out = opts.run
    ? await indexOnThread(input, opts, opts.run, unique, limits)
    : await indexPackCore(
        { tmpDir: opts.tmpDir, unique, limits },
        { chunks: input, spooled: false, complete: () => opts.onComplete?.(), bases: opts.thinBaseReader },
        opts.fsck ?? null,
        opts.onObject,
      );
  return indexedPack(out);
}

/** The bounds of one indexing. */
export interface IndexLimits {
  maxBytes: number;
  maxObjectBytes: number;
  maxDeltaDepth: number;
  memoryBudget: number;
}

/** Where the core reads the pack and its thin bases from (this thread's caller, or the port to it). */
export interface CoreSource {
  /** The pack's bytes as they arrive; read until the trailing checksum. */
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** The chunks are in the temp file already (the caller spooled them); else the core writes them. */
  spooled: boolean;
  /** Told once the trailing checksum (at `end`) checked out. */
  complete(end: number): void;
  /** Thin-pack bases from the repository. */
  bases?: Pick<ObjectReader, "read" | "prefetch">;
}

/** What the core produced: plain data, so that it crosses from a thread. */
export interface IndexOutput {
  name: string;
  packPath: string;
  idxPath: string;
  count: number;
  /** Offset of the final trailer (the pack is end + 20 bytes). */
  end: number;
  idxSize: number;
  oids: Uint8Array;
  types: Uint8Array;
  appendedBases: Oid[];
  links: { keys: Uint8Array; slots: Int32Array; count: number };
}

/**
 * Both passes over one pack (this file's header comment), from `source`, into
 * `<tmpDir>/pack-<name>-<unique>.pack/.idx`. Runs on the caller's thread or on a worker
 * (pack-index-task.ts).
 */
export async function indexPackCore(
  where: { tmpDir: string; unique: string; limits: IndexLimits },
  source: CoreSource,
  fsck: FsckSession | null,
  onObject?: ObjectHook,
): Promise<IndexOutput> {
  const { tmpDir, unique, limits } = where;
  const tmpPath = join(tmpDir, `tmp-pack-${unique}.pack`);
  const fd = openSync(tmpPath, source.spooled ? "r+" : "w+");
  let done = false;
  try {
    const links = new OidSet(4096);
    const check = objectCheck(links, onObject, fsck);
    const table = await receive(source.chunks, fd, !source.spooled, limits, check, earlyBaseHints(source.bases), (end) => source.complete(end));
    const resolver = new Resolver(fd, table, check, limits);
    resolver.resolveAll();
    const appendedBases = await resolver.fixThin(source.bases);
    resolver.checkComplete();
    // Resolving produced the whole history's data in short-lived buffers: free them before the
    // rest of the push (and the next request) runs on top of them.
    collectGarbage();
    const checksum = appendedBases.length > 0 ? rewriteTrailer(fd, table) : table.checksum;
    const name = bytesToHex(checksum);
    const idx = writePackIndexRaw(table.oids, table.offsets, table.crcs, table.count, name);
    closeSync(fd);
    done = true;
    // Unique per call: two pushes of the same objects (a fork and its source) index the same pack at once.
    const packPath = join(tmpDir, `pack-${name}-${unique}.pack`);
    const idxPath = join(tmpDir, `pack-${name}-${unique}.idx`);
    renameSync(tmpPath, packPath);
    await Bun.write(idxPath, idx);
    const count = table.count;
    return {
      name,
      packPath,
      idxPath,
      count,
      end: table.end,
      idxSize: idx.length,
      oids: table.oids.subarray(0, 20 * count),
      types: table.types.subarray(0, count),
      appendedBases,
      links: links.export(),
    };
  } catch (e) {
    if (!done) closeSync(fd);
    try {
      unlinkSync(tmpPath);
    } catch {}
    throw e;
  }
}

/** The IndexedPack over what the core produced. */
function indexedPack(out: IndexOutput): IndexedPack {
  const { name, packPath, idxPath, count, oids, types, appendedBases } = out;
  const links = OidSet.from(out.links);
  // Every object a tip or named by another object of the pack: the roots of its graph are tips.
  const onlyReachableFrom = (tips: Oid[]): boolean => {
    const roots = new OidSet(tips.length);
    for (const t of tips) roots.addHex(t);
    for (let i = 0; i < count; i++) if (!links.has(oids, 20 * i) && !roots.has(oids, 20 * i)) return false;
    return appendedBases.length === 0;
  };
  return {
    name,
    packPath,
    idxPath,
    objectCount: count,
    size: out.end + 20,
    idxSize: out.idxSize,
    // Built on demand: the receive path only needs the count, and 125k small objects held for
    // the whole push are ~15 MB of heap.
    get objects() {
      const value: { oid: Oid; type: ObjectType }[] = [];
      for (let i = 0; i < count; i++) value.push({ oid: bytesToHex(oids, 20 * i, 20), type: typeName(types[i]!) });
      Object.defineProperty(this, "objects", { value, enumerable: true });
      return value;
    },
    appendedBases,
    links,
    onlyReachableFrom(tips: Oid[]): boolean {
      return onlyReachableFrom(tips);
    },
    reachabilityRecord(tips: Oid[]): Oid[] | null {
      if (!onlyReachableFrom(tips)) return null;
      const key = new OidSet(1);
      const heads = [...new Set(tips)].filter((t) => {
        key.addHex(t);
        return !links.has(key.table, 20 * (key.size - 1));
      });
      return heads.length > 0 ? heads : [...new Set(tips)];
    },
  };
}

// ---------------------------------------------------------------------------------------------
// On a worker thread: this side spools, the thread indexes (pack-index-task.ts)

/** The task's input: where to index, the limits, and the port this side answers on. */
export interface IndexTaskInput {
  tmpDir: string;
  unique: string;
  limits: IndexLimits;
  /** Run the fsck session's checks (its findings come back in the result). */
  fsck: boolean;
  /** Thin bases may be asked for over the port. */
  thin: boolean;
  port: MessagePort;
}

/** The task's answer: the indexed pack, or the refusal (as data: errors cross threads as text). */
export type IndexTaskResult = { ok: IndexOutput; fsck: FsckSessionState | null } | { error: { message: string; code: GitErrorCode; problem?: FsckProblem } };

/** Messages over the task's port. */
export type ToIndexer = { t: "data"; total: number } | { t: "end" } | { t: "base"; oid: Oid; object: RawObject | null; error?: string };
export type FromIndexer = { t: "complete"; end: number } | { t: "prefetch"; oids: Oid[] } | { t: "base?"; oid: Oid };

const STOP: unique symbol = Symbol("stop");

/**
 * This side of a thread's indexing: every chunk of `input` goes to the temp file and the thread
 * is told how far the file goes; the thread asks for thin bases over the port and says when the
 * trailing checksum arrived, after which no more input is read (a client that keeps its side
 * open waiting for the report gets it).
 */
async function indexOnThread(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: IndexPackOptions,
  run: IndexTaskRunner,
  unique: string,
  limits: IndexLimits,
): Promise<IndexOutput> {
  const tmpPath = join(opts.tmpDir, `tmp-pack-${unique}.pack`);
  const fd = openSync(tmpPath, "w");
  let fdOpen = true;
  const { port1, port2 } = new MessageChannel();
  const reader = opts.thinBaseReader;
  let completeAt = -1;
  let signalComplete!: () => void;
  const completed = new Promise<typeof STOP>((resolve) => (signalComplete = () => resolve(STOP)));
  port1.onmessage = (event: MessageEvent<FromIndexer>) => {
    const m = event.data;
    if (m.t === "complete") {
      completeAt = m.end;
      signalComplete();
      opts.onComplete?.();
    } else if (m.t === "prefetch") reader?.prefetch?.(m.oids);
    else if (m.t === "base?") {
      const answer = (object: RawObject | null, error?: string) => port1.postMessage({ t: "base", oid: m.oid, object, error } satisfies ToIndexer);
      if (!reader) answer(null);
      else
        reader.read(m.oid).then(
          (o) => answer(o ? { type: o.type, data: o.data } : null),
          (e: unknown) => answer(null, e instanceof Error ? e.message : String(e)),
        );
    }
  };
  const task = run({ tmpDir: opts.tmpDir, unique, limits, fsck: opts.fsck !== undefined, thin: reader !== undefined, port: port2 }, [port2]);
  const settled: Promise<typeof STOP> = task.then(
    () => STOP,
    () => STOP,
  );
  let total = 0;
  try {
    const it = Symbol.asyncIterator in input ? input[Symbol.asyncIterator]() : toAsync(input as Iterable<Uint8Array>);
    for (;;) {
      const next: IteratorResult<Uint8Array> | typeof STOP = await Promise.race([it.next(), completed, settled]);
      if (next === STOP) break;
      if (next.done) {
        port1.postMessage({ t: "end" } satisfies ToIndexer);
        break;
      }
      const chunk = next.value;
      total += chunk.length;
      if (total > limits.maxBytes) throw new GitError(`pack exceeds the maximum size of ${limits.maxBytes} bytes`, "too-large");
      writeAll(fd, chunk, total - chunk.length);
      port1.postMessage({ t: "data", total } satisfies ToIndexer);
    }
    closeSync(fd);
    fdOpen = false;
    const result = await task;
    if ("error" in result) {
      const { message, code, problem } = result.error;
      throw problem ? new FsckError(problem) : new GitError(message, code);
    }
    if (completeAt >= 0 && total > completeAt + 20) {
      await removeFiles(result.ok.packPath, result.ok.idxPath);
      throw new GitError("corrupt pack: garbage after the checksum");
    }
    if (result.fsck) opts.fsck?.absorb(result.fsck);
    return result.ok;
  } catch (e) {
    // The thread's task ends on its own: an input error makes it see a truncated pack.
    port1.postMessage({ t: "end" } satisfies ToIndexer);
    await task.catch(() => {});
    throw e;
  } finally {
    if (fdOpen) closeSync(fd);
    port1.close();
    try {
      unlinkSync(tmpPath);
    } catch {}
  }
}

async function* toAsync(input: Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* input;
}

async function removeFiles(...paths: string[]): Promise<void> {
  for (const p of paths) {
    try {
      unlinkSync(p);
    } catch {}
  }
}

/** Per-entry facts in typed arrays (grown by doubling), indexed by position in the pack. */
class EntryTable {
  count = 0;
  offsets = new Float64Array(1024);
  /** Length of the entry header (the zlib data follows it and ends where the next entry starts). */
  headerLens = new Uint8Array(1024);
  /** Object count the pack header announced (-1 until read): the tables grow towards it. */
  expected = -1;
  /** Inflated size of the entry data. */
  sizes = new Float64Array(1024);
  /** Object type code (1..4), set once resolved. */
  types = new Uint8Array(1024);
  /** Stored type code (1..4, 6, 7). */
  codes = new Uint8Array(1024);
  crcs = new Uint32Array(1024);
  /** Entry index of the base (OFS known in pass 1, REF filled on resolution), else -1. */
  bases = new Int32Array(1024);
  /** Deltas between the entry and a whole object (0 for a whole object). */
  depths = new Uint16Array(1024);
  resolved = new Uint8Array(1024);
  oids = new Uint8Array(20 * 1024);
  refBases = new Map<number, Oid>();
  /** Offset of the trailer, and the trailer. */
  end = 0;
  checksum = new Uint8Array(20);

  add(): number {
    if (this.count === this.offsets.length) this.grow();
    return this.count++;
  }

  /** Start of entry i's zlib data, and its length. */
  dataOffset(i: number): number {
    return this.offsets[i]! + this.headerLens[i]!;
  }

  compLength(i: number): number {
    return (i + 1 < this.count ? this.offsets[i + 1]! : this.end) - this.dataOffset(i);
  }

  private grow(): void {
    // Towards the announced count (at most 4x at a time, so a lying header costs little), then
    // by doubling (bases appended to fix a thin pack come after).
    const size = this.offsets.length;
    const n = this.expected > size ? Math.min(this.expected, 4 * size) : 2 * size;
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.offsets = f64(this.offsets);
    this.sizes = f64(this.sizes);
    const u8 = (a: Uint8Array, len = n) => {
      const b = new Uint8Array(len);
      b.set(a);
      return b;
    };
    this.types = u8(this.types);
    this.headerLens = u8(this.headerLens);
    this.codes = u8(this.codes);
    this.resolved = u8(this.resolved);
    this.oids = u8(this.oids, 20 * n);
    const crcs = new Uint32Array(n);
    crcs.set(this.crcs);
    this.crcs = crcs;
    const bases = new Int32Array(n);
    bases.set(this.bases);
    this.bases = bases;
    const depths = new Uint16Array(n);
    depths.set(this.depths);
    this.depths = depths;
  }

  /** Entry index at a pack offset, or -1. */
  indexAt(offset: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.offsets[mid]!;
      if (v === offset) return mid;
      if (v < offset) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }
}

/** Growable window over the input stream. */
class InputBuffer {
  buf = new Uint8Array(1 << 20);
  /** Absolute stream offset of buf[0]. */
  base = 0;
  len = 0;

  /** Add a chunk, dropping bytes before absolute offset `keepFrom` when room is needed. */
  append(chunk: Uint8Array, keepFrom: number): void {
    if (this.len + chunk.length > this.buf.length) {
      const keep = keepFrom - this.base;
      const live = this.len - keep;
      if (live + chunk.length > this.buf.length / 2) {
        const next = new Uint8Array(Math.max(this.buf.length * 2, (live + chunk.length) * 2));
        next.set(this.buf.subarray(keep, this.len));
        this.buf = next;
      } else {
        this.buf.copyWithin(0, keep, this.len);
      }
      this.base = keepFrom;
      this.len = live;
    }
    this.buf.set(chunk, this.len);
    this.len += chunk.length;
  }

  /** Bytes from absolute offset `from` to the end of what has arrived. */
  from(from: number): Uint8Array {
    return this.buf.subarray(from - this.base, this.len);
  }

  get endOffset(): number {
    return this.base + this.len;
  }
}

/** Checks, hashes (into `oids` at entry `i`) and reports one whole object. */
type ObjectCheck = (type: ObjectType, data: Uint8Array, oids: Uint8Array, i: number, layout?: TreeLayout) => void;

function objectCheck(links: OidSet, onObject: ObjectHook | undefined, fsck: FsckSession | null): ObjectCheck {
  const found = fsck?.found ?? null;
  const warnings = fsck?.warnings ?? null;
  const inspectBlob = fsck?.inspectBlob;
  let oids: Uint8Array;
  let at = 0;
  const oidOf = () => bytesToHex(oids, at, 20);
  return (type, data, table, i, layout) => {
    hashInto(table, i, type, data);
    oids = table;
    at = 20 * i;
    if (type !== "blob") fsckForIndex(type, data, oidOf, { links, found, warnings, layout });
    else if (inspectBlob) inspectBlob(data, table, 20 * i);
    onObject?.(type, data, table, 20 * i);
  };
}

/** Ref-delta bases hinted while the pack is still arriving, at most (the rest wait for fixThin's hint). */
const EARLY_BASE_HINTS = 256;

/** Early hints go out in batches of at least this many (neighbours in one batch share requests), and at the end of pass 1. */
const EARLY_HINT_BATCH = 32;

/** Hints for ref-delta bases met by pass 1 (see earlyBaseHints). */
interface BaseHints {
  note(oid: Oid): void;
  /** Sends the batch when it is full enough, or when `last`. */
  flush(last: boolean): void;
}

/**
 * Hints for the repository's copies of ref-delta bases as pass 1 meets them: against object
 * storage the bases (and their chains) are fetched while the rest of the pack arrives and pass 2
 * runs, instead of after both (a push of 10 commits onto git.git waited for two waves of reads
 * there). A thin pack's bases are outside it, so almost every hint is used; a base the
 * repository lacks is skipped by the reader. Bounded: a large push's blocks would be evicted
 * again before fixThin reads them.
 */
function earlyBaseHints(reader: Pick<ObjectReader, "prefetch"> | undefined): BaseHints | undefined {
  if (!reader?.prefetch) return undefined;
  const seen = new Set<Oid>();
  let batch: Oid[] = [];
  return {
    note(oid) {
      if (seen.size >= EARLY_BASE_HINTS || seen.has(oid)) return;
      seen.add(oid);
      batch.push(oid);
    },
    flush(last) {
      if (batch.length === 0 || (!last && batch.length < EARLY_HINT_BATCH)) return;
      reader.prefetch!(batch);
      batch = [];
    },
  };
}

/** Pass 1: spool to `fd` (when `write`), hash, decode entries; whole objects get their oid here. */
async function receive(
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  fd: number,
  write: boolean,
  limits: IndexLimits,
  check: ObjectCheck,
  hints: BaseHints | undefined,
  onComplete: (end: number) => void,
): Promise<EntryTable> {
  const t = new EntryTable();
  const packHash = new Bun.CryptoHasher("sha1");
  const inbuf = new InputBuffer();
  const z = new PackInflater();
  const maxObject = limits.maxObjectBytes;
  let total = 0;
  let pos = 0; // absolute parse position: every byte before it is hashed and inflated
  let expected = -1; // object count from the header
  let trailerRead = false;
  let ended = false;
  // Whole objects are inflated into one reused buffer (they only live until hashed and checked),
  // grown as the data really inflates (an entry header's size is the sender's word); a delta's
  // data is only looked at for its header, so it streams through a small one.
  let scratch = new Uint8Array(64 * 1024);
  const deltaOut = new Uint8Array(64 * 1024);
  const pacer = new MemoryPacer();
  // The entry being inflated.
  let start = 0;
  let head: EntryHeader | null = null;
  let crc = 0;
  let written = 0;
  let deltaChecked = false;

  const finishEntry = (): void => {
    const h = head!;
    const i = t.add();
    t.offsets[i] = start;
    t.headerLens[i] = h.headerLength;
    t.sizes[i] = h.size;
    t.codes[i] = h.typeCode;
    t.crcs[i] = crc;
    t.bases[i] = -1;
    t.depths[i] = 0;
    if (h.typeCode === OBJ_OFS_DELTA) {
      t.bases[i] = t.indexAt(start - h.baseDistance!);
    } else if (h.typeCode === OBJ_REF_DELTA) {
      t.refBases.set(i, h.baseOid!);
      hints?.note(h.baseOid!);
    } else {
      check(typeName(h.typeCode), scratch.subarray(0, h.size), t.oids, i);
      t.types[i] = h.typeCode;
      t.resolved[i] = 1;
    }
    head = null;
    pacer.tick();
  };

  /** A delta's result size, refused over the limit as soon as its header has inflated. */
  const checkDeltaHeader = (complete: boolean): void => {
    if (deltaChecked || (written < 20 && !complete)) return;
    deltaChecked = true;
    const { resultSize } = readDeltaHeader(deltaOut.subarray(0, Math.min(written, deltaOut.length)));
    if (resultSize > maxObject) throw tooLarge(resultSize, maxObject);
  };

  const step = (): boolean => {
    if (trailerRead) return false;
    const avail = inbuf.endOffset - pos;
    if (expected < 0) {
      if (avail < 12) {
        if (ended) throw new GitError("truncated pack: incomplete header");
        return false;
      }
      const h = inbuf.from(pos);
      if (h[0] !== 0x50 || h[1] !== 0x41 || h[2] !== 0x43 || h[3] !== 0x4b) throw new GitError("not a pack: bad signature");
      const view = new DataView(h.buffer, h.byteOffset, 12);
      const version = view.getUint32(4);
      if (version !== 2 && version !== 3) throw new GitError(`unsupported pack version ${version}`);
      expected = view.getUint32(8);
      t.expected = expected;
      packHash.update(h.subarray(0, 12));
      pos += 12;
      return true;
    }
    if (head === null) {
      if (t.count === expected) {
        if (avail < 20) {
          if (ended) throw new GitError("truncated pack: missing checksum");
          return false;
        }
        const trailer = inbuf.from(pos).subarray(0, 20);
        const digest = packHash.digest();
        if (!digest.equals(trailer)) throw new GitError("corrupt pack: checksum mismatch");
        t.end = pos;
        t.checksum.set(trailer);
        pos += 20;
        trailerRead = true;
        if (inbuf.endOffset > pos) throw new GitError("corrupt pack: garbage after the checksum");
        onComplete(t.end);
        return false;
      }
      const window = inbuf.from(pos);
      const h = decodeEntryHeader(window, 0);
      if (!h) {
        if (ended) throw new GitError("truncated pack: incomplete entry header");
        return false;
      }
      const delta = h.typeCode === OBJ_OFS_DELTA || h.typeCode === OBJ_REF_DELTA;
      // Refused before a byte of it is inflated.
      if (!delta && h.size > maxObject) throw tooLarge(h.size, maxObject);
      if (h.typeCode === OBJ_OFS_DELTA && !(h.baseDistance! > 0 && t.indexAt(pos - h.baseDistance!) >= 0)) {
        throw new GitError(`corrupt pack: delta at ${pos} has no base entry at ${pos - h.baseDistance!}`);
      }
      const raw = window.subarray(0, h.headerLength);
      packHash.update(raw);
      crc = Bun.hash.crc32(raw);
      start = pos;
      head = h;
      written = 0;
      deltaChecked = !delta;
      z.reset();
      pos += h.headerLength;
      return true;
    }
    // The entry's zlib stream, fed what has arrived.
    const h = head;
    const whole = h.typeCode !== OBJ_OFS_DELTA && h.typeCode !== OBJ_REF_DELTA;
    for (;;) {
      const window = inbuf.from(pos);
      if (window.length === 0) {
        if (ended) throw new GitError("truncated pack: incomplete entry data");
        return false;
      }
      let out: Uint8Array;
      let outOff: number;
      if (whole) {
        // Room for one byte more than declared: zlib reports the end of the stream with it free.
        if (written === scratch.length) {
          if (scratch.length >= h.size + 1) throw new GitError(`corrupt pack: inflated more than ${h.size} bytes, expected ${h.size}`);
          const grown = new Uint8Array(Math.min(h.size + 1, Math.max(2 * scratch.length, 64 * 1024)));
          grown.set(scratch.subarray(0, written));
          scratch = grown;
        }
        out = scratch;
        outOff = written;
      } else {
        // Only the delta's header is kept (at the start of deltaOut); the rest streams through.
        outOff = deltaChecked ? 0 : written;
        out = deltaOut;
        if (outOff === out.length) throw new GitError("corrupt delta: header too long");
      }
      const room = out.length - outOff;
      const r = z.step(window, 0, window.length, out, outOff, room);
      if (r.consumed > 0) {
        const used = window.subarray(0, r.consumed);
        packHash.update(used);
        crc = Bun.hash.crc32(used, crc);
        pos += r.consumed;
      }
      written += r.written;
      if (written > h.size) throw new GitError(`corrupt pack: inflated more than ${h.size} bytes, expected ${h.size}`);
      if (!whole) checkDeltaHeader(false);
      if (r.written < room && r.consumed < window.length) {
        // zlib stopped short of the input with room to spare: the stream ended.
        if (written !== h.size) throw new GitError(`corrupt pack: inflated ${written} bytes, expected ${h.size}`);
        if (!whole) checkDeltaHeader(true);
        finishEntry();
        return true;
      }
      if (r.written < room) {
        // Every byte that arrived was used: wait for more (the stream may end at its very edge).
        if (ended) {
          // Nothing follows the stream, so zlib cannot have told its end: the trailer is missing.
          throw new GitError("truncated pack: incomplete entry data");
        }
        return false;
      }
    }
  };

  const readInput = async () => {
    for await (const chunk of input) {
      total += chunk.length;
      if (total > limits.maxBytes) throw new GitError(`pack exceeds the maximum size of ${limits.maxBytes} bytes`, "too-large");
      if (write) writeAll(fd, chunk, total - chunk.length);
      inbuf.append(chunk, pos);
      while (step()) {}
      hints?.flush(false);
      // Complete at the checksum: the client may keep its side open waiting for the report.
      if (trailerRead) return;
    }
  };
  await readInput();
  ended = true;
  while (step()) {}
  hints?.flush(true);
  if (!trailerRead) throw new GitError("truncated pack");
  return t;
}

function tooLarge(size: number, max: number): GitError {
  return new GitError(objectTooLarge(size, max), "too-large");
}

/** Pass 2: resolve every delta, then fix a thin pack. */
class Resolver {
  private held = 0;

  private readonly budget: number;
  private readonly maxObject: number;
  private readonly maxDepth: number;

  constructor(
    private readonly fd: number,
    private readonly t: EntryTable,
    private readonly check: ObjectCheck,
    limits: IndexLimits,
  ) {
    this.budget = limits.memoryBudget;
    this.maxObject = limits.maxObjectBytes;
    this.maxDepth = limits.maxDeltaDepth;
  }

  /** Resolve all deltas reachable from whole objects in the pack. */
  resolveAll(): void {
    const t = this.t;
    this.ofsChildren = buildChildren(t);
    this.refChildren = new Map();
    for (const [i, oid] of t.refBases) {
      const list = this.refChildren.get(oid);
      if (list) list.push(i);
      else this.refChildren.set(oid, [i]);
    }
    const n = t.count;
    for (let i = 0; i < n; i++) {
      if (t.codes[i] === OBJ_OFS_DELTA || t.codes[i] === OBJ_REF_DELTA) continue;
      if (!this.hasChildren(i)) continue;
      this.walk(i, this.readBase(i));
    }
  }

  /**
   * Append missing ref-delta bases from `reader` and resolve their dependants. Like git, the
   * unresolved ref-deltas are taken in pack order (the trunks of chains come first) and a base
   * the reader lacks is skipped: it may be an object of the pack that a later base resolves.
   */
  async fixThin(reader: Pick<ObjectReader, "read" | "prefetch"> | undefined): Promise<Oid[]> {
    const appended: Oid[] = [];
    if (!reader || !this.refChildren || this.refChildren.size === 0) return appended;
    const t = this.t;
    const pending = [...t.refBases.keys()].filter((i) => !t.resolved[i]).sort((a, b) => a - b);
    // The bases are read one by one below: let object storage fetch them side by side meanwhile.
    if (reader.prefetch) reader.prefetch([...new Set(pending.map((d) => t.refBases.get(d)!))].filter((oid) => this.refChildren!.has(oid)));
    let end = t.end;
    for (const d of pending) {
      const oid = t.refBases.get(d)!;
      if (t.resolved[d] || !this.refChildren.has(oid)) continue;
      // Each base comes whole from the repository (its delta chain resolved into fresh buffers).
      this.basePacer.tick();
      const obj = await reader.read(oid);
      if (!obj) continue;
      const head = encodeTypeSize(typeCode(obj.type), obj.data.length);
      const z = deflate(obj.data);
      const i = t.add();
      t.offsets[i] = end;
      t.headerLens[i] = head.length;
      t.sizes[i] = obj.data.length;
      t.codes[i] = t.types[i] = typeCode(obj.type);
      t.bases[i] = -1;
      t.depths[i] = 0;
      t.resolved[i] = 1;
      t.oids.set(hexToBytes(oid), 20 * i);
      const raw = new Uint8Array(head.length + z.length);
      raw.set(head);
      raw.set(z, head.length);
      t.crcs[i] = Bun.hash.crc32(raw);
      writeAll(this.fd, raw, end);
      end += raw.length;
      t.end = end;
      appended.push(oid);
      this.walk(i, obj.data);
    }
    ftruncateSync(this.fd, end);
    return appended;
  }

  /** Throw unless every entry got an oid. */
  checkComplete(): void {
    const t = this.t;
    let unresolved = 0;
    for (let i = 0; i < t.count; i++) if (!t.resolved[i]) unresolved++;
    if (unresolved === 0) return;
    const missing = this.refChildren?.keys().next().value;
    throw new GitError(
      missing
        ? `pack has ${unresolved} unresolved deltas: base ${missing} is neither in the pack nor in the repository`
        : `pack has ${unresolved} unresolved deltas`,
    );
  }

  private ofsChildren: { start: Int32Array; list: Int32Array } | null = null;
  private refChildren: Map<Oid, number[]> | null = null;

  private hasChildren(i: number): boolean {
    const c = this.ofsChildren!;
    if (c.start[i + 1]! > c.start[i]!) return true;
    return this.refChildren!.size > 0 && this.refChildren!.has(bytesToHex(this.t.oids, 20 * i, 20));
  }

  private childrenOf(i: number): number[] {
    const c = this.ofsChildren!;
    const out: number[] = [];
    for (let k = c.start[i]!; k < c.start[i + 1]!; k++) out.push(c.list[k]!);
    if (this.refChildren!.size > 0) {
      const oid = bytesToHex(this.t.oids, 20 * i, 20);
      const refs = this.refChildren!.get(oid);
      if (refs) {
        this.refChildren!.delete(oid);
        for (const r of refs) {
          this.t.bases[r] = i;
          out.push(r);
        }
      }
    }
    return out;
  }

  /**
   * Depth-first over the dependants of `root`; the last child of a frame replaces it. Resolved
   * data lives in buffers of `this.pool`: a leaf's buffer (most objects) is reused as soon as it
   * is hashed, a base's when its last child is resolved or when it is dropped for the budget.
   */
  private walk(root: number, rootData: Uint8Array): void {
    const t = this.t;
    const pool = this.pool;
    const layout = this.layout;
    // A tree keeps where its entries start while its dependants are resolved (the tree checks
    // then skip the entries they copy whole from it).
    type Frame = { i: number; data: Uint8Array | null; starts: Uint32Array | null; kids: number[]; next: number };
    const stack: Frame[] = [];
    const push = (i: number, data: Uint8Array, starts: (() => Uint32Array) | null) => {
      const kids = this.childrenOf(i);
      if (kids.length === 0) {
        pool.release(data);
        return;
      }
      stack.push({ i, data, starts: starts && starts(), kids, next: 0 });
      this.held += data.length;
      for (let k = 0; this.held > this.budget && k < stack.length - 1; k++) {
        const f = stack[k]!;
        if (f.data) {
          this.held -= f.data.length;
          pool.release(f.data);
          f.data = null;
        }
      }
    };
    const takeStarts = () => layout.takeStarts();
    push(root, rootData, t.types[root] === OBJ_TREE ? () => (layout.scan(rootData), layout.takeStarts()) : null);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const child = top.kids[top.next++]!;
      let base = top.data;
      let keep = true;
      if (!base) {
        base = this.regenerate(top.i);
        if (top.next < top.kids.length && this.held + base.length <= this.budget) {
          top.data = base;
          this.held += base.length;
        } else keep = false;
      }
      if (top.next === top.kids.length) {
        stack.pop();
        if (top.data) this.held -= top.data.length;
        keep = false;
      }
      const copies = top.starts ? this.copies : undefined;
      const depth = t.depths[top.i]! + 1;
      if (depth > this.maxDepth)
        throw new GitError(`delta chain deeper than ${this.maxDepth} (the most git itself writes); repack with a smaller --depth`, "too-large");
      t.depths[child] = depth;
      const data = applyDelta(base, this.readDelta(child), pool.alloc, copies, this.maxObject);
      layout.base = top.starts;
      layout.baseLength = base.length;
      layout.copies = copies ?? null;
      if (!keep) pool.release(base);
      t.types[child] = t.types[top.i]!;
      this.check(typeName(t.types[child]!), data, t.oids, child, layout);
      layout.base = null;
      layout.copies = null;
      t.resolved[child] = 1;
      this.pacer.tick();
      push(child, data, t.types[child] === OBJ_TREE ? takeStarts : null);
    }
  }

  /** Rebuild a resolved object whose data was dropped, from its chain of bases. */
  private regenerate(i: number): Uint8Array {
    const chain: number[] = [];
    let cur = i;
    while (this.t.bases[cur]! >= 0) {
      chain.push(cur);
      cur = this.t.bases[cur]!;
    }
    let data = this.readBase(cur);
    for (let k = chain.length - 1; k >= 0; k--) {
      const next = applyDelta(data, this.readDelta(chain[k]!), this.pool.alloc);
      this.pool.release(data);
      data = next;
    }
    return data;
  }

  /** The whole object of non-delta entry i, read back from the file into a pooled buffer. */
  private readBase(i: number): Uint8Array {
    const size = this.t.sizes[i]!;
    return inflateExact(this.readCompressed(i), size, this.pool.alloc(size + 1)).subarray(0, size);
  }

  /** The delta data of entry i: valid until the next call (it is applied at once). */
  private readDelta(i: number): Uint8Array {
    const size = this.t.sizes[i]!;
    if (this.deltaScratch.length < size + 1 && size < SCRATCH_MAX) this.deltaScratch = new Uint8Array(Math.max(size + 1, 2 * this.deltaScratch.length));
    return inflateExact(this.readCompressed(i), size, this.deltaScratch);
  }

  /** The compressed bytes of entry i, in a reused buffer (they only live until inflated; the file below them is never rewritten). */
  private readCompressed(i: number): Uint8Array {
    const len = this.t.compLength(i);
    if (this.scratch.length < len) this.scratch = new Uint8Array(Math.max(len, 2 * this.scratch.length));
    const at = this.t.dataOffset(i);
    if (at >= this.winStart && at + len <= this.winEnd) return this.window.subarray(at - this.winStart, at - this.winStart + len);
    if (len <= this.window.length) {
      // Read ahead: a delta's dependants mostly lie just after it (96% of git.git's reads hit).
      const n = Math.min(this.window.length, this.t.end - at);
      readAll(this.fd, this.window.subarray(0, n), at);
      this.winStart = at;
      this.winEnd = at + n;
      return this.window.subarray(0, len);
    }
    const buf = this.scratch.subarray(0, len);
    readAll(this.fd, buf, at);
    return buf;
  }

  private readonly layout = new TreeLayout();
  private readonly copies = new CopyLog();
  /** The last stretch of the temp file read (pass 2 reads one entry at a time; one call per entry was a second of git.git's indexing). */
  private readonly window = new Uint8Array(256 * 1024);
  private winStart = 0;
  private winEnd = 0;
  private scratch = new Uint8Array(64 * 1024);
  private deltaScratch = new Uint8Array(64 * 1024);
  private readonly pool = new BufferPool(16 * 1024 * 1024);
  private readonly pacer = new MemoryPacer();
  private readonly basePacer = new MemoryPacer(4);
}

/** Children lists of OFS deltas, as compressed rows (start[i]..start[i+1] in list). */
function buildChildren(t: EntryTable): { start: Int32Array; list: Int32Array } {
  const n = t.count;
  const start = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) if (t.codes[i] === OBJ_OFS_DELTA) start[t.bases[i]! + 1]!++;
  for (let i = 0; i < n; i++) start[i + 1]! += start[i]!;
  const fill = start.slice(0, n);
  const list = new Int32Array(start[n]!);
  for (let i = 0; i < n; i++) if (t.codes[i] === OBJ_OFS_DELTA) list[fill[t.bases[i]!]!++] = i;
  return { start, list };
}

/** Scratch buffers are reused up to this size; larger objects get their own buffer. */
const SCRATCH_MAX = 64 * 1024 * 1024;
// module-state: scratch (synchronous, reused by every call; see below)
const hasher = new Bun.CryptoHasher("sha1");
const digest = new Uint8Array(64);
const headerBytes = new Uint8Array(32);

function hashInto(oids: Uint8Array, i: number, type: ObjectType, data: Uint8Array): void {
  // "<type> <size>\0" written byte by byte: no string or encoder per object.
  let n = 0;
  for (let k = 0; k < type.length; k++) headerBytes[n++] = type.charCodeAt(k);
  headerBytes[n++] = 0x20;
  const size = String(data.length);
  for (let k = 0; k < size.length; k++) headerBytes[n++] = size.charCodeAt(k);
  headerBytes[n++] = 0;
  hasher.update(headerBytes.subarray(0, n));
  hasher.update(data);
  hasher.digest(digest);
  copyBytes(digest, 0, 20, oids, 20 * i);
}

/** Rewrite the object count and the trailer after appending thin bases; returns the new checksum. */
function rewriteTrailer(fd: number, t: EntryTable): Uint8Array {
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, t.count);
  writeAll(fd, count, 8);
  const h = new Bun.CryptoHasher("sha1");
  const chunk = new Uint8Array(1 << 20);
  for (let p = 0; p < t.end; p += chunk.length) {
    const n = Math.min(chunk.length, t.end - p);
    readAll(fd, chunk.subarray(0, n), p);
    h.update(chunk.subarray(0, n));
  }
  const sum = new Uint8Array(h.digest());
  writeAll(fd, sum, t.end);
  t.checksum = sum;
  return sum;
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

function readAll(fd: number, buf: Uint8Array, position: number): void {
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, position + done);
    if (n === 0) throw new GitError("unexpected end of the temporary pack file");
    done += n;
  }
}
