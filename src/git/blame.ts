// Blame: which commit last changed each line of a file, the way `git blame` (without -M/-C)
// decides it (blame.c: pass_blame, pass_blame_to_parent, pass_whole_blame).
//
// The lines of the file at the starting commit are the "suspects" of that commit. Commits are
// taken newest first (committer date, as git's queue). For a commit holding suspects:
//   - a parent whose blob at the path is the same takes every suspect line (pass_whole_blame);
//   - otherwise each parent in order (parents with a blob an earlier parent had are skipped)
//     is diffed against the commit's blob, and every suspect line the diff keeps passes to that
//     parent at its line there; the first parent that has a line takes it;
//   - what is left is blamed on the commit.
// A parent without the path (or with a directory or submodule there) takes nothing: renames
// are not followed, so lines of a renamed file are blamed on the commit that renamed it.
//
// Hostile bounds: the file at the start must be text and at most `maxBytes`; a parent's blob
// larger than that is treated as absent; at most `maxCommits` commits are taken and at most
// `maxReadBytes` of blobs read. Past a bound the walk stops and the lines still pending are
// blamed on the commit they had reached (git's "boundary"), and the answer says `truncated`.
import { parseCommit } from "./object.ts";
import type { ObjectReader, Oid } from "./types.ts";

/** What one blame may cost. */
export interface BlameLimits {
  /** The file at the start, and any earlier version read, in bytes at most. */
  maxBytes: number;
  /** Commits taken from the queue at most. */
  maxCommits: number;
  /** Blob bytes read in all at most. */
  maxReadBytes: number;
  /** Edits one line diff may find before the two versions count as unrelated. */
  maxEdits: number;
}

/** Who made a commit and what it says, as a blame shows it. */
export interface BlameCommitInfo {
  sha: Oid;
  author: { name: string; email: string };
  /** The first line of the message. */
  summary: string;
  /** Author time, epoch milliseconds. */
  authored_at: number;
}

/** Lines `start`..`start + count - 1` (1-based) were last changed by `commit`. */
export interface BlameRange {
  start: number;
  count: number;
  commit: Oid;
}

/**
 * A blame already known for a commit (of the same path, not truncated): which commit each of its
 * lines is blamed on. Exact to reuse: the blame of a commit's lines depends on its own history
 * alone, whoever asks.
 */
export interface KnownBlame {
  lines: number;
  ranges: BlameRange[];
  commits: Record<Oid, BlameCommitInfo>;
}

/** The known blame of the path at `commit`, or null (looked up for each commit the walk reaches). */
export type KnownBlames = (commit: Oid) => KnownBlame | null | Promise<KnownBlame | null>;

/** How a blame went. */
export type BlameOutcome =
  | {
      kind: "ok";
      /** Lines of the file. */
      lines: number;
      ranges: BlameRange[];
      commits: Record<Oid, BlameCommitInfo>;
      /** A bound stopped the walk: the lines still pending are blamed on the commit they had reached. */
      truncated: boolean;
      /** Commits taken from the queue. */
      walked: number;
      /** Commits whose known blame answered for the lines that reached them (the walk stopped there). */
      reused?: number;
      /** Answered from a stored blame of this very commit (no walk). */
      stored?: boolean;
    }
  | { kind: "missing" }
  | { kind: "not_file" }
  | { kind: "binary" }
  | { kind: "too_large"; size: number };

/** A run of suspect lines: `count` lines from line `final` of the file, at line `at` of the suspect's blob. */
interface Entry {
  final: number;
  at: number;
  count: number;
}

interface Suspect {
  commit: Oid;
  blob: Oid;
  time: number;
  seq: number;
  entries: Entry[];
}

const encoder = new TextEncoder();

/**
 * The entry named `name` in raw tree bytes, without parsing the others ("mode SP name NUL oid"
 * per entry): the mode and id, or null.
 */
function findInTree(data: Uint8Array, name: Uint8Array): { mode: string; oid: Oid } | null {
  let pos = 0;
  while (pos < data.length) {
    const sp = data.indexOf(0x20, pos);
    if (sp < 0) return null;
    const nul = data.indexOf(0, sp + 1);
    if (nul < 0 || nul + 21 > data.length) return null;
    if (nul - sp - 1 === name.length) {
      let same = true;
      for (let i = 0; i < name.length; i++)
        if (data[sp + 1 + i] !== name[i]) {
          same = false;
          break;
        }
      if (same) {
        let mode = "";
        for (let i = pos; i < sp; i++) mode += String.fromCharCode(data[i]!);
        return { mode, oid: Buffer.from(data.subarray(nul + 1, nul + 21)).toString("hex") };
      }
    }
    pos = nul + 21;
  }
  return null;
}

