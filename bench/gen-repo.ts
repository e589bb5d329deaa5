// Deterministic generator of a realistic git repository for the git benchmarks (bench/git.ts).
//
// One seeded PRNG drives a model of a working tree (a few thousand text files in nested
// directories plus some binary assets) through thousands of commits: small line edits (so
// deltas matter), added / deleted / renamed files, occasional refactors touching dozens of
// files and vendor imports, topic branches merged with --no-ff merge commits, a few abandoned
// feature branches, release branches and annotated tags. The history is streamed into
// `git fast-import` (fast) and then `git repack -adf --window=50 --depth=50`, which gives one
// pack of about 100 MB at --scale 1. Same seed and scale give the same commit ids.
//
//   bun bench/gen-repo.ts [--scale 1] [--seed 1] [--out DIR.git] [--extra 10] [--force]
//
// --extra K also writes DIR-next.git: a copy of the repository with K more commits on main
// (a separate, un-repacked pack, as a push would leave it), for incremental-fetch benchmarks.
// Prints a JSON summary (paths, tips, pack size, object count) on stdout; progress on stderr.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Rng } from "./lib/git-prng.ts";

export interface GenOptions {
  /** Multiplies commits, files and assets (1 → ~100 MB pack). */
  scale: number;
  seed: number;
  /** Output bare repository path. */
  out: string;
  /** Extra commits written to `<out minus .git>-next.git` (0: none). */
  extra: number;
  /** Regenerate even if a matching repository exists. */
  force?: boolean;
  /** Override the commit count derived from scale. */
  commits?: number;
  /** Override the initial text file count derived from scale. */
  files?: number;
  quiet?: boolean;
}

export interface GenResult {
  repo: string;
  next: string | null;
  seed: number;
  scale: number;
  commits: number;
  tip: string;
  nextTip: string | null;
  refs: number;
  packBytes: number;
  objects: number;
  seconds: number;
  cached: boolean;
}

const GENERATOR_VERSION = 4;
export const BENCH_ROOT = resolve(import.meta.dir);
export const DEFAULT_WORK = join(BENCH_ROOT, "work");

/** Default output path for a seed and scale (under bench/work, which is git-ignored). */
export function defaultRepoPath(seed: number, scale: number): string {
  return join(DEFAULT_WORK, "repos", `gen-s${seed}-x${scale}.git`);
}

/** The path of the `--extra` companion repository. */
export function nextRepoPath(out: string): string {
  return out.replace(/\.git\/?$/, "") + "-next.git";
}

// ---------------------------------------------------------------------------------------
// Content model

type TextFile = { kind: "text"; lines: string[]; vocab: string[]; prose: boolean };
type BinFile = { kind: "bin"; data: Uint8Array; structured: boolean };
type File = TextFile | BinFile;

const SYLLABLES =
  "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ha he hi ho hu ja jo ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo wa we wi xa xe ya yo za ze zi zo str tr pl gr bl fl cr dr sp st ch sh th ph ck nd nt rt".split(
    " ",
  );
const KEYWORDS = [
  "const",
  "let",
  "return",
  "if",
  "else",
  "for",
  "while",
  "await",
  "async",
  "export",
  "import",
  "function",
  "class",
  "new",
  "throw",
  "try",
  "catch",
  "type",
  "interface",
  "switch",
  "case",
  "break",
];
const TYPES = [
  "string",
  "number",
  "boolean",
  "Uint8Array",
  "Promise<void>",
  "Map<string, number>",
  "Record<string, unknown>",
  "Buffer",
  "Error",
  "Date",
  "Set<string>",
  "bigint",
];
const OPS = ["===", "!==", "<", ">", "<=", ">=", "&&", "||", "+", "-", "*", "??"];
const EXTS = [".ts", ".ts", ".ts", ".ts", ".go", ".py", ".rs", ".md", ".json", ".css"];
const TOPDIRS = ["src", "src", "src", "lib", "pkg", "internal", "test", "docs", "tools", "web", "api"];
const FIRST = [
  "Ada",
  "Brian",
  "Chen",
  "Dana",
  "Elif",
  "Femi",
  "Grace",
  "Hiro",
  "Ines",
  "Jon",
  "Kavya",
  "Lars",
  "Mina",
  "Nils",
  "Olu",
  "Priya",
  "Quinn",
  "Rosa",
  "Sven",
  "Tara",
  "Uma",
  "Vik",
  "Wen",
  "Xia",
  "Yusuf",
  "Zoe",
];
const LAST = [
  "Lovelace",
  "Kernighan",
  "Wei",
  "Scott",
  "Yilmaz",
  "Adeyemi",
  "Hopper",
  "Tanaka",
  "Sousa",
  "Bentley",
  "Rao",
  "Nilsen",
  "Park",
  "Holm",
  "Bello",
  "Patel",
  "Reed",
  "Diaz",
  "Berg",
  "Singh",
];
const VERBS = [
  "fix",
  "add",
  "remove",
  "refactor",
  "rename",
  "update",
  "simplify",
  "handle",
  "support",
  "document",
  "test",
  "speed up",
  "clean up",
  "extract",
  "inline",
  "guard",
];

