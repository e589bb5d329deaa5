// The classes of highlighted code: one map for both engines (repos/highlight-engine.ts: speed-
// highlight's token types, highlight.js's scopes), the Markdown sanitizer's list and the
// stylesheet (HIGHLIGHT_CSS, built here from the same map), so markup and styles cannot drift.
// Why one letter: a highlighted page carries a class per token; `hl-kwd` and `hljs-keyword` made
// the 50-file commit page 70% larger than the plain one (bench §53). The letters are used by no
// other markup (a test checks), and mean the same whichever engine drew the code.
import type { ShjToken } from "@speed-highlight/core/tokenize";

/**
 * Each class and its declarations. Colours follow GitHub's palettes (the `--hl-*` variables below;
 * contrast checked by axe in the browser tests): each keeps 4.5:1 on the page and on a marked line
 * (--mark) in both themes, which is why deletions and TODO markers take the keyword red rather
 * than --bad (3.97:1 on dark --mark).
 */
export const TOKEN_STYLES = {
  /** Keywords, deletions. */
  k: "color:var(--hl-kw)",
  /** Strings, regular expressions. */
  s: "color:var(--hl-str)",
  /** Comments, meta. */
  m: "color:var(--hl-com)",
  /** Numbers, literals, variables, attributes. */
  d: "color:var(--hl-num)",
  /** Functions, titles. */
  f: "color:var(--hl-fn)",
  /** Types, built-ins, properties. */
  t: "color:var(--hl-type)",
  /** Tags, insertions. */
  g: "color:var(--hl-tag)",
  /** Errors and TODO markers (speed-highlight). */
  e: "color:var(--hl-kw);font-weight:600",
  /** Sections (speed-highlight). */
  h: "color:var(--hl-fn);font-weight:600",
  /** Emphasis (highlight.js). */
  i: "font-style:italic",
  /** Strong (highlight.js). */
  b: "font-weight:700",
} as const;

/** A class of highlighted code. */
export type TokenClass = keyof typeof TOKEN_STYLES;

/** Every class, for the sanitizer's list of classes a span may keep. */
export const TOKEN_CLASSES: readonly TokenClass[] = Object.keys(TOKEN_STYLES) as TokenClass[];

/**
 * speed-highlight's token types and their class. Operators and punctuation (a third of a
 * program's tokens) are left uncoloured, as GitHub does.
 */
export const SHJ_CLASSES: Readonly<Partial<Record<ShjToken, TokenClass>>> = {
  kwd: "k",
  str: "s",
  cmnt: "m",
  num: "d",
  bool: "d",
  func: "f",
  class: "t",
  type: "t",
  var: "d",
  section: "h",
  insert: "g",
  deleted: "k",
  err: "e",
  esc: "k",
};

/** highlight.js's scopes (the class after `hljs-`) and their class; any other scope is drawn without a span. */
const HLJS_CLASSES: Readonly<Record<string, TokenClass>> = {
  keyword: "k",
  "template-tag": "k",
  "template-variable": "k",
  "selector-tag": "k",
  deletion: "k",
  string: "s",
  regexp: "s",
  comment: "m",
  code: "m",
  formula: "m",
  meta: "m",
  quote: "m",
  number: "d",
  literal: "d",
  attr: "d",
  attribute: "d",
  variable: "d",
  operator: "d",
  "selector-attr": "d",
  "selector-class": "d",
  "selector-id": "d",
  symbol: "d",
  link: "d",
  title: "f",
  section: "f",
  type: "t",
  built_in: "t",
  params: "t",
  property: "t",
  name: "g",
  tag: "g",
  bullet: "g",
  addition: "g",
  emphasis: "i",
  strong: "b",
};

/**
 * The class of a highlight.js span's class attribute (`hljs-title function_`, `hljs-variable
 * language_`), or null: no span. Sub-scopes that had a colour of their own keep it (a class
 * name's title is a type, the language's own variables are keywords).
 */
export function hljsClass(attr: string): TokenClass | null {
  if (!attr.startsWith("hljs-")) return null;
  const space = attr.indexOf(" ");
  const scope = space < 0 ? attr.slice(5) : attr.slice(5, space);
  if (space >= 0) {
    const subs = attr.slice(space + 1).split(" ");
    if (scope === "title" && subs.includes("class_")) return "t";
    if (scope === "variable" && subs.includes("language_")) return "k";
    if (scope === "type" && subs.includes("hljs-class")) return "k";
  }
  return Object.hasOwn(HLJS_CLASSES, scope) ? HLJS_CLASSES[scope]! : null;
}

/** The highlighted code's colours (light and dark) and every class's rule, for the stylesheet (kit/assets.ts). */
export const HIGHLIGHT_CSS = `
:root{--hl-kw:#cf222e;--hl-str:#0a3069;--hl-com:#59636e;--hl-num:#0550ae;--hl-fn:#6639ba;--hl-type:#953800;--hl-tag:#116329}
@media (prefers-color-scheme:dark){:root{--hl-kw:#ff7b72;--hl-str:#a5d6ff;--hl-com:#9198a1;--hl-num:#79c0ff;--hl-fn:#d2a8ff;--hl-type:#ffa657;--hl-tag:#7ee787}}
${TOKEN_CLASSES.map((c) => `span.${c}{${TOKEN_STYLES[c]}}`).join("")}
`;