/** A regular file or symlink mode (what blame reads as lines). */
const isBlobMode = (mode: string) => mode === "100644" || mode === "100755" || mode === "120000" || mode === "100664";

/** Whether bytes look binary the way git decides: a NUL in the first 8,000 bytes. */
export function isBinaryBlob(data: Uint8Array): boolean {
  return data.subarray(0, 8000).includes(0);
}

/**
 * A version of the file as lines: its bytes, where each line starts (one more entry: the end),
 * and a key per line (equal lines, equal keys; two 32-bit hashes of the line's bytes, its "\n"
 * included, folded into one exact double, so a collision needs both to agree).
 */
export interface Lines {
  data: Buffer;
  starts: Int32Array;
  keys: Float64Array;
}

/** The key of bytes [from, to) of `d`. */
function lineKey(d: Uint8Array, from: number, to: number): number {
  let h1 = 0x811c9dc5 | 0;
  let h2 = (0x9747b28c ^ (to - from)) | 0;
  for (let i = from; i < to; i++) {
    const b = d[i]!;
    h1 = Math.imul(h1 ^ b, 0x01000193);
    h2 = Math.imul(h2 ^ b, 0x5bd1e995);
    h2 ^= h2 >>> 13;
  }
  return (h1 >>> 0) * 0x200000 + (h2 & 0x1fffff);
}

/** Growable line starts and keys. */
class LineBuilder {
  starts: Int32Array;
  keys: Float64Array;
  n = 0;
  constructor(capacity: number) {
    this.starts = new Int32Array(capacity + 1);
    this.keys = new Float64Array(capacity);
  }
  private room(extra: number): void {
    if (this.n + extra < this.keys.length) return;
    const size = Math.max(2 * this.keys.length, this.n + extra + 16);
    const starts = new Int32Array(size + 1);
    starts.set(this.starts.subarray(0, this.n));
    const keys = new Float64Array(size);
    keys.set(this.keys.subarray(0, this.n));
    this.starts = starts;
    this.keys = keys;
  }
  /** Lines of `d` from byte `from` to `to` (at line starts), hashed one by one. */
  hash(d: Uint8Array, from: number, to: number): void {
    while (from < to) {
      const nl = d.indexOf(10, from);
      const end = nl < 0 || nl >= to ? to : nl + 1;
      this.room(1);
      this.starts[this.n] = from;
      this.keys[this.n++] = lineKey(d, from, end);
      from = end;
    }
  }
  /** Lines `from`..`to`-1 of `c`, found `shift` bytes further on in this version. */
  copy(c: Lines, from: number, to: number, shift: number): void {
    this.room(to - from);
    this.keys.set(c.keys.subarray(from, to), this.n);
    const s = this.starts;
    for (let i = from, j = this.n; i < to; i++, j++) s[j] = c.starts[i]! + shift;
    this.n += to - from;
  }
  done(data: Buffer): Lines {
    this.starts[this.n] = data.length;
    return { data, starts: this.starts.subarray(0, this.n + 1), keys: this.keys.subarray(0, this.n) };
  }
}

/** Bytes `a[ai..]` and `b[bi..]` have in common from the start (compared natively, galloping). */
function commonLength(a: Buffer, ai: number, b: Buffer, bi: number): number {
  const max = Math.min(a.length - ai, b.length - bi);
  let good = 0;
  let step = 256;
  while (good < max) {
    const len = Math.min(step, max - good);
    if (a.compare(b, bi + good, bi + good + len, ai + good, ai + good + len) === 0) {
      good += len;
      step *= 4;
      continue;
    }
    // The first difference is in [good, good + len): halve until it is found.
    let lo = 0;
    let hi = len;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (a.compare(b, bi + good + lo, bi + good + mid, ai + good + lo, ai + good + mid) === 0) lo = mid;
      else hi = mid;
    }
    return a[ai + good + lo] === b[bi + good + lo] ? good + lo + 1 : good + lo;
  }
  return good;
}

