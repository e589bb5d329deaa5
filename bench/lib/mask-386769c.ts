// main's src/services/ci/mask.ts at 386769c (one regular expression), kept verbatim as the baseline of
// bench/masking.ts --baseline (bench/README.md §33). Not used by svc.
// Masking secrets in job logs (issue 29): every secret value, and the forms a script is likely
// to print it in (each line of a multi-line value, base64 at the three byte alignments, base64url,
// URL-encoded, JSON-escaped), becomes `***`. Streaming: `push` answers the text that is safe to
// send now and holds back the longest tail that could still be the start of a secret, so a value
// printed across two writes (or two log chunks) is masked too; `flush` ends the stream. Pure (no
// I/O): the runner agent masks as it streams, the server masks each append again.
//
// Matching is leftmost-longest over UTF-16 code units (one regular expression, the forms longest
// first); the held tail is found with a table of the forms' first two characters.

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

/** The table slot of a pair of characters (exact for Latin-1 pairs; others share slots and are checked). */
const hashPair = (a: number, b: number) => ((a & 0xff) << 8) | (b & 0xff);

/** A streaming masker over a set of values. */
export class Masker {
  private forms: string[] = [];
  /** Forms by the hash of their first two characters, longest first. */
  private byPair: (string[] | undefined)[] = [];
  private pairs = new Uint8Array(65536);
  private regex: RegExp | null = null;
  /** First characters of the forms longer than one character (a last character that may start one is held). */
  private firsts = new Set<number>();
  private longest = 0;
  private values = new Set<string>();
  private held = "";

  constructor(values: Iterable<string> = []) {
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

  /** Whether there is anything to mask. */
  get empty(): boolean {
    return this.forms.length === 0;
  }

  private addForm(f: string): void {
    if (this.forms.includes(f)) return;
    this.forms.push(f);
    this.regex = null;
    this.longest = Math.max(this.longest, f.length);
    if (f.length === 1) return;
    this.firsts.add(f.charCodeAt(0));
    const h = hashPair(f.charCodeAt(0), f.charCodeAt(1));
    this.pairs[h] = 1;
    const list = (this.byPair[h] ??= []);
    list.push(f);
    list.sort((a, b) => b.length - a.length);
  }

  /** Whether `text` holds a masked value or form (a check for answers that must not carry one). */
  contains(text: string): boolean {
    return this.replace(text, text.length).text !== text;
  }

  /** The forms as one alternation, longest first (leftmost-longest); rebuilt after `add`. */
  private pattern(): RegExp {
    if (!this.regex) {
      const sorted = [...this.forms].sort((x, y) => y.length - x.length);
      this.regex = new RegExp(sorted.map((f) => f.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|"), "g");
    }
    return this.regex;
  }

  /**
   * Masks the matches that start before `end` in `s`; answers the masked text of `s` up to where
   * the scan stopped (`consumed`: `end`, or past it when a match ran beyond). Why a regular
   * expression: the engine's literal alternation scans several times faster than a loop over
   * characters in script (bench/masking.ts).
   */
  private replace(s: string, end: number): { text: string; consumed: number } {
    if (this.forms.length === 0) return { text: s.slice(0, end), consumed: end };
    const re = this.pattern();
    re.lastIndex = 0;
    let out = "";
    let from = 0;
    for (let m = re.exec(s); m !== null && m.index < end; m = re.exec(s)) {
      out += s.slice(from, m.index) + MASK;
      from = m.index + m[0].length;
    }
    const consumed = Math.max(end, from);
    out += s.slice(from, consumed);
    return { text: out, consumed };
  }

  /** The length of the longest tail of `s` that is a proper prefix of some form (what must wait for more text). */
  private pendingTail(s: string): number {
    const n = s.length;
    for (let j = Math.max(0, n - this.longest + 1); j < n; j++) {
      const tail = n - j;
      const c = s.charCodeAt(j);
      if (tail === 1) {
        if (this.firsts.has(c)) return 1;
        continue;
      }
      const h = hashPair(c, s.charCodeAt(j + 1));
      if (this.pairs[h] === 0) continue;
      for (const f of this.byPair[h]!) {
        if (f.length <= tail) continue;
        let k = 0;
        while (k < tail && f.charCodeAt(k) === s.charCodeAt(j + k)) k++;
        if (k === tail) return tail;
      }
    }
    return 0;
  }

  /** Takes more output; answers what can be sent now (masked). */
  push(text: string): string {
    if (this.forms.length === 0) return text;
    const s = this.held + text;
    const keep = this.pendingTail(s);
    const { text: out, consumed } = this.replace(s, s.length - keep);
    this.held = s.slice(consumed);
    return out;
  }

  /** Ends the stream: answers the held tail, masked. */
  flush(): string {
    const s = this.held;
    this.held = "";
    return this.replace(s, s.length).text;
  }

  /** Masks a whole text at once (error messages, outputs, one log append on the server). */
  mask(text: string): string {
    return this.replace(text, text.length).text;
  }
}
