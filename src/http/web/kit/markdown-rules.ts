// markdown-it rules of the GitHub-flavoured renderer (markdown.ts): heading ids and anchors,
// task-list checkboxes, table alignment as `align`, fenced code through a highlighter. Each works
// on markdown-it's tokens of one render, with that render's `RenderEnv` (no state between renders).
import type { MarkdownIt, StateCore, Token } from "markdown-it";

/** The prefix of every id and name that comes from a document, so none can clobber the page's own (`main`, a form's). */
export const USER_CONTENT = "user-content-";

/** A fence's language, as the highlighter answers it (weight: CPU per byte relative to the cheapest engine). */
export interface FenceLanguage {
  name: string;
  weight: number;
}

/**
 * Syntax highlighting of fenced code (repos/markdown-fence.ts; passed in so only the threads that
 * render big documents load the grammars). `lines` answers one markup fragment per line, whose
 * only tags are `<span class="…">` (a class of kit/highlight-classes.ts) around escaped text, or null (shown plain).
 */
export interface FenceHighlighter {
  language(info: string): FenceLanguage | null;
  lines(code: string, language: FenceLanguage): string[] | null;
}

/** What one render carries through the rules. */
export interface RenderEnv extends Record<PropertyKey, unknown> {
  /** A random value only our own checkboxes carry (the sanitizer refuses any other `<input>`). */
  nonce: string;
  /** Heading slugs seen so far and how often (GitHub's numbering of duplicates: `-1`, `-2`). */
  slugs: Map<string, number>;
  /** Fenced code highlighter, or null (plain). */
  fence: FenceHighlighter | null;
  /** Bytes × weight of fenced code still allowed highlighting in this document. */
  budget: number;
  /**
   * Highlighted blocks, by index: the sanitizer sees `blockMark(nonce, i)` (plain text) in their
   * place and markdownToHtml swaps them back after it (the highlighter's markup is escaped text in
   * class spans, as the file view trusts it; parsing it again was most of a code-heavy README's
   * time). The nonce is random per render, so a document cannot write a mark.
   */
  blocks: string[];
}

/** A fence line longer than this is minified or generated: the whole block is shown plain. */
const FENCE_LINE_LIMIT = 4000;

/**
 * GitHub's heading slug (github-slugger): lower case, every character that is no letter, mark,
 * number, connector (`_`), space or hyphen dropped, each space a hyphen.
 */
export function slugOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The slug of `text` made unique in the document the way github-slugger does (`a`, `a-1`, `a-2`). */
export function uniqueSlug(slugs: Map<string, number>, text: string): string {
  const original = slugOf(text);
  let slug = original;
  while (slugs.has(slug)) {
    const n = (slugs.get(original) ?? 0) + 1;
    slugs.set(original, n);
    slug = `${original}-${n}`;
  }
  slugs.set(slug, 0);
  return slug;
}

/** The text a reader sees of inline tokens (text and code spans; markup and images left out). */
function plainText(children: Token[] | null): string {
  let out = "";
  for (const c of children ?? []) if (c.type === "text" || c.type === "code_inline") out += c.content;
  return out;
}

/** Ids on headings (`user-content-` + slug), their text kept for the anchor's accessible name. */
function headingIds(tokens: Token[], env: RenderEnv): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type !== "heading_open") continue;
    const text = plainText(tokens[i + 1]?.children ?? null).trim();
    const slug = uniqueSlug(env.slugs, text);
    if (!slug) continue;
    t.attrSet("id", USER_CONTENT + slug);
    t.meta = { anchor: USER_CONTENT + slug, text };
  }
}

const TASK = /^\[([ xX])\](?=\s|$)/;

/** `- [ ]` / `- [x]` items: a disabled checkbox named by the item's text, classes GitHub uses. */
function taskLists(state: StateCore, env: RenderEnv, esc: (s: string) => string): void {
  const tokens = state.tokens;
  for (let i = 2; i < tokens.length; i++) {
    const inline = tokens[i]!;
    if (inline.type !== "inline" || tokens[i - 1]!.type !== "paragraph_open" || tokens[i - 2]!.type !== "list_item_open") continue;
    const first = inline.children?.[0];
    if (!first || first.type !== "text") continue;
    const m = TASK.exec(first.content);
    if (!m) continue;
    first.content = first.content.slice(3).replace(/^\s/, "");
    const checked = m[1] !== " ";
    const label = plainText(inline.children).trim().slice(0, 200) || "Task";
    const box = new state.Token("html_inline", "", 0);
    box.content = `<input type="checkbox" class="task-list-item-checkbox" disabled${checked ? " checked" : ""} aria-label="${esc(label)}" data-own="${env.nonce}"> `;
    inline.children!.unshift(box);
    const item = tokens[i - 2]!;
    item.attrJoin("class", "task-list-item");
    for (let j = i - 3; j >= 0; j--) {
      const t = tokens[j]!;
      if ((t.type === "bullet_list_open" || t.type === "ordered_list_open") && t.level === item.level - 1) {
        if (!t.attrGet("class")) t.attrSet("class", "contains-task-list");
        break;
      }
    }
  }
}

