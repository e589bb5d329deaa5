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
import { type Lines, linesOf } from "./blame-lines.ts";
import { versionLines } from "./blame-versions.ts";
import { parseCommit } from "./object.ts";
import type { ObjectReader, Oid } from "./types.ts";

export { type Lines, linesOf };

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

/**
 * Runs of suspect lines, as triples: `count` lines from line `final` of the file, at line `at`
 * of the suspect's blob. Typed triples, not objects: a long walk splits and hands on thousands of
 * runs at every commit.
 */
class Entries {
  data: Int32Array;
  length = 0;

  constructor(capacity = 4) {
    this.data = new Int32Array(3 * capacity);
  }

  /** Empty, with room for `capacity` runs. */
  reset(capacity: number): Entries {
    this.length = 0;
    // Room to spare: the runs of a walk grow a few at a time, and a table just short of the next need is no use.
    if (this.data.length < 3 * capacity) this.data = new Int32Array(3 * Math.ceil(capacity * 1.5 + 16));
    return this;
  }

  push(final: number, at: number, count: number): void {
    if (3 * (this.length + 1) > this.data.length) this.grow(1);
    const i = 3 * this.length++;
    this.data[i] = final;
    this.data[i + 1] = at;
    this.data[i + 2] = count;
  }

  append(other: Entries): void {
    if (3 * (this.length + other.length) > this.data.length) this.grow(other.length);
    this.data.set(other.data.subarray(0, 3 * other.length), 3 * this.length);
    this.length += other.length;
  }

  private grow(extra: number): void {
    const next = new Int32Array(Math.max(2 * this.data.length, 3 * (this.length + extra)));
    next.set(this.data.subarray(0, 3 * this.length));
    this.data = next;
  }
}

interface Suspect {
  commit: Oid;
  blob: Oid;
  time: number;
  seq: number;
  entries: Entries;
}

/**
 * Splits `left` by the runs a diff keeps (keptRuns: triples of line in the suspect's blob, line in
 * the parent's, count): what lies in a run passes to the parent at its line there, the rest stays.
 */
function splitEntries(left: Entries, runs: Int32Array, passed: Entries, kept: Entries): void {
  const nr = runs.length / 3;
  const e = left.data;
  for (let q = 0; q < 3 * left.length; q += 3) {
    const final = e[q]!;
    const at = e[q + 1]!;
    const end = at + e[q + 2]!;
    // The first run ending after `at`.
    let lo = 0;
    let hi = nr;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (runs[3 * mid]! + runs[3 * mid + 2]! <= at) lo = mid + 1;
      else hi = mid;
    }
    let pos = at;
    for (let r = lo; pos < end; ) {
      const rb = r < nr ? runs[3 * r]! : end;
      if (pos < rb) {
        const stop = Math.min(end, rb);
        kept.push(final + (pos - at), pos, stop - pos);
        pos = stop;
        continue;
      }
      const stop = Math.min(end, rb + runs[3 * r + 2]!);
      passed.push(final + (pos - at), runs[3 * r + 1]! + (pos - rb), stop - pos);
      pos = stop;
      r++;
    }
  }
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
 * The lines of `b` a shortest edit script from `a` keeps (Myers, common prefix and suffix first),
 * as runs: triples (line in b, line in a, count) in b's order, runs that continue one another
 * joined; null when more than `maxEdits` edits would be needed. Why runs and not a line map: the
 * walk splits its suspects' runs by them, in time that grows with the runs, not the lines.
 */
