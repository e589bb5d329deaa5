// GitHub-flavoured Markdown (READMEs, issue and change bodies): markdown-it with raw HTML on, its
// GFM rules (tables, strikethrough, autolinks; task lists, heading anchors, highlighted fences in
// markdown-rules.ts), then sanitize-html (a well-kept sanitizer, never our own) as the one wall:
// an allowlist of tags, attributes, classes and URL schemes (GitHub's, less what the page does
// not need). Relative links point into the repository (file view), relative images and
// `<source srcset>` at the raw file, `..` never above the root; every id and name a document
// sets is prefixed `user-content-` and in-document `#slug` links follow, so a table of contents
// works without JavaScript and no document can clobber the page's own ids.
import MarkdownIt from "markdown-it";
import sanitizeHtml from "sanitize-html";
import { TOKEN_CLASSES } from "./highlight-classes.ts";
import { html, trusted, type Html } from "./html.ts";
import { blockMark, type FenceHighlighter, gfmRules, type RenderEnv, USER_CONTENT } from "./markdown-rules.ts";
import type { Threads } from "../../../threads.ts";
import { ThreadTaskError } from "../../../util/thread-pool.ts";

const md = new MarkdownIt({ html: true, linkify: true, typographer: false });
gfmRules(md);

/** The largest Markdown source rendered; larger files are shown as text. */
export const MARKDOWN_LIMIT = 512 * 1024;

/** Where relative links resolve: the repository's pages and the file's directory at one ref. */
export interface LinkBase {
  /** `/org/repo` */
  repo: string;
  /** the ref as it appears in URLs (percent-encoded segments) */
  ref: string;
  /** the directory of the Markdown file, `a/b` or empty */
  dir: string;
}