/** Index of the last line of `c` starting at or before byte `at` (binary search). */
function lineAt(c: Lines, at: number): number {
  let lo = 0;
  let hi = c.keys.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (c.starts[mid]! <= at) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Lines tried on each side to find where two versions agree again after a difference. */
const RESYNC = 8;

/**
 * The lines of `data`. With `near` (a nearby version, usually the child's), lines found
 * byte-for-byte in it at the same order take its keys without being hashed again: runs of equal
 * bytes are found natively, and only the lines around each difference are hashed. Keys do not
 * depend on the alignment chosen here (a copied line is byte-equal to the one it copies); only
 * the work does.
 */
export function linesOf(data: Uint8Array, near?: Lines): Lines {
  const d = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (!near || near.keys.length === 0) {
    const out = new LineBuilder(near?.keys.length ?? 64);
    out.hash(d, 0, d.length);
    return out.done(d);
  }
  const c = near;
  const cn = c.keys.length;
  const out = new LineBuilder(cn + 16);
  let pi = 0;
  let cl = 0;
  while (pi < d.length) {
    if (cl < cn) {
      const co = c.starts[cl]!;
      const m = commonLength(d, pi, c.data, co);
      // Whole lines of c inside the common run (a last line without "\n" only when both end there).
      let cl2 = lineAt(c, co + m);
      if (c.starts[cl2]! > co + m || cl2 < cl) cl2 = cl;
      else if (cl2 < cn && c.starts[cl2 + 1]! <= co + m) cl2++;
      if (cl2 === cn && co + m === c.data.length && pi + m !== d.length && c.data[c.data.length - 1] !== 10) cl2--;
      if (cl2 > cl) {
        out.copy(c, cl, cl2, pi - co);
        pi += c.starts[cl2]! - co;
        cl = cl2;
        continue;
      }
    }
    if (cl >= cn) break;
    // Line starts of the next few lines here, then the nearest (a, b) where line +a here starts
    // what line cl + b of c starts, for at least one whole line of c.
    const mine: number[] = [pi];
    for (let k = 0; k < RESYNC && mine[k]! < d.length; k++) {
      const nl = d.indexOf(10, mine[k]!);
      mine.push(nl < 0 ? d.length : nl + 1);
    }
    let found: [number, number] | null = null;
    for (let sum = 1; sum <= 2 * RESYNC && !found; sum++) {
      for (let a = 0; a <= sum && !found; a++) {
        const b = sum - a;
        if (a >= mine.length - 1 || cl + b >= cn) continue;
        const at = mine[a]!;
        const cAt = c.starts[cl + b]!;
        const lineLen = c.starts[cl + b + 1]! - cAt;
        if (at + lineLen <= d.length && d.compare(c.data, cAt, cAt + lineLen, at, at + lineLen) === 0) found = [a, b];
      }
    }
    if (!found) break;
    const [a, b] = found;
    out.hash(d, pi, mine[a]!);
    pi = mine[a]!;
    cl += b;
  }
  out.hash(d, pi, d.length);
  return out.done(d);
}

/**
 * For each line of `b`, its line in `a` when a shortest edit script (Myers, common prefix and
 * suffix first) keeps it, else -1; null when more than `maxEdits` edits would be needed.
 */
export function keptLines(a: Float64Array, b: Float64Array, maxEdits: number): Int32Array | null {
  const map = new Int32Array(b.length).fill(-1);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) {
    map[pre] = pre;
    pre++;
  }
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) {
    map[b.length - 1 - suf] = a.length - 1 - suf;
    suf++;
  }
  const n = a.length - pre - suf;
  const m = b.length - pre - suf;
  if (n === 0 || m === 0) return map;
  const max = Math.min(n + m, maxEdits);
  const v = new Int32Array(2 * max + 2);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice(max - d, max + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[max + k - 1]! < v[max + k + 1]!) ? v[max + k + 1]! : v[max + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[pre + x] === b[pre + y]) {
        x++;
        y++;
      }
      v[max + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return null;
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d]!;
    const at = (k: number) => prev[k + d]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const pk = down ? k + 1 : k - 1;
    const px = at(pk);
    const py = px - pk;
    while (x > (down ? px : px + 1) && y > (down ? py + 1 : py)) {
      x--;
      y--;
      map[pre + y] = pre + x;
    }
    if (down) y--;
    else x--;
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    map[pre + y] = pre + x;
  }
  return map;
}

