// README rendering: markdown-it with raw HTML off (it is shown as text), then sanitize-html as a
// second wall with an allowlist of tags, attributes and URL schemes. Relative links point into
// the repository (file view), relative images at the raw file.
import MarkdownIt from "markdown-it";
import sanitizeHtml from "sanitize-html";
import { html, trusted, type Html } from "./html.ts";
import type { Threads } from "../../../threads.ts";
import { ThreadTaskError } from "../../../util/thread-pool.ts";

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

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

/** A relative link resolved against `dir`, normalised (`..` cannot climb above the root). */
function resolveRelative(dir: string, href: string): string {
  const [path, ...rest] = href.split(/(?=[?#])/);
  const parts = dir ? dir.split("/") : [];
  for (const p of (path ?? "").split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
  }
  return parts.join("/") + rest.join("");
}

/** Sources up to this many characters render on the event loop; bigger ones on a worker thread. */
export const MARKDOWN_INLINE = 16 * 1024;
/** How long rendering one big source may take on its thread (then it is shown as text). */
export const MARKDOWN_TIME_LIMIT_MS = 2000;

/** Renders Markdown to sanitized markup. */
export function renderMarkdown(source: string, base: LinkBase): Html {
  return trusted(markdownToHtml(source, base));
}

/**
 * Renders Markdown, a big source on a worker thread (the `web.renderMarkdown` task) within
 * MARKDOWN_TIME_LIMIT_MS. Why: markdown-it and the sanitizer take time that grows with the
 * input, some inputs much faster than their size (issue 25: big inputs off the event loop).
 * When the thread cannot (time limit, a busy pool, a failure), the source is shown as text.
 */
export async function renderMarkdownOffloaded(threads: Threads, source: string, base: LinkBase): Promise<Html> {
  if (source.length <= MARKDOWN_INLINE) return renderMarkdown(source, base);
  try {
    return trusted(await threads.run("web.renderMarkdown", { source, base }, { timeLimitMs: MARKDOWN_TIME_LIMIT_MS }));
  } catch (e) {
    if (!(e instanceof ThreadTaskError)) throw e;
    return html`<pre>${source}</pre>`;
  }
}

/** Markdown as sanitized markup text (pure: the `web.renderMarkdown` thread task runs it). */
export function markdownToHtml(source: string, base: LinkBase): string {
  const raw = md.render(source);
  const clean = sanitizeHtml(raw, {
    allowedTags: [
      "h1",
      "h2",
      "h3",
      "h4",
      "h5",
      "h6",
      "p",
      "br",
      "hr",
      "blockquote",
      "pre",
      "code",
      "em",
      "strong",
      "s",
      "del",
      "a",
      "img",
      "ul",
      "ol",
      "li",
      "table",
      "thead",
      "tbody",
      "tr",
      "th",
      "td",
    ],
    allowedAttributes: { a: ["href", "title", "rel"], img: ["src", "alt", "title"], code: ["class"], ol: ["start"] },
    allowedClasses: { code: [/^language-[\w+#-]+$/] },
    // Why: javascript:, data: and vbscript: URLs are script on our origin; only these are links.
    allowedSchemes: ["http", "https", "mailto"],
    allowedSchemesByTag: { img: ["http", "https"] },
    allowProtocolRelative: false,
    transformTags: {
      a: (tag, attribs) => {
        const href = attribs.href;
        if (href && !ABSOLUTE.test(href)) attribs.href = `${base.repo}/blob/${base.ref}/${resolveRelative(base.dir, href)}`;
        if (href && /^https?:/i.test(href)) attribs.rel = "nofollow noopener noreferrer";
        return { tagName: tag, attribs };
      },
      img: (tag, attribs) => {
        const src = attribs.src;
        if (src && !ABSOLUTE.test(src)) attribs.src = `${base.repo}/raw/${base.ref}/${resolveRelative(base.dir, src)}`;
        return { tagName: tag, attribs };
      },
    },
  });
  return clean;
}