export function keptRuns(a: Float64Array, b: Float64Array, maxEdits: number): Int32Array | null {
  const pre = commonKeys(a, 0, b, 0, Math.min(a.length, b.length));
  const suf = commonTail(a, b, Math.min(a.length, b.length) - pre);
  const out = new RunList();
  if (pre) out.add(0, 0, pre);
  const n = a.length - pre - suf;
  const m = b.length - pre - suf;
  if (n > 0 && m > 0) {
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
    // The snakes, found last to first.
    const snakes: number[] = [];
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
      const len = Math.min(x - (down ? px : px + 1), y - (down ? py + 1 : py));
      if (len > 0) {
        x -= len;
        y -= len;
        snakes.push(y, x, len);
      }
      if (down) y--;
      else x--;
    }
    if (x > 0 && y > 0) snakes.push(0, 0, Math.min(x, y));
    for (let i = snakes.length - 3; i >= 0; i -= 3) out.add(pre + snakes[i]!, pre + snakes[i + 1]!, snakes[i + 2]!);
  }
  if (suf) out.add(b.length - suf, a.length - suf, suf);
  return out.done();
}

/** Growable (line in b, line in a, count) triples, a run continuing the last joined to it. */
class RunList {
  private runs = new Int32Array(3 * 8);
  private n = 0;
  add(bAt: number, aAt: number, count: number): void {
    const i = 3 * (this.n - 1);
    if (this.n > 0 && this.runs[i]! + this.runs[i + 2]! === bAt && this.runs[i + 1]! + this.runs[i + 2]! === aAt) {
      this.runs[i + 2]! += count;
      return;
    }
    if (3 * (this.n + 1) > this.runs.length) {
      const next = new Int32Array(2 * this.runs.length);
      next.set(this.runs);
      this.runs = next;
    }
    this.runs.set([bAt, aAt, count], 3 * this.n++);
  }
  done(): Int32Array {
    return this.runs.subarray(0, 3 * this.n);
  }
}

/** Bytes of a key array, to compare runs of keys natively (keys are finite and never -0: equal bytes, equal keys). */
const keyBytes = (k: Float64Array) => Buffer.from(k.buffer, k.byteOffset, k.byteLength);

/** Keys `a[ai..]` and `b[bi..]` have in common from the start, at most `max`. */
function commonKeys(a: Float64Array, ai: number, b: Float64Array, bi: number, max: number): number {
  if (max <= 0) return 0;
  const ab = keyBytes(a);
  const bb = keyBytes(b);
  let good = 0;
  let step = 64;
  while (good < max) {
    const len = Math.min(step, max - good);
    if (ab.compare(bb, 8 * (bi + good), 8 * (bi + good + len), 8 * (ai + good), 8 * (ai + good + len)) === 0) {
      good += len;
      step *= 4;
      continue;
    }
    let lo = 0;
    let hi = len;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (ab.compare(bb, 8 * (bi + good), 8 * (bi + good + mid), 8 * (ai + good), 8 * (ai + good + mid)) === 0) lo = mid;
      else hi = mid;
    }
    return a[ai + good + lo] === b[bi + good + lo] ? good + lo + 1 : good + lo;
  }
  return good;
}

