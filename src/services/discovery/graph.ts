// The contribution graph's pure pieces: the per-day count blobs the store keeps, the JSON writer of
// the answer (SPEC §2.9), and the cache of written answers.
//
// Storage: one row per (person, UTC day) whose blob holds 8 bytes per repository credited that
// day, (slot, commits) as big-endian uint32s; a slot is the small number a person's repository
// got when it was first credited (never reused). A year is at most 365 rows whatever the number
// of repositories.
//
// Why the answer is written as JSON bytes here instead of as objects: a busy year names tens of
// thousands of (day, repository) entries (1.4 MB for 50,000 commits across 200 repositories);
// building an object per entry, then a string from them, then checking them against the response
// schema cost more than the whole budget (bench/README.md). The bytes are written from one
// encoded prefix per repository; the tests parse real answers and check them against
// `ContributionGraph` (test/unit/discovery, test/service/discovery, test/blackbox/discovery).

const DAY_MS = 86_400_000;
/** Bytes of one (slot, commits) entry of a day's blob. */
const ENTRY = 8;
/** The largest count an entry holds. */
const MAX_COUNT = 0xffff_ffff;

/** A day's blob with `add` more commits in `slot` (a new entry when the slot is not there yet). */
export function addCount(counts: Uint8Array | null, slot: number, add: number): Uint8Array {
  const old = counts ?? new Uint8Array(0);
  const view = new DataView(old.buffer, old.byteOffset, old.byteLength);
  for (let at = 0; at + ENTRY <= old.byteLength; at += ENTRY) {
    if (view.getUint32(at) !== slot) continue;
    const out = old.slice();
    new DataView(out.buffer).setUint32(at + 4, Math.min(MAX_COUNT, view.getUint32(at + 4) + add));
    return out;
  }
  const out = new Uint8Array(old.byteLength + ENTRY);
  out.set(old);
  const v = new DataView(out.buffer);
  v.setUint32(old.byteLength, slot);
  v.setUint32(old.byteLength + 4, Math.min(MAX_COUNT, add));
  return out;
}

/** The (slot, commits) entries of a day's blob (tests and tools; the writer reads the bytes in place). */
export function countsOf(counts: Uint8Array): [slot: number, commits: number][] {
  const view = new DataView(counts.buffer, counts.byteOffset, counts.byteLength);
  const out: [number, number][] = [];
  for (let at = 0; at + ENTRY <= counts.byteLength; at += ENTRY) out.push([view.getUint32(at), view.getUint32(at + 4)]);
  return out;
}

/** `YYYY-MM-DD` of a day number (days since 1970-01-01). */
export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** A repository a person has credited commits in, as it is now. */
export interface GraphRepo {
  slot: number;
  isPublic: boolean;
  org: string;
  name: string;
}

/** How many repositories the packed sort key ranks: (commits < 2^32, rank) fit below 2^53. */
const RANK_SPACE = 2 ** 21;
/** Room kept ahead of the days for the answer's head (under 100 bytes), written last: it carries the total. */
const HEAD_ROOM = 128;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;
const utf8 = new TextEncoder();

/**
 * Where answers are written: one buffer reused by every call of a context (writing is
 * synchronous; the GraphCache keeps it), grown as needed; the answer is copied out at its exact
 * length. A buffer grown past KEEP_BYTES is dropped after the call that needed it.
 */
export interface Scratch {
  buf: Uint8Array;
}
const KEEP_BYTES = 8 << 20;

/** A fresh scratch buffer. */
export function newScratch(): Scratch {
  return { buf: new Uint8Array(1 << 16) };
}

/** Writes ASCII text and pre-encoded pieces into the scratch buffer. */
class Writer {
  buf: Uint8Array;
  at = HEAD_ROOM;

  constructor(private readonly scratch: Scratch) {
    this.buf = scratch.buf;
  }

