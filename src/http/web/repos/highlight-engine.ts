// The highlighting itself, pure and synchronous (run by highlight-worker.ts, off the event loop):
// which language a file name means, and a file's text turned into one markup fragment per line.
// Two engines: @speed-highlight/core for the languages it has (its tokenizer is ~4× faster than
// highlight.js on TypeScript: ~50 ms against ~250 ms of CPU for a 5,000-line file), and
// highlight.js for the common languages it lacks (Ruby, PHP, Kotlin, Swift, C#, C++, …).
import hljs from "highlight.js/lib/common";
import { tokenizeWith, type ShjLanguageData } from "@speed-highlight/core/tokenize";
import asm from "@speed-highlight/core/languages/asm.js";
import bash from "@speed-highlight/core/languages/bash.js";
import c from "@speed-highlight/core/languages/c.js";
import css from "@speed-highlight/core/languages/css.js";
import diff from "@speed-highlight/core/languages/diff.js";
import docker from "@speed-highlight/core/languages/docker.js";
import go from "@speed-highlight/core/languages/go.js";
import htmlLang from "@speed-highlight/core/languages/html.js";
import ini from "@speed-highlight/core/languages/ini.js";
import java from "@speed-highlight/core/languages/java.js";
import js from "@speed-highlight/core/languages/js.js";
import jsdoc from "@speed-highlight/core/languages/jsdoc.js";
import json from "@speed-highlight/core/languages/json.js";
import lua from "@speed-highlight/core/languages/lua.js";
import make from "@speed-highlight/core/languages/make.js";
import md from "@speed-highlight/core/languages/md.js";
import pl from "@speed-highlight/core/languages/pl.js";
import py from "@speed-highlight/core/languages/py.js";
import regex from "@speed-highlight/core/languages/regex.js";
import rs from "@speed-highlight/core/languages/rs.js";
import sql from "@speed-highlight/core/languages/sql.js";
import todo from "@speed-highlight/core/languages/todo.js";
import toml from "@speed-highlight/core/languages/toml.js";
import ts from "@speed-highlight/core/languages/ts.js";
import xml from "@speed-highlight/core/languages/xml.js";
import yaml from "@speed-highlight/core/languages/yaml.js";
import { escapeHtml } from "../kit/html.ts";
import { hljsClass, SHJ_CLASSES, type TokenClass } from "../kit/highlight-classes.ts";

/** A language we highlight: its display name and which engine draws it. */
interface Language {
  name: string;
  engine: "shj" | "hljs";
}

/** Every language by our id (speed-highlight's name, or highlight.js's for the fallback ones). */
export const LANGUAGES = {
  ts: { name: "TypeScript", engine: "shj" },
  js: { name: "JavaScript", engine: "shj" },
  json: { name: "JSON", engine: "shj" },
  py: { name: "Python", engine: "shj" },
  go: { name: "Go", engine: "shj" },
  rs: { name: "Rust", engine: "shj" },
  c: { name: "C", engine: "shj" },
  java: { name: "Java", engine: "shj" },
  css: { name: "CSS", engine: "shj" },
  html: { name: "HTML", engine: "shj" },
  xml: { name: "XML", engine: "shj" },
  md: { name: "Markdown", engine: "shj" },
  yaml: { name: "YAML", engine: "shj" },
  toml: { name: "TOML", engine: "shj" },
  ini: { name: "INI", engine: "shj" },
  sql: { name: "SQL", engine: "shj" },
  bash: { name: "Shell", engine: "shj" },
  lua: { name: "Lua", engine: "shj" },
  make: { name: "Makefile", engine: "shj" },
  docker: { name: "Dockerfile", engine: "shj" },
  diff: { name: "Diff", engine: "shj" },
  pl: { name: "Perl", engine: "shj" },
  asm: { name: "Assembly", engine: "shj" },
  cpp: { name: "C++", engine: "hljs" },
  csharp: { name: "C#", engine: "hljs" },
  kotlin: { name: "Kotlin", engine: "hljs" },
  swift: { name: "Swift", engine: "hljs" },
  ruby: { name: "Ruby", engine: "hljs" },
  php: { name: "PHP", engine: "hljs" },
  r: { name: "R", engine: "hljs" },
  objectivec: { name: "Objective-C", engine: "hljs" },
  scss: { name: "SCSS", engine: "hljs" },
  less: { name: "Less", engine: "hljs" },
  graphql: { name: "GraphQL", engine: "hljs" },
  vbnet: { name: "Visual Basic .NET", engine: "hljs" },
  wasm: { name: "WebAssembly", engine: "hljs" },
} as const satisfies Record<string, Language>;

/** A language's id (a key of LANGUAGES). */
export type LanguageId = keyof typeof LANGUAGES;

/** Whole file names (lower case) that name their language. */
const BY_NAME: Readonly<Record<string, LanguageId>> = {
  makefile: "make",
  gnumakefile: "make",
  dockerfile: "docker",
  containerfile: "docker",
  gemfile: "ruby",
  rakefile: "ruby",
  ".bashrc": "bash",
  ".bash_profile": "bash",
  ".profile": "bash",
  ".zshrc": "bash",
  ".editorconfig": "ini",
  ".gitconfig": "ini",
  "cargo.lock": "toml",
};

