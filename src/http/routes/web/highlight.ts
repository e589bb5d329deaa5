// Syntax highlighting of the file view: highlight.js (its common languages) picked by file name,
// split into one fragment per line (so every line keeps its #L anchor), cached by blob id and
// language. Why a cache: a blob's bytes never change, and highlight.js costs ~1.5 ms of CPU per
// KB (a 5,000-line TypeScript file is ~360 ms on the 2-core bench machine); the cache makes every
// view after the first a lookup. Why a bound: highlighting runs on the server's one event loop,
// so one request for a large file must not stall every other request for seconds.
import hljs from "highlight.js/lib/common";
import { ByteLru } from "../../../storage/lru.ts";
import { escapeHtml, trusted, type Html } from "./html.ts";

/** Files larger than this are shown as plain (escaped) text. */
export const HIGHLIGHT_LIMIT = 256 * 1024;
/** A line longer than this (minified code) makes the whole file plain: the grammars backtrack on it. */
export const HIGHLIGHT_LINE_LIMIT = 4000;
/** Highlighted output kept across requests (UTF-16 bytes of the markup). */
const CACHE_BYTES = 48 * 1024 * 1024;

const cache = new ByteLru<string, string[]>(CACHE_BYTES, (lines) => 64 + lines.reduce((n, l) => n + 2 * l.length + 16, 0));

/** Names highlight.js does not guess from an extension. */
const BY_NAME: Record<string, string> = { makefile: "makefile", dockerfile: "dockerfile", "cmakelists.txt": "cmake", gemfile: "ruby", rakefile: "ruby" };
/** Extensions whose highlight.js alias differs or is missing. */
const BY_EXT: Record<string, string> = { mts: "typescript", cts: "typescript", tsx: "typescript", jsx: "javascript", mjs: "javascript", cjs: "javascript", h: "c", hpp: "cpp", cc: "cpp", yml: "yaml", toml: "ini", svelte: "xml", vue: "xml", htm: "xml", html: "xml", svg: "xml" };

/** The highlight.js language for a file name, or null (shown plain). */
export function languageOf(name: string): string | null {
  const base = name.slice(name.lastIndexOf("/") + 1).toLowerCase();
  if (BY_NAME[base]) return BY_NAME[base]!;
  const dot = base.lastIndexOf(".");
  if (dot < 0) return null;
  const ext = base.slice(dot + 1);
  const lang = BY_EXT[ext] ?? ext;
  if (lang === "txt" || lang === "plaintext") return null;
  return hljs.getLanguage(lang) ? lang : null;
}

/**
 * Splits highlight.js markup into lines: a span open at a line break is closed at the end of that
 * line and reopened at the start of the next, so each line is well-formed on its own.
 */
export function splitMarkupLines(markup: string): string[] {
  const out: string[] = [];
  const open: string[] = [];
  let line = "";
  const tag = /<span[^>]*>|<\/span>|\n/g;
  let last = 0;
  for (let m = tag.exec(markup); m; m = tag.exec(markup)) {
    line += markup.slice(last, m.index);
    last = tag.lastIndex;
    if (m[0] === "\n") {
      out.push(line + "</span>".repeat(open.length));
      line = open.join("");
    } else if (m[0] === "</span>") {
      open.pop();
      line += m[0];
    } else {
      open.push(m[0]);
      line += m[0];
    }
  }
  out.push(line + markup.slice(last));
  return out;
}

/** One file's lines as markup (highlighted when its language is known and it is within the bounds, else escaped text) and the language's name. */
export function highlightLines(oid: string, name: string, lines: string[]): { lines: Html[]; language: string | null } {
  const language = languageOf(name);
  const size = lines.reduce((n, l) => n + l.length + 1, 0);
  if (!language || size > HIGHLIGHT_LIMIT || lines.some((l) => l.length > HIGHLIGHT_LINE_LIMIT)) {
    return { lines: lines.map((l) => trusted(escapeHtml(l))), language: null };
  }
  const key = `${oid}:${language}`;
  let marked = cache.get(key);
  if (!marked) {
    // Why trusted: highlight.js escapes every character of the source (&, <, >, ", ') and adds
    // only <span class="hljs-…"> from its grammars; a test feeds it hostile markup.
    marked = splitMarkupLines(hljs.highlight(lines.join("\n"), { language, ignoreIllegals: true }).value);
    cache.set(key, marked);
  }
  return { lines: marked.map(trusted), language: hljs.getLanguage(language)?.name ?? language };
}