const ABSOLUTE = /^(?:[a-z][a-z0-9+.-]*:|\/\/|\/|#|\?)/i;

/**
 * A relative link resolved against `dir`, normalised so `..` cannot climb above the root — as a
 * browser reads the path: `\\` is a separator and `%2e` a dot in http(s) URLs.
 */
export function resolveRelative(dir: string, href: string): string {
  const cut = href.search(/[?#]/);
  const path = cut < 0 ? href : href.slice(0, cut);
  const rest = cut < 0 ? "" : href.slice(cut);
  const parts = dir ? dir.split("/") : [];
  for (const p of path.split(/[/\\]/)) {
    const dots = p.replace(/%2e/gi, ".");
    if (p === "" || dots === ".") continue;
    if (dots === "..") parts.pop();
    else parts.push(p);
  }
  return parts.join("/") + rest;
}

/**
 * Sources up to this many characters render on the event loop; bigger ones, and any with a
 * fence (highlighting runs grammars' regular expressions over the text), on a worker thread.
 */
export const MARKDOWN_INLINE = 16 * 1024;
/** Fenced code highlighted per document, in bytes × the engine's weight (beyond it, plain). */
export const MARKDOWN_HIGHLIGHT_BUDGET = 128 * 1024;
/** How long rendering one big source may take on its thread (then it is shown as text). */
export const MARKDOWN_TIME_LIMIT_MS = 2000;

/** Renders Markdown to sanitized markup (fenced code plain: highlighting is the thread's). */
export function renderMarkdown(source: string, base: LinkBase): Html {
  return trusted(markdownToHtml(source, base));
}

/** Whether a source may hold fenced code (then it renders on a thread, where fences are highlighted). */
function mayHaveFence(source: string): boolean {
  return source.includes("```") || source.includes("~~~");
}

/**
 * Renders Markdown, a big source on a worker thread (the `web.renderMarkdown` task) within
 * MARKDOWN_TIME_LIMIT_MS. Why: markdown-it and the sanitizer take time that grows with the
 * input, some inputs much faster than their size (issue 25: big inputs off the event loop).
 * A source with fences renders there too, its code highlighted; past the time limit it is
 * rendered again without highlighting (a grammar that backtracks costs the colours, not the
 * document). When the thread cannot (time limit, a busy pool, a failure), the source is shown as text.
 */
export async function renderMarkdownOffloaded(threads: Threads, source: string, base: LinkBase): Promise<Html> {
  return (await renderMarkdownOutcome(threads, source, base)).html;
}

/**
 * As renderMarkdownOffloaded, saying whether the markup is the document's own (`final`: rendered
 * in full) or a stand-in for now (plain fences or the text, because the thread was busy or slow):
 * only a final rendering may be remembered.
 */
export async function renderMarkdownOutcome(threads: Threads, source: string, base: LinkBase): Promise<{ html: Html; final: boolean }> {
  const fences = mayHaveFence(source);
  if (source.length <= MARKDOWN_INLINE && !fences) return { html: renderMarkdown(source, base), final: true };
  try {
    return { html: trusted(await threads.run("web.renderMarkdown", { source, base }, { timeLimitMs: MARKDOWN_TIME_LIMIT_MS })), final: true };
  } catch (e) {
    if (!(e instanceof ThreadTaskError)) throw e;
    if (e.kind === "time_limit" && fences) {
      try {
        return {
          html: trusted(await threads.run("web.renderMarkdown", { source, base, plain: true }, { timeLimitMs: MARKDOWN_TIME_LIMIT_MS })),
          final: false,
        };
      } catch (again) {
        if (!(again instanceof ThreadTaskError)) throw again;
      }
    }
    return { html: html`<pre>${source}</pre>`, final: false };
  }
}

/** Tags a document may use (GitHub's allowlist, less what the page does not need). */
export const ALLOWED_TAGS: readonly string[] = [
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "p",
  "div",
  "br",
  "hr",
  "blockquote",
  "pre",
  "code",
  "samp",
  "kbd",
  "var",
  "tt",
  "em",
  "strong",
  "b",
  "i",
  "s",
  "strike",
  "del",
  "ins",
  "mark",
  "small",
  "sub",
  "sup",
  "abbr",
  "dfn",
  "cite",
  "q",
  "wbr",
  "ruby",
  "rt",
  "rp",
  "span",
  "a",
  "img",
  "picture",
  "source",
  "figure",
  "figcaption",
  "details",
  "summary",
  "ul",
  "ol",
  "li",
  "dl",
  "dt",
  "dd",
  "table",
  "caption",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "th",
  "td",
  // Only our own task-list checkboxes (the transform below refuses any other).
  "input",
];

const ALIGNED = ["h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "table", "th", "td", "img"] as const;

/** Attributes by tag. `id` and `name` are prefixed `user-content-` by the transform. */
const ALLOWED_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ["href", "title", "rel", "name", "id", "class", "aria-label"],
  img: ["src", "alt", "title", "width", "height", "align"],
  source: ["srcset", "media", "type"],
  details: ["open"],
  abbr: ["title"],
  dfn: ["title"],
  ol: ["start", "class"],
  ul: ["class"],
  li: ["class"],
  code: ["class"],
  span: ["class"],
  th: ["align", "colspan", "rowspan"],
  td: ["align", "colspan", "rowspan"],
  input: ["type", "class", "disabled", "checked", "aria-label"],
  ...Object.fromEntries(["h1", "h2", "h3", "h4", "h5", "h6"].map((h) => [h, ["id", "align"]])),
  p: ["align"],
  div: ["align", "class"],
  // Only tabindex="0" (see the transform): code that scrolls sideways is reachable by keyboard.
  pre: ["tabindex"],
  table: ["align"],
};

/** Our classes, the only ones kept. */
const ALLOWED_CLASSES: Readonly<Record<string, readonly (string | RegExp)[]>> = {
  code: [/^language-[\w+#-]+$/],
  div: ["markdown-heading"],
  span: TOKEN_CLASSES,
  a: ["anchor"],
  li: ["task-list-item"],
  ul: ["contains-task-list"],
  ol: ["contains-task-list"],
  input: ["task-list-item-checkbox"],
};

/** Elements whose content is dropped with them (not shown as text). */
const DROPPED_WITH_CONTENT: readonly string[] = [
  "script",
  "style",
  "textarea",
  "option",
  "select",
  "noscript",
  "title",
  "xmp",
  "noembed",
  "noframes",
  "iframe",
  "template",
  "plaintext",
  "svg",
  "math",
  "object",
];

/** What browsers strip from anywhere in a URL before parsing it. */
const URL_IGNORED = /[\t\n\r]/g;

/** A srcset candidate's descriptor: a width, a density or a height. */
const SRCSET_DESCRIPTOR = /^\d{1,6}(?:\.\d{1,4})?[wxh]$/;

/** A `srcset` value's candidates: each URL (resolved by `fix`) and its descriptor as written (a candidate whose descriptor is no width or density is dropped). */
export function mapSrcset(value: string, fix: (url: string) => string): string {
  const out: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /[\s,]/.test(value[i]!)) i++;
    if (i >= value.length) break;
    let j = i;
    while (j < value.length && !/\s/.test(value[j]!)) j++;
    let url = value.slice(i, j);
    let descriptor = "";
    if (url.endsWith(",")) url = url.replace(/,+$/, "");
    else {
      let k = j;
      let depth = 0;
      while (k < value.length && (depth > 0 || value[k] !== ",")) {
        if (value[k] === "(") depth++;
        else if (value[k] === ")") depth = Math.max(0, depth - 1);
        k++;
      }
      descriptor = value.slice(j, k).trim();
      j = k;
    }
    // Why drop a bad descriptor's candidate: the sanitizer's srcset parser would print a warning per one.
    if (!descriptor || SRCSET_DESCRIPTOR.test(descriptor)) out.push(descriptor ? `${fix(url)} ${descriptor}` : fix(url));
    i = j;
  }
  return out.join(", ");
}

/** Options passed to markdownToHtml. */
export interface MarkdownOptions {
  /** Highlights fenced code (the `web.renderMarkdown` thread passes one; elsewhere code is plain). */
  fence?: FenceHighlighter | null;
}

/** Markdown as sanitized markup text (pure: the `web.renderMarkdown` thread task runs it). */
export function markdownToHtml(source: string, base: LinkBase, o: MarkdownOptions = {}): string {
  const env: RenderEnv = {
    nonce: crypto.randomUUID().replaceAll("-", ""),
    slugs: new Map(),
    fence: o.fence ?? null,
    budget: MARKDOWN_HIGHLIGHT_BUDGET,
    blocks: [],
  };
  const raw = md.render(source, env);
  const resolve = (url: string, kind: "blob" | "raw"): string => {
    const clean = url.replace(URL_IGNORED, "").trim();
    if (!clean || ABSOLUTE.test(clean) || clean.startsWith("\\")) return clean;
    return `${base.repo}/${kind}/${base.ref}/${resolveRelative(base.dir, clean)}`;
  };
  const clean = sanitizeHtml(raw, {
    allowedTags: [...ALLOWED_TAGS],
    allowedAttributes: ALLOWED_ATTRIBUTES as Record<string, string[]>,
    allowedClasses: ALLOWED_CLASSES as Record<string, (string | RegExp)[]>,
    // Why: javascript:, data: and vbscript: URLs are script on our origin; only these are links.
    allowedSchemes: ["http", "https", "mailto"],
    allowedSchemesByTag: { img: ["http", "https"], source: ["http", "https"] },
    allowedSchemesAppliedToAttributes: ["href", "src", "cite"],
    allowProtocolRelative: false,
    nonTextTags: [...DROPPED_WITH_CONTENT],
    selfClosing: ["img", "br", "hr", "input", "source", "wbr"],
    // Why: a browser flattens markup deeper than ~500 levels anyway, and each level costs layout.
    nestingLimit: 100,
    exclusiveFilter: (frame) => frame.tag === "input" && frame.attribs.type !== "checkbox",
    transformTags: {
      "*": (tag, attribs) => {
        const a = { ...attribs };
        for (const k of ["id", "name"] as const) {
          const v = a[k];
          if (v !== undefined) a[k] = v.startsWith(USER_CONTENT) ? v : USER_CONTENT + v;
        }
        for (const k of ["width", "height"] as const) if (a[k] !== undefined && !/^\d{1,5}%?$/.test(a[k].trim())) delete a[k];
        if (a.tabindex !== undefined && (tag !== "pre" || a.tabindex !== "0")) delete a.tabindex;
        if (a.align !== undefined && !(ALIGNED as readonly string[]).includes(tag)) delete a.align;
        if (a.align !== undefined && !/^(left|center|right|justify|top|middle|bottom)$/i.test(a.align)) delete a.align;
        if (tag === "a" && a.href !== undefined) {
          const href = a.href.replace(URL_IGNORED, "").trim();
          if (href.startsWith("#")) a.href = href.length > 1 && !href.startsWith(`#${USER_CONTENT}`) ? `#${USER_CONTENT}${href.slice(1)}` : href;
          else a.href = resolve(href, "blob");
          if (/^https?:/i.test(a.href)) a.rel = "nofollow noopener noreferrer";
          else delete a.rel;
        }
        if (tag === "img") {
          if (a.src !== undefined) a.src = resolve(a.src, "raw");
          // Why: an image without alt is read out by its URL; a document's raw <img> often has none.
          if (a.alt === undefined) a.alt = "";
        }
        if (tag === "source" && a.srcset !== undefined) a.srcset = mapSrcset(a.srcset, (u) => resolve(u, "raw"));
        if (tag === "input") {
          // Only the checkboxes markdown-rules.ts emitted carry this render's nonce.
          // (Not renamed away: sanitize-html would close the parent with the new name; exclusiveFilter drops it.)
          if (a["data-own"] !== env.nonce) return { tagName: tag, attribs: {} };
          const own: Record<string, string> = { type: "checkbox", class: "task-list-item-checkbox", disabled: "" };
          if (a.checked !== undefined) own.checked = "";
          if (a["aria-label"] !== undefined) own["aria-label"] = a["aria-label"];
          return { tagName: tag, attribs: own };
        }
        return { tagName: tag, attribs: a };
      },
    },
  });
  if (!env.blocks.length) return clean;
  // Each mark once, where the fence rule put it (inside its <code>): the highlighted markup back.
  let out = clean;
  for (const [i, block] of env.blocks.entries()) out = out.replace(blockMark(env.nonce, i), () => block);
  return out;
}