/** Extensions (lower case) and their language. */
const BY_EXT: Readonly<Record<string, LanguageId>> = {
  ts: "ts",
  tsx: "ts",
  mts: "ts",
  cts: "ts",
  js: "js",
  jsx: "js",
  mjs: "js",
  cjs: "js",
  json: "json",
  jsonc: "json",
  py: "py",
  pyi: "py",
  pyw: "py",
  go: "go",
  rs: "rs",
  c: "c",
  h: "c",
  java: "java",
  css: "css",
  html: "html",
  htm: "html",
  xhtml: "html",
  vue: "html",
  svelte: "html",
  xml: "xml",
  svg: "xml",
  xsl: "xml",
  xslt: "xml",
  xsd: "xml",
  plist: "xml",
  csproj: "xml",
  md: "md",
  markdown: "md",
  yaml: "yaml",
  yml: "yaml",
  toml: "toml",
  ini: "ini",
  cfg: "ini",
  conf: "ini",
  properties: "ini",
  sql: "sql",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  ksh: "bash",
  lua: "lua",
  mk: "make",
  mak: "make",
  dockerfile: "docker",
  diff: "diff",
  patch: "diff",
  pl: "pl",
  pm: "pl",
  asm: "asm",
  s: "asm",
  nasm: "asm",
  cpp: "cpp",
  cc: "cpp",
  cxx: "cpp",
  "c++": "cpp",
  hpp: "cpp",
  hh: "cpp",
  hxx: "cpp",
  ino: "cpp",
  cs: "csharp",
  kt: "kotlin",
  kts: "kotlin",
  swift: "swift",
  rb: "ruby",
  rake: "ruby",
  gemspec: "ruby",
  php: "php",
  r: "r",
  m: "objectivec",
  mm: "objectivec",
  scss: "scss",
  less: "less",
  graphql: "graphql",
  gql: "graphql",
  vb: "vbnet",
  wat: "wasm",
  wast: "wasm",
};

/** Our language id for a file name, or null (shown plain). */
export function languageOf(path: string): LanguageId | null {
  const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (Object.hasOwn(BY_NAME, base)) return BY_NAME[base]!;
  const dot = base.lastIndexOf(".");
  if (dot < 0) return null;
  const ext = base.slice(dot + 1);
  return Object.hasOwn(BY_EXT, ext) ? BY_EXT[ext]! : null;
}

/**
 * speed-highlight's grammars by the names they refer to each other by (a sub-language such as
 * `jsdoc` or `regex`, a Markdown fence's info string). Why a null prototype: a fence's info string
 * is file content, and `constructor` or `__proto__` must find nothing rather than Object's members.
 */
const GRAMMARS: Record<string, ShjLanguageData> = Object.assign(Object.create(null) as Record<string, ShjLanguageData>, {
  asm,
  bash,
  c,
  css,
  diff,
  docker,
  go,
  html: htmlLang,
  ini,
  java,
  js,
  jsdoc,
  json,
  lua,
  make,
  md,
  pl,
  py,
  regex,
  rs,
  sql,
  todo,
  toml,
  ts,
  xml,
  yaml,
  // Fence names people write in Markdown.
  typescript: ts,
  javascript: js,
  python: py,
  rust: rs,
  golang: go,
  sh: bash,
  shell: bash,
  zsh: bash,
  console: bash,
  yml: yaml,
  perl: pl,
  dockerfile: docker,
  makefile: make,
  h: c,
  patch: diff,
  svg: xml,
});

/** The characters escapeHtml replaces (most runs have none: skip its replace). */
const SPECIAL = /[&<>"']/;

/** Spaces and tabs alone: a gap a coloured run may take in when the same class follows it. */
const BLANK = /^[ \t]+$/;

/**
 * `code` (lines joined by "\n") as one markup fragment per line, with speed-highlight: each
 * token's text escaped and wrapped in its class's span (kit/highlight-classes.ts), a token
 * spanning lines (a block comment, a template string) closed at each line's end and reopened on the
 * next, so every line is well-formed alone. Why runs: tokens of one class, and the blanks between
 * them (`export const`), share one span, and plain text has none: a diff page carries a span per
 * run, not per token. Null when the tokenizer did not account for every character (never seen;
 * the caller then shows plain text rather than lose any).
 */
export function shjLines(code: string, language: string): string[] | null {
  const grammar = GRAMMARS[language];
  if (!grammar) return null;
  const out: string[] = [];
  let line = "";
  let cls: TokenClass | undefined;
  let run = "";
  /** Blanks after a coloured run, held until the next token says whether the run goes on. */
  let gap = "";
  let seen = 0;
  const flush = () => {
    if (!run) return;
    const text = SPECIAL.test(run) ? escapeHtml(run) : run;
    line += cls ? `<span class="${cls}">${text}</span>` : text;
    run = "";
  };
  tokenizeWith(
    code,
    grammar,
    (text, type) => {
      seen += text.length;
      if (!text) return;
      const next = type ? SHJ_CLASSES[type] : undefined;
      if (cls && !next && BLANK.test(text)) {
        gap += text;
        return;
      }
      if (gap) {
        if (next === cls) run += gap;
        else {
          flush();
          line += gap;
        }
        gap = "";
      }
      if (next !== cls) {
        flush();
        cls = next;
      }
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        run += text.slice(start, nl);
        flush();
        out.push(line);
        line = "";
        start = nl + 1;
      }
      run += text.slice(start);
    },
    { languages: GRAMMARS },
  );
  flush();
  out.push(line + gap);
  return seen === code.length ? out : null;
}

