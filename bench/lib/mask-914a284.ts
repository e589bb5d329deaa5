// main's src/services/ci/mask.ts at 914a284 (tables of 64 KiB each, allocated by every Masker), kept verbatim as the
// baseline of bench/masking.ts --baseline-tables (bench/README.md §44). Not used by svc.
// Masking secrets in job logs (issue 29): every secret value, and the forms a script is likely
// to print it in (each line of a multi-line value, base64 at the three byte alignments, base64url,
// URL-encoded, JSON-escaped), becomes `***`. Streaming: `push` answers the text that is safe to
// send now and holds back the longest tail that could still be the start of a secret, so a value
// printed across two writes (or two log chunks) is masked too; `flush` ends the stream. Pure (no
// I/O): the runner agent masks as it streams, the server masks each append again.
//
// Matching is leftmost-longest over UTF-16 code units: one pass with a table of the forms' first
// two code units (Masker below); the same pass finds the held tail.

/** What replaces a secret in a log. */
export const MASK = "***";

/** Derived forms (lines, encodings) shorter than this are not masked: they would hit ordinary text. */
export const MIN_DERIVED_CHARS = 4;

/** Values one masker takes at most (secrets of a job plus `::add-mask::` values). */
export const MAX_MASKED_VALUES = 1000;

const enc = new TextEncoder();

/** The base64 characters of `bytes` that do not depend on the bytes around them, for each alignment. */
function base64Forms(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    let b64 = Buffer.from(padded).toString("base64");
    // The first characters mix the unknown bytes before the value; the last ones the bytes after it.
    const head = shift === 0 ? 0 : shift === 1 ? 2 : 3;
    const total = shift + bytes.length;
    b64 = b64.replace(/=+$/, "");
    const tail = total % 3 === 0 ? 0 : 1;
    const inner = b64.slice(head, b64.length - tail);
    if (inner) out.push(inner);
  }
  return out;
}