class Model {
  readonly rng: Rng;
  readonly words: string[];
  readonly files = new Map<string, File>();
  readonly textPaths: string[] = [];
  readonly binPaths: string[] = [];
  readonly hot: string[] = [];
  readonly dirs: string[] = [];
  readonly people: { name: string; email: string }[] = [];
  time = 1_600_000_000;
  private serial = 0;

  constructor(seed: number) {
    this.rng = new Rng(seed);
    const seen = new Set<string>();
    this.words = [];
    while (this.words.length < 4000) {
      const n = this.rng.int(2, 4);
      let w = "";
      for (let i = 0; i < n; i++) w += this.rng.pick(SYLLABLES);
      if (!seen.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    for (let i = 0; i < 40; i++) {
      const f = this.rng.pick(FIRST);
      const l = this.rng.pick(LAST);
      this.people.push({ name: `${f} ${l}`, email: `${f.toLowerCase()}.${l.toLowerCase()}${i}@example.com` });
    }
  }

  word(): string {
    return this.rng.pick(this.words);
  }

  ident(vocab: string[]): string {
    const r = this.rng;
    const a = r.chance(0.85) ? r.pick(vocab) : this.word();
    if (r.chance(0.5)) return a;
    const b = r.chance(0.7) ? r.pick(vocab) : this.word();
    return a + b[0]!.toUpperCase() + b.slice(1);
  }

  sentence(min: number, max: number, vocab?: string[]): string {
    const n = this.rng.int(min, max);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(vocab && this.rng.chance(0.5) ? this.rng.pick(vocab) : this.word());
    return out.join(" ");
  }

  /** One line of code-like text. */
  codeLine(f: TextFile): string {
    const r = this.rng;
    if (f.prose) {
      const k = r.float();
      if (k < 0.15) return "";
      if (k < 0.22) return `## ${this.sentence(2, 5, f.vocab)}`;
      if (k < 0.35) return `- ${this.sentence(3, 10, f.vocab)}`;
      return this.sentence(6, 16, f.vocab) + ".";
    }
    const ind = "  ".repeat(r.int(0, 3));
    const id = () => this.ident(f.vocab);
    const args = () => {
      const n = r.int(0, 3);
      const a: string[] = [];
      for (let i = 0; i < n; i++) a.push(r.chance(0.2) ? String(r.int(0, 4096)) : id());
      return a.join(", ");
    };
    const k = r.float();
    if (k < 0.1) return "";
    if (k < 0.2) return `${ind}// ${this.sentence(3, 12, f.vocab)}`;
    if (k < 0.35) return `${ind}const ${id()} = ${id()}(${args()});`;
    if (k < 0.45) return `${ind}if (${id()} ${r.pick(OPS)} ${id()}) {`;
    if (k < 0.55) return `${ind}}`;
    if (k < 0.63) return `${ind}return ${id()}${r.chance(0.5) ? `.${id()}(${args()})` : ""};`;
    if (k < 0.75) return `${ind}${id()}.${id()}(${args()});`;
    if (k < 0.8) return `export ${r.chance(0.3) ? "async " : ""}function ${id()}(${id()}: ${r.pick(TYPES)}, ${id()}: ${r.pick(TYPES)}): ${r.pick(TYPES)} {`;
    if (k < 0.85) return `${ind}${r.pick(KEYWORDS)} ${id()} ${r.pick(OPS)} ${id()};`;
    if (k < 0.9) return `${ind}${id()}: ${r.pick(TYPES)};`;
    if (k < 0.95) return `${ind}let ${id()}: ${r.pick(TYPES)} = ${r.chance(0.5) ? `"${this.sentence(1, 4)}"` : String(r.int(0, 1 << 20))};`;
    return `${ind}throw new Error("${this.sentence(2, 7, f.vocab)}");`;
  }

  newText(prose: boolean, lines: number): TextFile {
    const vocab: string[] = [];
    const n = this.rng.int(20, 80);
    for (let i = 0; i < n; i++) vocab.push(this.word());
    const f: TextFile = { kind: "text", lines: [], vocab, prose };
    for (let i = 0; i < lines; i++) f.lines.push(this.codeLine(f));
    return f;
  }

  newBin(size: number): BinFile {
    const structured = this.rng.chance(0.4);
    const data = new Uint8Array(size);
    if (structured) this.fillStructured(data, 0, size);
    else this.rng.fill(data);
    return { kind: "bin", data, structured };
  }

  /** Record-like bytes (a table of small integers): compressible about 3:1. */
  fillStructured(buf: Uint8Array, start: number, end: number): void {
    const r = this.rng;
    for (let i = start; i < end; i++) {
      const col = i & 15;
      buf[i] = col < 4 ? (i >>> (col * 2)) & 0xff : col < 10 ? r.int(0, 15) : col < 12 ? 0 : r.u32() & 0xff;
    }
  }

  newDir(): string {
    const r = this.rng;
    const depth = r.int(1, 3);
    const parts = [r.pick(TOPDIRS)];
    for (let i = 0; i < depth; i++) parts.push(this.word());
    return parts.join("/");
  }

  freshPath(dir: string, ext: string): string {
    for (;;) {
      const p = `${dir}/${this.word()}${this.rng.chance(0.3) ? "_" + this.word() : ""}${ext}`;
      if (!this.files.has(p)) return p;
    }
  }

  addFile(path: string, f: File): void {
    this.files.set(path, f);
    (f.kind === "text" ? this.textPaths : this.binPaths).push(path);
  }

  removeFile(path: string): File {
    const f = this.files.get(path)!;
    this.files.delete(path);
    const list = f.kind === "text" ? this.textPaths : this.binPaths;
    const i = list.indexOf(path);
    list[i] = list[list.length - 1]!;
    list.pop();
    const h = this.hot.indexOf(path);
    if (h >= 0) this.hot.splice(h, 1);
    return f;
  }

  pickText(): string {
    if (this.hot.length && this.rng.chance(0.55)) return this.rng.pick(this.hot);
    return this.rng.pick(this.textPaths);
  }

  /** A small edit: replace, insert or delete a few lines, or tweak one token. */
  editText(f: TextFile): void {
    const r = this.rng;
    const hunks = r.chance(0.7) ? 1 : r.int(2, 4);
    for (let h = 0; h < hunks; h++) {
      const n = f.lines.length;
      const at = r.int(0, Math.max(0, n - 1));
      const k = r.float();
      const tooLong = n > 4000;
      if (k < 0.3 && n > 0) {
        // tweak a token in one line
        const line = f.lines[at]!;
        const words = line.split(" ");
        words[r.int(0, words.length - 1)] = this.ident(f.vocab);
        f.lines[at] = words.join(" ");
      } else if (k < 0.55 && n > 0) {
        const m = r.int(1, 3);
        const repl: string[] = [];
        for (let i = 0; i < m; i++) repl.push(this.codeLine(f));
        f.lines.splice(at, Math.min(m, n - at), ...repl);
      } else if (k < (tooLong ? 0.6 : 0.85)) {
        const m = r.chance(0.85) ? r.int(2, 25) : r.int(20, 120);
        const add: string[] = [];
        for (let i = 0; i < m; i++) add.push(this.codeLine(f));
        f.lines.splice(at, 0, ...add);
      } else if (n > 5) {
        f.lines.splice(at, r.int(1, tooLong ? 80 : 8));
      }
    }
  }

  editBin(f: BinFile): void {
    const r = this.rng;
    if (r.chance(0.5)) {
      // new version of the asset: same kind, size within ±25%
      const size = Math.max(1024, Math.round(f.data.length * (0.75 + r.float() * 0.5)));
      const g = this.newBin(size);
      f.data = g.data;
      f.structured = g.structured;
      return;
    }
    // patch a few regions (and sometimes append): deltas apply
    const data = r.chance(0.3) ? concat(f.data, new Uint8Array(r.int(256, 32768))) : new Uint8Array(f.data);
    if (data.length > f.data.length) f.structured ? this.fillStructured(data, f.data.length, data.length) : r.fill(data, f.data.length, data.length);
    const patches = r.int(1, 6);
    for (let i = 0; i < patches; i++) {
      const len = Math.min(data.length, r.int(16, 4096));
      const at = r.int(0, data.length - len);
      if (f.structured) this.fillStructured(data, at, at + len);
      else r.fill(data, at, at + len);
    }
    f.data = data;
  }

  person() {
    return this.rng.pick(this.people);
  }

  tick(): number {
    this.time += this.rng.int(300, 172800);
    return this.time;
  }

  message(): string {
    const r = this.rng;
    const subj = `${r.pick(VERBS)} ${this.sentence(2, 7)}`;
    if (r.chance(0.6)) return subj + "\n";
    const paras: string[] = [subj, ""];
    const np = r.int(1, 3);
    for (let i = 0; i < np; i++) {
      const words = this.sentence(10, 60).split(" ");
      let line = "";
      const out: string[] = [];
      for (const w of words) {
        if (line.length + w.length > 70) {
          out.push(line);
          line = w;
        } else line = line ? `${line} ${w}` : w;
      }
      if (line) out.push(line);
      paras.push(out.join("\n"), "");
    }
    if (r.chance(0.3)) paras.push(`Signed-off-by: ${this.person().name} <x@example.com>`, "");
    return paras.join("\n").replace(/\n+$/, "\n");
  }

  nextSerial(): number {
    return ++this.serial;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function encodeText(f: TextFile): Uint8Array {
  return new TextEncoder().encode(f.lines.join("\n") + "\n");
}

function encodeFile(f: File): Uint8Array {
  return f.kind === "text" ? encodeText(f) : f.data;
}

// ---------------------------------------------------------------------------------------
// fast-import stream

class Stream {
  private chunks: Uint8Array[] = [];
  private size = 0;
  readonly enc = new TextEncoder();
  constructor(private readonly sink: { write(b: Uint8Array): unknown; flush(): unknown }) {}

  text(s: string): void {
    this.bytes(this.enc.encode(s));
  }
  bytes(b: Uint8Array): void {
    this.chunks.push(b);
    this.size += b.length;
  }
  data(b: Uint8Array | string): void {
    const bytes = typeof b === "string" ? this.enc.encode(b) : b;
    this.text(`data ${bytes.length}\n`);
    this.bytes(bytes);
    this.text("\n");
  }
  async maybeFlush(): Promise<void> {
    if (this.size > 1 << 20) await this.flush();
  }
  async flush(): Promise<void> {
    if (!this.size) return;
    const all = new Uint8Array(this.size);
    let o = 0;
    for (const c of this.chunks) {
      all.set(c, o);
      o += c.length;
    }
    this.chunks = [];
    this.size = 0;
    this.sink.write(all);
    await this.sink.flush();
  }
}

interface Plan {
  commits: number;
  files: number;
  assets: number;
}

function planFor(opts: GenOptions): Plan {
  const s = opts.scale;
  return {
    commits: opts.commits ?? Math.max(20, Math.round(5000 * s)),
    files: opts.files ?? Math.max(30, Math.round(3000 * s)),
    assets: Math.max(2, Math.round(25 * s)),
  };
}

/** Writes the base history; returns the model (for --extra) and the main tip mark. */
async function writeHistory(st: Stream, m: Model, plan: Plan, log: (s: string) => void): Promise<{ mainMark: number }> {
  const r = m.rng;
  // initial tree
  const ndirs = Math.max(4, Math.round(plan.files / 12));
  for (let i = 0; i < ndirs; i++) m.dirs.push(m.newDir());
  for (let i = 0; i < plan.files; i++) {
    const ext = r.pick(EXTS);
    const path = m.freshPath(r.pick(m.dirs), ext);
    m.addFile(path, m.newText(ext === ".md", r.logInt(20, 2500)));
  }
  for (let i = 0; i < plan.assets; i++) {
    const path = m.freshPath(`assets/${m.word()}`, m.rng.pick([".png", ".bin", ".woff2", ".db", ".jpg"]));
    m.addFile(path, m.newBin(r.logInt(16 << 10, 2 << 20)));
  }
  for (let i = 0; i < Math.max(5, plan.files / 10); i++) m.hot.push(m.rng.pick(m.textPaths));

  let mainMark = 0;
  let made = 0;
  let mainCommits = 0;
  let tags = 0;
  let features = 0;

  const commit = (ref: string, from: number | null, merge: number | null, changes: (() => void) | null, msg?: string): number => {
    const mark = m.nextSerial();
    const who = m.person();
    const t = m.tick();
    const committer = r.chance(0.8) ? who : m.person();
    st.text(
      `commit ${ref}\nmark :${mark}\nauthor ${who.name} <${who.email}> ${t} +0000\ncommitter ${committer.name} <${committer.email}> ${t + r.int(0, 3600)} +0000\n`,
    );
    st.data(msg ?? m.message());
    if (from !== null) st.text(`from :${from}\n`);
    if (merge !== null) st.text(`merge :${merge}\n`);
    changes?.();
    st.text("\n");
    made++;
    return mark;
  };
  const put = (path: string) => {
    const f = m.files.get(path)!;
    st.text(`M ${path.startsWith("tools/") && path.endsWith(".py") ? "100755" : "100644"} inline ${path}\n`);
    st.data(encodeFile(f));
  };
  const del = (path: string) => st.text(`D ${path}\n`);

  // the first commit: the whole tree
  mainMark = commit(
    "refs/heads/main",
    null,
    null,
    () => {
      for (const p of [...m.files.keys()].sort()) put(p);
    },
    "Initial import\n",
  );
  mainCommits++;

  /** One ordinary change set; records touched paths (with their previous state) in `undo`. */
  const changeSet = (touched: Set<string>, undo: Map<string, File | null> | null) => {
    const remember = (p: string) => {
      if (undo && !undo.has(p)) {
        const f = m.files.get(p);
        undo.set(p, f ? (f.kind === "text" ? { ...f, lines: [...f.lines] } : { ...f }) : null);
      }
    };
    const big = r.chance(0.006);
    const nEdits = big ? r.int(30, 90) : r.chance(0.35) ? r.int(1, 2) : r.chance(0.6) ? r.int(3, 8) : r.int(8, 20);
    for (let i = 0; i < nEdits; i++) {
      const p = m.pickText();
      remember(p);
      m.editText(m.files.get(p) as TextFile);
      touched.add(p);
    }
    if (r.chance(0.15)) {
      const n = r.chance(0.9) ? r.int(1, 3) : r.int(10, 80); // sometimes a vendored directory
      const dir = n > 3 ? `vendor/${m.word()}/${m.word()}` : r.pick(m.dirs);
      if (n > 3) m.dirs.push(dir);
      for (let i = 0; i < n; i++) {
        const ext = r.pick(EXTS);
        const p = m.freshPath(dir, ext);
        remember(p);
        m.addFile(p, m.newText(ext === ".md", r.logInt(10, 1500)));
        touched.add(p);
      }
    }
    if (r.chance(0.035) && m.textPaths.length > 50) {
      const p = r.pick(m.textPaths);
      remember(p);
      m.removeFile(p);
      touched.add(p);
    }
    if (r.chance(0.03) && m.textPaths.length > 50) {
      const p = r.pick(m.textPaths);
      const ext = p.slice(p.lastIndexOf("."));
      const q = m.freshPath(r.chance(0.5) ? p.slice(0, p.lastIndexOf("/")) : r.pick(m.dirs), ext);
      remember(p);
      remember(q);
      const f = m.removeFile(p) as TextFile;
      if (r.chance(0.5)) m.editText(f);
      m.addFile(q, f);
      touched.add(p);
      touched.add(q);
    }
    if (r.chance(0.04) && m.binPaths.length) {
      const p = r.pick(m.binPaths);
      remember(p);
      m.editBin(m.files.get(p) as BinFile);
      touched.add(p);
    }
    if (r.chance(0.002)) {
      const p = m.freshPath(`assets/${m.word()}`, ".png");
      remember(p);
      m.addFile(p, m.newBin(r.logInt(16 << 10, 2 << 20)));
      touched.add(p);
    }
  };
  const emit = (touched: Set<string>) => () => {
    for (const p of [...touched].sort()) m.files.has(p) ? put(p) : del(p);
  };

  while (made < plan.commits) {
    await st.maybeFlush();
    if (made % 500 < 1) log(`  ${made}/${plan.commits} commits`);
    const left = plan.commits - made;
    if (left > 12 && r.chance(0.05)) {
      // a topic branch: k commits, then a --no-ff merge into main (or kept unmerged)
      const k = r.int(2, 8);
      const abandoned = r.chance(0.12);
      const undo = abandoned ? new Map<string, File | null>() : null;
      const all = new Set<string>();
      const name = abandoned ? `refs/heads/feature/${m.word()}-${features++}` : "refs/heads/topic";
      let tip = mainMark;
      for (let i = 0; i < k; i++) {
        const touched = new Set<string>();
        changeSet(touched, undo);
        for (const p of touched) all.add(p);
        tip = commit(name, i === 0 ? tip : null, null, emit(touched));
      }
      if (abandoned) {
        // put the working state back to main's
        for (const [p, f] of undo!) {
          if (m.files.has(p)) m.removeFile(p);
          if (f) m.addFile(p, f);
        }
        continue;
      }
      mainMark = commit("refs/heads/main", mainMark, tip, emit(all), `Merge branch '${m.word()}-${m.word()}'\n`);
      mainCommits++;
    } else {
      const touched = new Set<string>();
      changeSet(touched, null);
      mainMark = commit("refs/heads/main", null, null, emit(touched));
      mainCommits++;
    }
    if (mainCommits % 100 === 0) {
      tags++;
      const who = m.person();
      st.text(`tag v0.${tags}.0\nfrom :${mainMark}\ntagger ${who.name} <${who.email}> ${m.time + 60} +0000\n`);
      st.data(`Release 0.${tags}.0\n\n${m.sentence(5, 20)}\n`);
      if (tags % 10 === 0) {
        st.text(`reset refs/heads/release/0.${tags}\nfrom :${mainMark}\n\n`);
      }
    }
  }
  return { mainMark };
}

async function writeExtra(st: Stream, m: Model, k: number): Promise<void> {
  const r = m.rng;
  for (let i = 0; i < k; i++) {
    const touched = new Set<string>();
    const n = r.int(1, 4);
    for (let j = 0; j < n; j++) {
      const p = m.pickText();
      m.editText(m.files.get(p) as TextFile);
      touched.add(p);
    }
    if (r.chance(0.3)) {
      const ext = r.pick(EXTS);
      const p = m.freshPath(r.pick(m.dirs), ext);
      m.addFile(p, m.newText(ext === ".md", r.logInt(8, 300)));
      touched.add(p);
    }
    const who = m.person();
    const t = m.tick();
    st.text(`commit refs/heads/main\nauthor ${who.name} <${who.email}> ${t} +0000\ncommitter ${who.name} <${who.email}> ${t} +0000\n`);
    st.data(m.message());
    if (i === 0) st.text("from refs/heads/main^0\n");
    for (const p of [...touched].sort()) {
      st.text(`M 100644 inline ${p}\n`);
      st.data(encodeFile(m.files.get(p)!));
    }
    st.text("\n");
  }
}

// ---------------------------------------------------------------------------------------
// Driver

function git(args: string[], cwd?: string): string {
  const p = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe", env: gitEnv() });
  if (p.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${p.stderr.toString()}`);
  return p.stdout.toString().trim();
}

function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("GIT_")) env[k] = v;
  env.GIT_CONFIG_NOSYSTEM = "1";
  env.HOME = process.env.HOME ?? "/tmp";
  return env;
}

async function fastImport(repo: string, feed: (st: Stream) => Promise<void>): Promise<void> {
  const p = Bun.spawn(["git", "fast-import", "--quiet", "--done", "--depth=50", "--active-branches=20"], {
    cwd: repo,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: gitEnv(),
  });
  const errP = new Response(p.stderr).text();
  const st = new Stream(p.stdin);
  await feed(st);
  st.text("done\n");
  await st.flush();
  await p.stdin.end();
  const code = await p.exited;
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${await errP}`);
}

/** Pack files and total bytes of a bare repository. */
export function packStats(repo: string): { packs: string[]; packBytes: number } {
  const dir = join(repo, "objects", "pack");
  const packs = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".pack"))
        .map((f) => join(dir, f))
    : [];
  return { packs, packBytes: packs.reduce((a, p) => a + statSync(p).size, 0) };
}

/** Generates (or reuses, when the marker matches) the benchmark repository. */
export async function generate(opts: GenOptions): Promise<GenResult> {
  const plan = planFor(opts);
  const out = resolve(opts.out);
  const next = opts.extra > 0 ? nextRepoPath(out) : null;
  const log = (s: string) => {
    if (!opts.quiet) process.stderr.write(s + "\n");
  };
  const key = JSON.stringify({ v: GENERATOR_VERSION, seed: opts.seed, plan, extra: opts.extra });
  const marker = join(out, "bench-gen.json");
  if (!opts.force && existsSync(marker) && (!next || existsSync(join(next, "bench-gen.json")))) {
    const prev = JSON.parse(readFileSync(marker, "utf8")) as GenResult & { key: string };
    if (prev.key === key) {
      const { key: _k, ...rest } = prev;
      return { ...rest, cached: true };
    }
  }
  const t0 = performance.now();
  rmSync(out, { recursive: true, force: true });
  if (next) rmSync(next, { recursive: true, force: true });
  mkdirSync(dirname(out), { recursive: true });
  git(["init", "--quiet", "--bare", "--initial-branch=main", out]);
  const m = new Model(opts.seed);
  log(`gen-repo: ${plan.commits} commits, ${plan.files} files, ${plan.assets} assets → ${out}`);
  await fastImport(out, async (st) => {
    await writeHistory(st, m, plan, log);
  });
  git(["update-ref", "-d", "refs/heads/topic"], out);
  log("gen-repo: git repack -adf --window=50 --depth=50 …");
  git(["-c", "pack.threads=0", "repack", "-adf", "--window=50", "--depth=50", "--quiet"], out);
  git(["prune", "--expire=now"], out);
  const tip = git(["rev-parse", "refs/heads/main"], out);
  const refs = git(["for-each-ref", "--format=%(refname)"], out).split("\n").filter(Boolean).length;
  const objects = Number(/in-pack: (\d+)/.exec(git(["count-objects", "-v"], out))![1]);
  const { packBytes } = packStats(out);
  let nextTip: string | null = null;
  if (next) {
    log(`gen-repo: ${opts.extra} extra commits → ${next}`);
    cpSync(out, next, { recursive: true });
    rmSync(join(next, "bench-gen.json"), { force: true });
    await fastImport(next, (st) => writeExtra(st, m, opts.extra));
    nextTip = git(["rev-parse", "refs/heads/main"], next);
  }
  const result: GenResult = {
    repo: out,
    next,
    seed: opts.seed,
    scale: opts.scale,
    commits: Number(git(["rev-list", "--all", "--count"], out)),
    tip,
    nextTip,
    refs,
    packBytes,
    objects,
    seconds: Math.round((performance.now() - t0) / 10) / 100,
    cached: false,
  };
  if (next) writeFileSync(join(next, "bench-gen.json"), JSON.stringify({ key, base: out, tip: nextTip }) + "\n");
  writeFileSync(marker, JSON.stringify({ ...result, key }, null, 2) + "\n");
  return result;
}

function parseArgs(argv: string[]): GenOptions {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write("usage: bun bench/gen-repo.ts [--scale 1] [--seed 1] [--out DIR.git] [--extra 10] [--commits N] [--files N] [--force]\n");
    process.exit(0);
  }
  const scale = Number(get("scale") ?? 1);
  const seed = Number(get("seed") ?? 1);
  return {
    scale,
    seed,
    out: get("out") ?? defaultRepoPath(seed, scale),
    extra: Number(get("extra") ?? 0),
    commits: get("commits") ? Number(get("commits")) : undefined,
    files: get("files") ? Number(get("files")) : undefined,
    force: argv.includes("--force"),
  };
}

if (import.meta.main) {
  const res = await generate(parseArgs(process.argv.slice(2)));
  process.stdout.write(JSON.stringify(res, null, 2) + "\n");
}