/** Keys `a` and `b` have in common at their ends, at most `max`. */
function commonTail(a: Float64Array, b: Float64Array, max: number): number {
  let good = 0;
  let step = 64;
  const ab = keyBytes(a);
  const bb = keyBytes(b);
  while (good < max) {
    const len = Math.min(step, max - good);
    const ae = a.length - good;
    const be = b.length - good;
    if (ab.compare(bb, 8 * (be - len), 8 * be, 8 * (ae - len), 8 * ae) === 0) {
      good += len;
      step *= 4;
      continue;
    }
    for (let i = 0; i < len; i++) if (a[ae - 1 - i] !== b[be - 1 - i]) return good + i;
    return good + len;
  }
  return good;
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

  const versions = versionLines(reader);
  // Blobs counted against the read budget: true when readable, false when not (too large, not a blob).
  const counted = new Map<Oid, boolean>();
  let readLeft = limits.maxReadBytes;
  let spent = false;
  /** The lines of blob `oid` (null: too large, not a blob, or past the read budget); `near`: the blob it is compared with. */
  const readLines = async (oid: Oid, near?: Oid): Promise<Lines | null> => {
    const ok = counted.get(oid);
    if (ok === false) return null;
    const got = await versions.read(oid, limits.maxBytes, near);
    if (ok === undefined) {
      if (got && got.size > readLeft) {
        spent = true;
        return null;
      }
      if (got) readLeft -= got.size;
      counted.set(oid, !!got);
    }
    return got ? got.lines : null;
  };

  const first = await reader.read(top.oid);
  if (!first) return { kind: "missing" };
  if (isBinaryBlob(first.data)) return { kind: "binary" };
  readLeft -= first.data.length;
  counted.set(top.oid, true);
  const total = ((await versions.read(top.oid, limits.maxBytes))?.lines ?? linesOf(first.data)).keys.length;
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
  // Entries no suspect holds any more, reused (a walk makes two per commit: fresh typed arrays for each cost more than the split).
  const spare: Entries[] = [];
  const newEntries = (capacity: number): Entries => spare.pop()?.reset(capacity) ?? new Entries(capacity);
  const free = (e: Entries) => {
    if (spare.length < 8) spare.push(e);
  };
  /** Hands `entries` to the suspect `commit` (which takes them, or copies them when it has entries already). */
  const hand = async (commit: Oid, blob: Oid, entries: Entries) => {
    const known = pending.get(commit);
    if (!entries.length || known) {
      if (known) known.entries.append(entries);
      free(entries);
      return;
    }
    const s: Suspect = { commit, blob, time: (await loadCommit(commit)).committer.timestamp, seq: seq++, entries };
    pending.set(commit, s);
    push(s);
  };
  const blame = (s: Suspect, entries: Entries = s.entries) => {
    const e = entries.data;
    for (let q = 0; q < 3 * entries.length; q += 3) blamed.fill(s.commit, e[q]!, e[q]! + e[q + 2]!);
  };

  /** Commit infos that known blames brought (their commits need not be read again). */
  const knownInfo = new Map<Oid, BlameCommitInfo>();
  let reused = 0;
  /** Blames `s`'s lines by the known blame of its commit: false when there is none (or it does not fit). */
  const fromKnown = async (s: Suspect): Promise<boolean> => {
    if (!knownBlames || s.commit === start) return false;
    const k = await knownBlames(s.commit);
    if (!k) return false;
    const d = s.entries.data;
    for (let q = 0; q < 3 * s.entries.length; q += 3) if (d[q + 1]! + d[q + 2]! > k.lines) return false;
    for (let q = 0; q < 3 * s.entries.length; q += 3) {
      const [final, at, count] = [d[q]!, d[q + 1]!, d[q + 2]!];
      // The range holding line at + 1 (1-based), then on through the run.
      let lo = 0;
      let hi = k.ranges.length;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (k.ranges[mid]!.start <= at + 1) lo = mid;
        else hi = mid;
      }
      for (let i = 0, r = lo; i < count; i++) {
        const line = at + i + 1;
        while (r < k.ranges.length - 1 && k.ranges[r]!.start + k.ranges[r]!.count <= line) r++;
        const commit = k.ranges[r]!.commit;
        blamed[final + i] = commit;
        if (!knownInfo.has(commit) && k.commits[commit]) knownInfo.set(commit, k.commits[commit]!);
      }
    }
    reused++;
    return true;
  };

  const all = newEntries(1);
  all.push(0, 0, total);
  await hand(start, top.oid, all);
  let walked = 0;
  let truncated = false;
  while (heap.length) {
    const s = pop();
    pending.delete(s.commit);
    versions.settle?.();
    if (await fromKnown(s)) {
      free(s.entries);
      continue;
    }
    if (walked >= limits.maxCommits || spent) {
      truncated = true;
      blame(s);
      free(s.entries);
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
        const theirs = await readLines(p.blob, s.blob);
        if (!theirs) continue;
        const runs = keptRuns(theirs.keys, mine.keys, limits.maxEdits);
        if (!runs) continue;
        // A run of `left` splits at most twice per kept run it meets.
        const passed = newEntries(left.length + runs.length / 3);
        const kept = newEntries(left.length + runs.length / 3);
        splitEntries(left, runs, passed, kept);
        free(left);
        await hand(p.commit, p.blob, passed);
        left = kept;
      }
    }
    blame(s, left);
    free(left);
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