/** Every form of `value` a log may show. */
export function maskForms(value: string): string[] {
  if (!value) return [];
  const forms = new Set<string>([value]);
  const derived: string[] = [];
  if (/[\r\n]/.test(value)) for (const line of value.split(/\r?\n|\r/)) derived.push(line.trim());
  for (const b of base64Forms(enc.encode(value))) {
    derived.push(b);
    if (/[+/]/.test(b)) derived.push(b.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  derived.push(encodeURIComponent(value), JSON.stringify(value).slice(1, -1));
  for (const d of derived) if (d.length >= MIN_DERIVED_CHARS) forms.add(d);
  return [...forms];
}

/** The table slot of a pair of code units (exact for Latin-1 pairs; others share slots and are compared in full). */
const slot = (a: number, b: number) => ((a & 0xff) << 8) | (b & 0xff);

/** The shift-table slot of three code units (a hash: units that share a slot only shorten shifts). */
const block = (a: number, b: number, c: number) => ((a << 10) ^ (b << 5) ^ c) & 0xffff;

/** Aho–Corasick over code units: a trie of words with failure links (the scan's linear fallback). */
class Automaton {
  /** Children as an open-addressing table: slot → parent node (-1: empty), unit, child. */
  private readonly parents: Int32Array;
  private readonly units: Uint16Array;
  private readonly children: Int32Array;
  private readonly shift: number;
  readonly fail: number[] = [0];
  readonly depth: number[] = [0];
  /** The longest word that ends at this node, its own or through failure links (0: none). */
  readonly out: number[] = [0];
  /** 1 when the node has children (its text is a proper prefix of a word). */
  readonly inner: number[] = [0];

  constructor(words: Iterable<string>) {
    const next = new Map<number, number>();
    const kids: [number, number][][] = [[]];
    for (const w of words) {
      let q = 0;
      for (let k = 0; k < w.length; k++) {
        const unit = w.charCodeAt(k);
        let c = next.get(q * 65536 + unit);
        if (c === undefined) {
          c = this.fail.length;
          this.fail.push(0);
          this.depth.push(k + 1);
          this.out.push(0);
          this.inner.push(0);
          kids.push([]);
          next.set(q * 65536 + unit, c);
          this.inner[q] = 1;
          kids[q]!.push([unit, c]);
        }
        q = c;
      }
      this.out[q] = w.length;
    }
    let bits = 4;
    while (1 << bits < 2 * next.size) bits++;
    this.shift = 32 - bits;
    this.parents = new Int32Array(1 << bits).fill(-1);
    this.units = new Uint16Array(1 << bits);
    this.children = new Int32Array(1 << bits);
    const mask = (1 << bits) - 1;
    kids.forEach((list, q) => {
      for (const [unit, c] of list) {
        let h = this.hash(q, unit);
        while (this.parents[h] !== -1) h = (h + 1) & mask;
        this.parents[h] = q;
        this.units[h] = unit;
        this.children[h] = c;
      }
    });
    // Breadth first: a node's failure link is set from its parent's, which is shallower.
    const queue = [0];
    for (let h = 0; h < queue.length; h++) {
      const u = queue[h]!;
      for (const [unit, v] of kids[u]!) {
        this.fail[v] = u === 0 ? 0 : this.step(this.fail[u]!, unit);
        this.out[v] = Math.max(this.out[v]!, this.out[this.fail[v]!]!);
        queue.push(v);
      }
    }
  }

  private hash(q: number, unit: number): number {
    return Math.imul(q ^ Math.imul(unit, 0x01000193), 0x9e3779b1) >>> this.shift;
  }

  /** The node after reading `unit` in node `q` (amortized constant over a text). */
  step(q: number, unit: number): number {
    const mask = this.parents.length - 1;
    for (;;) {
      for (let h = this.hash(q, unit); this.parents[h] !== -1; h = (h + 1) & mask)
        if (this.parents[h] === q && this.units[h] === unit) return this.children[h]!;
      if (q === 0) return 0;
      q = this.fail[q]!;
    }
  }
}

/** Units the compare loop may compare per unit of a scanned text (plus a constant) before the scan goes on with the automata. */
const COMPARE_BUDGET = 8;
const COMPARE_SLACK = 4096;

/**
 * A streaming masker over a set of values.
 *
 * One pass over the text, left to right. When every form is at least 4 code units long, a skip
 * loop (Wu–Manber): the last three units of the window of the shortest form's length are looked
 * up in `shift`, which says how far the window can move before those units could lie in the
 * start of a form; on ordinary output it moves nearly the window's length per probe. Where the
 * shift is 0, and everywhere when a form is shorter (a per-position loop), the position's first
 * two units are looked up in `pairs`, and only a marked pair is compared in full against the
 * forms of its slot, longest first (the first whole match is the longest at that position). The
 * same scan finds the held tail: the first position where the text ends inside a form is where
 * a later write could complete one. Why not the regular expression this replaced (one
 * alternation of the forms): JavaScriptCore tries the alternatives at every position, ~100
 * MB/s with 20 secrets; this is 3× faster on 64 KiB writes, 1.4–5.8× across the benchmark's
 * ordinary rows (bench/masking.ts, bench/README.md §33).
 *
 * Work: one probe per window or position, plus the compared units where a form may start. A log
 * made only of secret prefixes is compared once per prefix (linear). A value that repeats
 * itself (`aaaa…`) against output repeating it with one unit changed would make every position
 * compare up to the value's length: past a budget of compared units (`COMPARE_BUDGET` per unit
 * of the text, plus `COMPARE_SLACK`) the scan finishes the text in `linear` (Aho–Corasick
 * automata, built then, memory in the forms' units), so the work per write stays linear in the
 * write plus the longest form.
 */
export class Masker {
  private count = 0;
  private forms = new Set<string>();
  /** Forms by the slot of their first two code units, longest first; a one-unit form is in all 256 slots of its unit. */
  private bySlot: (string[] | undefined)[] = [];
  /** 1 where `bySlot` has forms. */
  private pairs = new Uint8Array(65536);
  /** 1 for the first code unit of a form longer than one unit (the last unit of a write that may start one is held). */
  private firsts = new Uint8Array(65536);
  /** Length of the shortest form. */
  private shortest = Infinity;
  /** How far the skip loop may move for each block slot (`skips`); null after `add`. */
  private shift: Uint8Array | null = null;
  private values = new Set<string>();
  private held = "";
  /** Units compared by `longestAt` in this scan. */
  private work = 0;
  /** Forward automaton of the forms and one of the reversed forms (`linear`); null after `add`. */
  private automata: { forward: Automaton; reverse: Automaton } | null = null;
  private longest = 0;
  private readonly budget: number;

  /** `options.budget`: units compared per unit scanned before the automata take over (tests set 0). */
  constructor(values: Iterable<string> = [], options: { budget?: number } = {}) {
    this.budget = options.budget ?? COMPARE_BUDGET;
    for (const v of values) this.add(v);
  }

  /** Masks `value` (and its forms) from now on; false when the masker is full. */
  add(value: string): boolean {
    if (!value || this.values.has(value)) return true;
    if (this.values.size >= MAX_MASKED_VALUES) return false;
    this.values.add(value);
    for (const f of maskForms(value)) this.addForm(f);
    return true;
  }

  /** Code units held back by `push`: a tail that may start a form (shorter than the longest form). */
  get holding(): number {
    return this.held.length;
  }

  /** Whether there is anything to mask. */
  get empty(): boolean {
    return this.count === 0;
  }

  private addForm(f: string): void {
    if (this.forms.has(f)) return;
    this.forms.add(f);
    this.count++;
    this.shortest = Math.min(this.shortest, f.length);
    this.shift = null;
    this.automata = null;
    this.longest = Math.max(this.longest, f.length);
    const a = f.charCodeAt(0);
    if (f.length > 1) {
      this.firsts[a] = 1;
      this.file(slot(a, f.charCodeAt(1)), f);
    } else for (let b = 0; b < 256; b++) this.file(slot(a, b), f);
  }

  private file(h: number, f: string): void {
    this.pairs[h] = 1;
    const list = (this.bySlot[h] ??= []);
    list.push(f);
    list.sort((x, y) => y.length - x.length);
  }

  /** Whether `text` holds a masked value or form (a check for answers that must not carry one). */
  contains(text: string): boolean {
    return this.scan(text, true).text !== text;
  }

  /** The shift table for the skip loop (`shortest` ≥ 4), built when first needed after `add`. */
  private skips(): Uint8Array {
    if (this.shift) return this.shift;
    // Wu–Manber over blocks of three code units: a block that ends a window of `shortest` units
    // and occurs nowhere in the first `shortest` units of any form lets the window move past it.
    const m = this.shortest;
    const top = Math.min(m - 2, 255);
    const shift = new Uint8Array(65536).fill(top);
    for (const f of this.forms)
      for (let j = Math.max(0, m - 3 - top); j <= m - 3; j++) {
        const h = block(f.charCodeAt(j), f.charCodeAt(j + 1), f.charCodeAt(j + 2));
        if (m - 3 - j < shift[h]!) shift[h] = m - 3 - j;
      }
    this.shift = shift;
    return shift;
  }

  /**
   * The longest form at `s[i]`: its length; 0 when none; -1 when `s` ends inside one (and no
   * longer form matched whole) while more text may come (`whole` false).
   */
  private longestAt(s: string, i: number, whole: boolean): number {
    const h = slot(s.charCodeAt(i), s.charCodeAt(i + 1));
    if (this.pairs[h] === 0) return 0;
    const rest = s.length - i;
    for (const f of this.bySlot[h]!) {
      const len = f.length;
      if (len <= rest) {
        // Counted: a value repeating itself (`aaaa…`) costs its length at every position; past
        // the budget the scan goes on in `linear`.
        let k = 0;
        while (k < len && f.charCodeAt(k) === s.charCodeAt(i + k)) k++;
        this.work += k;
        if (k === len) return len;
        continue;
      }
      if (whole) continue;
      this.work += rest;
      let k = 0;
      while (k < rest && f.charCodeAt(k) === s.charCodeAt(i + k)) k++;
      if (k === rest) return -1;
    }
    return 0;
  }

  /**
   * Masks `s` left to right, leftmost-longest. With `whole`, to its end; otherwise the scan stops
   * at the first position where `s` ends inside a form (a later write may complete it), and
   * `consumed` says where: what is after it is held.
   */
  private scan(s: string, whole: boolean): { text: string; consumed: number } {
    const n = s.length;
    const pairs = this.pairs;
    const m = this.shortest;
    let out = "";
    let from = 0;
    let i = 0;
    this.work = 0;
    const budget = this.budget * n + (this.budget ? COMPARE_SLACK : 0);
    if (m >= 4) {
      // Skip loop: look at the last three units of the window [i, i + m); compare only where they may end a form's start.
      const shift = this.skips();
      for (const stop = n - m; i <= stop; ) {
        const p = i + m - 1;
        const sh = shift[block(s.charCodeAt(p - 2), s.charCodeAt(p - 1), s.charCodeAt(p))]!;
        if (sh !== 0) {
          i += sh;
          continue;
        }
        if (this.work > budget) return this.linear(s, i, out, from, whole);
        const hit = this.longestAt(s, i, whole);
        if (hit === 0) {
          i++;
          continue;
        }
        if (hit < 0) return { text: out + s.slice(from, i), consumed: i };
        out += from === i ? MASK : s.slice(from, i) + MASK;
        i = from = i + hit;
      }
    }
    const last = n - 1;
    for (; i < last; i++) {
      if (pairs[slot(s.charCodeAt(i), s.charCodeAt(i + 1))] === 0) continue;
      if (this.work > budget) return this.linear(s, i, out, from, whole);
      const hit = this.longestAt(s, i, whole);
      if (hit === 0) continue;
      if (hit < 0) return { text: out + s.slice(from, i), consumed: i };
      out += from === i ? MASK : s.slice(from, i) + MASK;
      from = i + hit;
      i = from - 1;
    }
    if (i === last) {
      // The last code unit: it may start a longer form (held), or be a one-unit form.
      const c = s.charCodeAt(i);
      if (!whole && this.firsts[c] === 1) return { text: out + s.slice(from, i), consumed: i };
      if (pairs[slot(c, 0)] === 1 && this.bySlot[slot(c, 0)]!.some((f) => f.length === 1 && f.charCodeAt(0) === c)) {
        out += s.slice(from, i) + MASK;
        from = n;
      }
    }
    return { text: from === 0 ? s : out + s.slice(from), consumed: n };
  }

  /**
   * `scan` from `i0` on in time linear in the text (and memory in the forms' units): the
   * longest form starting at each position from an automaton of the reversed forms read right
   * to left, the held tail from the forms' automaton over the last units, then left to right
   * as `scan` does. `out` and `from` are the scan's so far.
   */
  private linear(s: string, i0: number, out: string, from: number, whole: boolean): { text: string; consumed: number } {
    this.automata ??= {
      forward: new Automaton(this.forms),
      reverse: new Automaton([...this.forms].map((f) => Array.from({ length: f.length }, (_, k) => f[f.length - 1 - k]).join(""))),
    };
    const { forward, reverse } = this.automata;
    const n = s.length;
    const longest = new Int32Array(n - i0);
    for (let i = n - 1, q = 0; i >= i0; i--) {
      q = reverse.step(q, s.charCodeAt(i));
      longest[i - i0] = reverse.out[q]!;
    }
    // Where a later write may complete a form: the tails of `s` that are proper prefixes of forms, leftmost first.
    const starts: number[] = [];
    if (!whole) {
      let q = 0;
      for (let i = Math.max(i0, n - this.longest + 1); i < n; i++) q = forward.step(q, s.charCodeAt(i));
      for (; q !== 0; q = forward.fail[q]!) if (forward.inner[q] === 1) starts.push(n - forward.depth[q]!);
    }
    let i = i0;
    let k = 0;
    for (;;) {
      while (k < starts.length && starts[k]! < i) k++;
      const p = k < starts.length ? starts[k]! : n;
      while (i < p) {
        const len = longest[i - i0]!;
        if (len === 0) {
          i++;
          continue;
        }
        out += s.slice(from, i) + MASK;
        i = from = i + len;
      }
      if (i === p) break;
    }
    if (i < n) return { text: out + s.slice(from, i), consumed: i };
    return { text: from === 0 ? s : out + s.slice(from), consumed: n };
  }

  /** Takes more output; answers what can be sent now (masked). */
  push(text: string): string {
    if (this.count === 0) return text;
    const s = this.held ? this.held + text : text;
    const { text: out, consumed } = this.scan(s, false);
    this.held = consumed === s.length ? "" : s.slice(consumed);
    return out;
  }

  /** Ends the stream: answers the held tail, masked. */
  flush(): string {
    const s = this.held;
    this.held = "";
    return s ? this.scan(s, true).text : "";
  }

  /** Masks a whole text at once (error messages, outputs, one log append on the server). */
  mask(text: string): string {
    return this.count === 0 ? text : this.scan(text, true).text;
  }
}