/** Table cells' `style="text-align:…"` (which the sanitizer drops with every style) as `align`. */
function tableAlign(tokens: Token[]): void {
  for (const t of tokens) {
    if (t.type !== "th_open" && t.type !== "td_open") continue;
    const style = t.attrGet("style");
    if (typeof style !== "string") continue;
    const m = /^text-align:(left|center|right)$/.exec(style);
    t.attrs = (t.attrs ?? []).filter(([k]) => k !== "style");
    if (m) t.attrSet("align", m[1]!);
  }
}

/**
 * GFM's `www.` autolinks (linkify-it links only URLs with a scheme here: its fuzzy mode would link
 * `README.md`): a host of dot-separated labels, then a path up to whitespace or `<`, without the
 * trailing punctuation GFM leaves out. Bounded and sticky: each `www.` costs at most ~2,300 steps.
 */
function wwwLinks(md: MarkdownIt): void {
  md.linkify.add("www.", {
    validate: (text: string, pos: number) => {
      const re = /[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?){1,8}(?:[/?#][^\s<>]{0,2000})?/iy;
      re.lastIndex = pos;
      const m = re.exec(text);
      return m ? m[0].replace(/[.,:;!?'")\]*_~]+$/, "").length : 0;
    },
    normalize: (match) => {
      match.url = `http://${match.url}`;
    },
  });
}

/** Installs the rules on a markdown-it instance (once, where it is made). */
export function gfmRules(md: MarkdownIt): void {
  const esc = md.utils.escapeHtml;
  wwwLinks(md);
  md.core.ruler.push("svc_gfm", (state) => {
    const env = state.env as unknown as RenderEnv;
    headingIds(state.tokens, env);
    taskLists(state, env, esc);
    tableAlign(state.tokens);
    return true;
  });

  // The heading's anchor: a link to its own id, shown on hover or focus, named for screen readers.
  // Beside the heading, not in it (as GitHub now draws it): the heading's name stays its text.
  md.renderer.rules.heading_open = (tokens, idx, options, _env, self) => {
    const open = tokens[idx]!;
    return `${open.meta ? '<div class="markdown-heading">' : ""}${self.renderToken(tokens, idx, options)}`;
  };
  md.renderer.rules.heading_close = (tokens, idx) => {
    const close = tokens[idx]!;
    const open = tokens[idx - 2];
    const meta = open?.type === "heading_open" ? (open.meta as { anchor: string; text: string } | null) : null;
    if (!meta) return `</${close.tag}>\n`;
    return `</${close.tag}><a class="anchor" href="#${esc(meta.anchor)}" aria-label="${esc(`Permalink: ${meta.text.slice(0, 200)}`)}">#</a></div>\n`;
  };

  // Fenced code: `language-…` class from the info string; highlighted while the document's budget
  // lasts; focusable, since a long line scrolls it sideways (keyboard users must reach it).
  md.renderer.rules.fence = (tokens, idx, _options, e) => {
    const env = e as unknown as RenderEnv;
    const t = tokens[idx]!;
    const info = t.info ? md.utils.unescapeAll(t.info).trim() : "";
    const word = info.split(/\s+/)[0] ?? "";
    const cls = /^[\w+#-]{1,40}$/.test(word) ? ` class="language-${esc(word.toLowerCase())}"` : "";
    const code = t.content;
    let body: string | null = null;
    const lang = env.fence && word ? env.fence.language(word) : null;
    if (lang && env.fence && code.length * lang.weight <= env.budget && !hasLongLine(code)) {
      env.budget -= code.length * lang.weight;
      const lines = env.fence.lines(code, lang);
      if (lines) {
        env.blocks.push(lines.join("\n"));
        body = `${blockMark(env.nonce, env.blocks.length - 1)}`;
      }
    }
    return `<pre tabindex="0"><code${cls}>${body ?? esc(code)}</code></pre>\n`;
  };

  // Indented code: focusable too (a long line scrolls it sideways, and keyboard users must reach it).
  md.renderer.rules.code_block = (tokens, idx) => `<pre tabindex="0"><code>${esc(tokens[idx]!.content)}</code></pre>\n`;
}

/** The stand-in of highlighted block `i` until the sanitizer has run (text it keeps as is: letters, digits, hyphens). */
export function blockMark(nonce: string, i: number): string {
  return `svc-hl-${nonce}-${i}-end`;
}

function hasLongLine(code: string): boolean {
  let start = 0;
  for (let nl = code.indexOf("\n"); nl >= 0; nl = code.indexOf("\n", start)) {
    if (nl - start > FENCE_LINE_LIMIT) return true;
    start = nl + 1;
  }
  return code.length - start > FENCE_LINE_LIMIT;
}