  /** Makes room for `n` more bytes. */
  room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.at + n));
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
  }

  /** Writes ASCII text (room already made). */
  ascii(s: string): void {
    const { buf } = this;
    let at = this.at;
    for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
    this.at = at;
  }

  /** Writes a non-negative integer in decimal (room already made), digits from the last. */
  int(n: number): void {
    const { buf } = this;
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    let at = (this.at += digits);
    while (n >= 10) {
      const q = Math.floor(n / 10);
      buf[--at] = 0x30 + n - q * 10;
      n = q;
    }
    buf[--at] = 0x30 + n;
  }

  /** The bytes from `start` as an answer of their own; the buffer is kept for the next call unless it grew too big. */
  take(start: number): Uint8Array<ArrayBuffer> {
    const out = this.buf.slice(start, this.at);
    if (this.buf.length <= KEEP_BYTES) this.scratch.buf = this.buf;
    return out;
  }
}

/**
 * The answer (SPEC §2.9) as UTF-8 JSON: the days of `days` (ascending; a blob per day) with any
 * commits left, each listing its public repositories, most commits first, then by org and name.
 * `withPrivate`: a day's count includes the entries of private repositories (never named) and
 * `private_included` says whether any did; otherwise counts are public work only. Entries whose
 * slot names no current repository (it was deleted) count for nothing. `rankSpace`: tests make it
 * small to take the comparator path.
 */