/**
 * Splits highlight.js markup into lines with our classes (kit/highlight-classes.ts): each span's
 * scope mapped to its class, a scope without one (punctuation, substitutions) drawn without a
 * span, and a span open at a line break closed at the end of that line and reopened at the start
 * of the next, so each line is well-formed on its own.
 */
export function splitMarkupLines(markup: string): string[] {
  const out: string[] = [];
  /** The open spans' tags as drawn ("" for a span drawn without one). */
  const open: string[] = [];
  let depth = 0;
  let line = "";
  const tag = /<span(?: class="([^"]*)")?[^>]*>|<\/span>|\n/g;
  let last = 0;
  for (let m = tag.exec(markup); m; m = tag.exec(markup)) {
    line += markup.slice(last, m.index);
    last = tag.lastIndex;
    if (m[0] === "\n") {
      out.push(line + "</span>".repeat(depth));
      line = open.join("");
    } else if (m[0] === "</span>") {
      if (open.pop()) {
        depth--;
        line += "</span>";
      }
    } else {
      const cls = hljsClass(m[1] ?? "");
      const drawn = cls ? `<span class="${cls}">` : "";
      open.push(drawn);
      if (drawn) {
        depth++;
        line += drawn;
      }
    }
  }
  out.push(line + markup.slice(last));
  return out;
}

/**
 * `code` (lines joined by "\n") as one markup fragment per line in `language` (an id of
 * LANGUAGES), or null when it cannot be highlighted. Why the markup is safe to use unescaped:
 * speed-highlight's text goes through escapeHtml and its classes come from a fixed table;
 * highlight.js escapes every character of the source (&, <, >, ", ') and adds only spans, whose
 * classes splitMarkupLines replaces with ours (kit/highlight-classes.ts, a fixed table). Tests
 * feed both hostile markup.
 */
export function markupLines(code: string, language: string): string[] | null {
  const lang: Language | null = Object.hasOwn(LANGUAGES, language) ? LANGUAGES[language as LanguageId] : null;
  if (!lang) return null;
  if (lang.engine === "shj") return shjLines(code, language);
  if (!hljs.getLanguage(language)) return null;
  return splitMarkupLines(hljs.highlight(code, { language, ignoreIllegals: true }).value);
}

/** A fence's language name: letters, digits and the few signs names use (`c++`, `c#`, `objective-c`). */
const FENCE_NAME = /^[a-z0-9][a-z0-9+#._-]{0,31}$/;

/**
 * The engine and grammar a Markdown fence's language name (its info string's first word) means,
 * or null: speed-highlight's grammars and their common aliases first, then highlight.js's
 * (`ruby`, `rb`, `cpp`, `c++`, `cs`, `kotlin`, `php`, …). Why `weight`: highlight.js takes about
 * four times speed-highlight's CPU per byte; the caller's budget counts bytes × weight.
 */
export function fenceLanguage(info: string): { name: string; weight: number } | null {
  const name = info.toLowerCase();
  if (!FENCE_NAME.test(name)) return null;
  if (GRAMMARS[name]) return { name, weight: 1 };
  // Why the prototype check: highlight.js keeps its aliases in a plain object.
  if (name in Object.prototype) return null;
  return hljs.getLanguage(name) ? { name, weight: 4 } : null;
}

/** A fence's code as one markup fragment per line in the language `fenceLanguage` answered (null: shown plain). */
export function fenceLines(code: string, language: { name: string; weight: number }): string[] | null {
  if (language.weight === 1) return shjLines(code, language.name);
  return splitMarkupLines(hljs.highlight(code, { language: language.name, ignoreIllegals: true }).value);
}

/** The language of a batch job: `code` is JSON `{ code, language }[]` (a diff's hunk sides), the markup one JSON line. */
export const PARTS = "@parts";

/**
 * A batch of parts highlighted in one job: JSON of each part's lines (or null: that part plain).
 * JSON escapes newlines, so the answer is one line, as the thread's protocol wants.
 */
export function markupParts(json: string): string {
  const parts = JSON.parse(json) as { code: string; language: string }[];
  return JSON.stringify(
    parts.map((p) => {
      try {
        return markupLines(p.code, p.language);
      } catch {
        return null;
      }
    }),
  );
}