/** The blame of `path` (its components) in commit `start`, within `limits`. */
export async function blameFile(
  reader: ObjectReader,
  start: Oid,
  path: readonly string[],
  limits: BlameLimits,
  tick?: () => Promise<void>,
  knownBlames?: KnownBlames,
): Promise<BlameOutcome> {
  const names = path.map((p) => encoder.encode(p));
  // Per level of the path, the entry a tree id holds (consecutive commits share most trees).
  const levels = names.map(() => new Map<Oid, { mode: string; oid: Oid } | null>());
  const commits = new Map<Oid, ReturnType<typeof parseCommit>>();
  const loadCommit = async (oid: Oid) => {
    let c = commits.get(oid);
    if (!c) {
      const obj = await reader.read(oid);
      if (!obj || obj.type !== "commit") throw new Error(`blame: commit ${oid} is missing`);
      c = parseCommit(obj.data);
      commits.set(oid, c);
    }
    return c;
  };
  /** The entry at the path in a tree, or null. */
  const entryAt = async (tree: Oid): Promise<{ mode: string; oid: Oid } | null> => {
    let current: { mode: string; oid: Oid } = { mode: "40000", oid: tree };
    for (let i = 0; i < names.length; i++) {
      if (current.mode !== "40000" && current.mode !== "040000") return null;
      const cache = levels[i]!;
      let e = cache.get(current.oid);
      if (e === undefined) {
        const obj = await reader.read(current.oid);
        e = obj && obj.type === "tree" ? findInTree(obj.data, names[i]!) : null;
        if (cache.size > 4096) cache.clear();
        cache.set(current.oid, e);
      }
      if (!e) return null;
      current = e;
    }
    return current;
  };

  const top = await entryAt((await loadCommit(start)).tree);
  if (!top) return { kind: "missing" };
  if (!isBlobMode(top.mode)) return { kind: "not_file" };
  const head = await reader.readHeader(top.oid);
  if (!head) return { kind: "missing" };
  if (head.size > limits.maxBytes) return { kind: "too_large", size: head.size };

  // Lines of recently read blobs (a blob is read as a parent, then again as the next suspect).
  const known = new Map<Oid, Lines | null>();
  let readLeft = limits.maxReadBytes;
  let spent = false;
  /** The lines of blob `oid` (null: too large, not a blob, or past the read budget), hashed against `near`. */
  const readLines = async (oid: Oid, near?: Lines): Promise<Lines | null> => {
    const hit = known.get(oid);
    if (hit !== undefined) {
      known.delete(oid);
      known.set(oid, hit);
      return hit;
    }
    const h = await reader.readHeader(oid);
    let lines: Lines | null = null;
    if (h && h.type === "blob" && h.size <= limits.maxBytes) {
      if (h.size > readLeft) {
        spent = true;
        return null;
      }
      readLeft -= h.size;
      const obj = await reader.read(oid);
      if (obj) lines = linesOf(obj.data, near);
    }
    known.set(oid, lines);
    if (known.size > 32) known.delete(known.keys().next().value!);
    return lines;
  };

  const first = await reader.read(top.oid);
  if (!first) return { kind: "missing" };
  if (isBinaryBlob(first.data)) return { kind: "binary" };
  readLeft -= first.data.length;
  const finalLines = linesOf(first.data);
  known.set(top.oid, finalLines);
  const total = finalLines.keys.length;
  /** The commit each line of the file is blamed on. */
  const blamed = new Array<Oid | undefined>(total);
  if (total === 0) return { kind: "ok", lines: 0, ranges: [], commits: {}, truncated: false, walked: 0 };

  // The queue: pending suspects by commit, newest committer date first (ties: first queued).
  const pending = new Map<Oid, Suspect>();
  const heap: Suspect[] = [];
  let seq = 0;
  const before = (p: Suspect, q: Suspect) => p.time > q.time || (p.time === q.time && p.seq < q.seq);
  const push = (s: Suspect) => {
    heap.push(s);
    for (let i = heap.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!before(heap[i]!, heap[up]!)) break;
      [heap[i], heap[up]] = [heap[up]!, heap[i]!];
      i = up;
    }
  };
  const pop = (): Suspect => {
    const out = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < heap.length && before(heap[l]!, heap[best]!)) best = l;
        if (r < heap.length && before(heap[r]!, heap[best]!)) best = r;
        if (best === i) break;
        [heap[i], heap[best]] = [heap[best]!, heap[i]!];
        i = best;
      }
    }
    return out;
  };
  const hand = async (commit: Oid, blob: Oid, entries: Entry[]) => {
    if (!entries.length) return;
    const known = pending.get(commit);
    if (known) {
      known.entries.push(...entries);
      return;
    }
    const s: Suspect = { commit, blob, time: (await loadCommit(commit)).committer.timestamp, seq: seq++, entries };
    pending.set(commit, s);
    push(s);
  };
  const blame = (s: Suspect, entries: Entry[] = s.entries) => {
    for (const e of entries) for (let i = 0; i < e.count; i++) blamed[e.final + i] = s.commit;
  };

  /** Commit infos that known blames brought (their commits need not be read again). */
  const knownInfo = new Map<Oid, BlameCommitInfo>();
  let reused = 0;
  /** Blames `s`'s lines by the known blame of its commit: false when there is none (or it does not fit). */
  const fromKnown = async (s: Suspect): Promise<boolean> => {
    if (!knownBlames || s.commit === start) return false;
    const k = await knownBlames(s.commit);
    if (!k) return false;
    for (const e of s.entries) if (e.at + e.count > k.lines) return false;
    for (const e of s.entries) {
      // The range holding line e.at + 1 (1-based), then on through the run.
      let lo = 0;
      let hi = k.ranges.length;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (k.ranges[mid]!.start <= e.at + 1) lo = mid;
        else hi = mid;
      }
      for (let i = 0, r = lo; i < e.count; i++) {
        const line = e.at + i + 1;
        while (r < k.ranges.length - 1 && k.ranges[r]!.start + k.ranges[r]!.count <= line) r++;
        const commit = k.ranges[r]!.commit;
        blamed[e.final + i] = commit;
        if (!knownInfo.has(commit) && k.commits[commit]) knownInfo.set(commit, k.commits[commit]!);
      }
    }
    reused++;
    return true;
  };

  await hand(start, top.oid, [{ final: 0, at: 0, count: total }]);
  let walked = 0;
  let truncated = false;
  while (heap.length) {
    const s = pop();
    pending.delete(s.commit);
    if (await fromKnown(s)) continue;
    if (walked >= limits.maxCommits || spent) {
      truncated = true;
      blame(s);
      continue;
    }
    walked++;
    if (tick) await tick();
    const c = await loadCommit(s.commit);
    // The parents' blobs at the path (null: absent there, or not a file).
    const parents: { commit: Oid; blob: Oid }[] = [];
    let whole: { commit: Oid; blob: Oid } | null = null;
    for (const p of c.parents) {
      const e = await entryAt((await loadCommit(p)).tree);
      if (!e || !isBlobMode(e.mode)) continue;
      if (e.oid === s.blob) {
        whole = { commit: p, blob: e.oid };
        break;
      }
      if (!parents.some((q) => q.blob === e.oid)) parents.push({ commit: p, blob: e.oid });
    }
    if (whole) {
      await hand(whole.commit, whole.blob, s.entries);
      continue;
    }
    let left = s.entries;
    if (parents.length) {
      const mine = await readLines(s.blob);
      for (const p of parents) {
        if (!left.length || !mine) break;
        const theirs = await readLines(p.blob, mine);
        if (!theirs) continue;
        const map = keptLines(theirs.keys, mine.keys, limits.maxEdits);
        if (!map) continue;
        const passed: Entry[] = [];
        const kept: Entry[] = [];
        for (const e of left) {
          // Split the run where lines change between kept and not, or stop being consecutive there.
          let i = 0;
          while (i < e.count) {
            const at = map[e.at + i]!;
            let j = i + 1;
            if (at < 0) {
              while (j < e.count && map[e.at + j]! < 0) j++;
              kept.push({ final: e.final + i, at: e.at + i, count: j - i });
            } else {
              while (j < e.count && map[e.at + j] === at + (j - i)) j++;
              passed.push({ final: e.final + i, at, count: j - i });
            }
            i = j;
          }
        }
        await hand(p.commit, p.blob, passed);
        left = kept;
      }
    }
    blame(s, left);
  }

  // A version left unread for the budget blamed its lines on a later commit.
  if (spent) truncated = true;
  const ranges: BlameRange[] = [];
  for (let i = 0; i < total; ) {
    const commit = blamed[i]!;
    let j = i + 1;
    while (j < total && blamed[j] === commit) j++;
    ranges.push({ start: i + 1, count: j - i, commit });
    i = j;
  }
  const info: Record<Oid, BlameCommitInfo> = {};
  for (const r of ranges) {
    if (info[r.commit]) continue;
    const given = knownInfo.get(r.commit);
    if (given) {
      info[r.commit] = given;
      continue;
    }
    const c = await loadCommit(r.commit);
    const nl = c.message.indexOf("\n");
    info[r.commit] = {
      sha: r.commit,
      author: { name: c.author.name, email: c.author.email },
      summary: (nl < 0 ? c.message : c.message.slice(0, nl)).trim(),
      authored_at: c.author.timestamp * 1000,
    };
  }
  return { kind: "ok", lines: total, ranges, commits: info, truncated, walked, ...(reused ? { reused } : {}) };
}