export function graphJson(
  range: { from: number; to: number },
  repos: GraphRepo[],
  days: [day: number, counts: Uint8Array][],
  withPrivate: boolean,
  rankSpace = RANK_SPACE,
  scratch: Scratch = newScratch(),
): Uint8Array<ArrayBuffer> {
  let slots = 0;
  for (const r of repos) if (r.slot >= slots) slots = r.slot + 1;
  // Per slot: -2 no current repository, -1 private, else the public repository's rank by (org, name).
  const rankOf = new Int32Array(slots).fill(-2);
  const pub = repos.filter((r) => r.isPublic).sort((a, b) => (a.org < b.org ? -1 : a.org > b.org ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const r of repos) if (!r.isPublic) rankOf[r.slot] = -1;
  // Each public repository's entry up to its count, encoded once: {"org":…,"name":…,"count":
  const prefix = new Array<Uint8Array>(pub.length);
  let longest = 0;
  pub.forEach((r, i) => {
    rankOf[r.slot] = i;
    prefix[i] = utf8.encode(`{"org":${JSON.stringify(r.org)},"name":${JSON.stringify(r.name)},"count":`);
    longest = Math.max(longest, prefix[i]!.length);
  });
  // An entry is its prefix, at most 10 digits, "}" and ","; a day's head and tail under 96 bytes.
  const perEntry = longest + 12;
  const w = new Writer(scratch);
  // Per day, one number per public repository: (commits, rank) packed so a numeric sort orders
  // them (fewer commits later, then by rank); past RANK_SPACE public repositories (never in
  // practice) pairs sorted by a comparator.
  const packed = pub.length <= rankSpace;
  let keys = new Float64Array(64);
  let ranks = new Uint32Array(64);
  let commitsOf = new Uint32Array(64);
  let total = 0;
  let privateCounted = false;
  let first = true;
  for (const [day, counts] of days) {
    // Read byte by byte: a DataView (or the blob's .buffer) costs an allocation per day.
    const b = counts;
    const n = counts.byteLength >>> 3;
    if (keys.length < n) [keys, ranks, commitsOf] = [new Float64Array(n), new Uint32Array(n), new Uint32Array(n)];
    let k = 0;
    let live = 0;
    let open = 0;
    for (let at = 0; at < n * ENTRY; at += ENTRY) {
      const slot = ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
      const rank = slot < slots ? rankOf[slot]! : -2;
      if (rank === -2) continue;
      const commits = ((b[at + 4]! << 24) | (b[at + 5]! << 16) | (b[at + 6]! << 8) | b[at + 7]!) >>> 0;
      live += commits;
      if (rank < 0) continue;
      open += commits;
      if (packed) keys[k] = -commits * rankSpace + rank;
      ranks[k] = rank;
      commitsOf[k++] = commits;
    }
    const count = withPrivate ? live : open;
    if (count === 0) continue;
    if (withPrivate && live > open) privateCounted = true;
    total += count;
    if (packed) {
      const sorted = keys.subarray(0, k).sort();
      for (let i = 0; i < k; i++) {
        commitsOf[i] = -Math.floor(sorted[i]! / rankSpace);
        ranks[i] = sorted[i]! + commitsOf[i]! * rankSpace;
      }
    } else {
      const order = Array.from({ length: k }, (_, i) => i).sort((a, b) => commitsOf[b]! - commitsOf[a]! || ranks[a]! - ranks[b]!);
      const [r, c] = [order.map((j) => ranks[j]!), order.map((j) => commitsOf[j]!)];
      ranks.set(r);
      commitsOf.set(c);
    }
    w.room(96 + k * perEntry);
    if (!first) w.buf[w.at++] = COMMA;
    first = false;
    w.ascii(`{"day":${(((day + 4) % 7) + 7) % 7},"date":"${formatDay(day)}","count":${count},"repos":[`);
    const buf = w.buf;
    for (let i = 0; i < k; i++) {
      if (i > 0) buf[w.at++] = COMMA;
      // A byte loop: TypedArray.set costs more than the copy for pieces this short.
      const p = prefix[ranks[i]!]!;
      let at = w.at;
      for (let j = 0; j < p.length; j++) buf[at++] = p[j]!;
      w.at = at;
      w.int(commitsOf[i]!);
      buf[w.at++] = CLOSE_BRACE;
    }
    w.ascii("]}");
  }
  w.room(2);
  w.ascii("]}");
  const head = utf8.encode(`{"from":"${formatDay(range.from)}","to":"${formatDay(range.to)}","total":${total},"private_included":${privateCounted},"days":[`);
  const start = HEAD_ROOM - head.length;
  w.buf.set(head, start);
  return w.take(start);
}

/** A written answer and what it was written from. */
interface Entry {
  /** The person's contribution version and their repositories (slot, visibility, place) then. */
  stamp: string;
  json: Uint8Array<ArrayBuffer>;
}

/**
 * Written answers by (person, range, private work included), least recently used dropped past
 * `maxBytes`. An entry is used only while the stamp it was written under still matches what the
 * request read: the person's contribution version (every credit moves it, in the credit's
 * transaction) and their repositories' slots, visibility, org and name now. So a repository made
 * private, renamed, moved or deleted, or a new credit, is seen by the next request with nothing
 * to invalidate; opting in or out reads under a different key.
 */
export class GraphCache {
  /** The buffer answers are written in (graphJson's scratch), one per context. */
  readonly scratch = newScratch();
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The answer written for `key` under `stamp`, or null. */
  get(key: string, stamp: string): Uint8Array<ArrayBuffer> | null {
    const e = this.entries.get(key);
    if (!e || e.stamp !== stamp) return null;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.json;
  }

  /** Keeps `json` for `key` under `stamp` (nothing when it alone exceeds the bound). */
  set(key: string, stamp: string, json: Uint8Array<ArrayBuffer>): void {
    this.drop(key);
    const size = sizeOf(key, stamp, json);
    if (size > this.maxBytes) return;
    this.entries.set(key, { stamp, json });
    this.bytes += size;
    for (const [k] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k);
    }
  }

  /** Bytes held (tests). */
  get size(): number {
    return this.bytes;
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= sizeOf(key, e.stamp, e.json);
  }
}

/** About what an entry holds: its bytes and its strings. */
function sizeOf(key: string, stamp: string, json: Uint8Array): number {
  return json.byteLength + 2 * (key.length + stamp.length);
}
