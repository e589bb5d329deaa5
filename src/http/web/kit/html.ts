// The template helper of the web pages: `html\`…\`` escapes every interpolated value unless it is
// already `Html`, so markup can only enter a page through `html` itself or an explicit `trusted()`.

/** A fragment of markup that is safe to place in a page as it is. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** One interpolated value: Html as is, arrays item by item, null/undefined/false as nothing, else escaped text. */
function piece(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(piece).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

/** Builds markup: the literal parts are kept, every value is escaped unless it is Html. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/**
 * Markup used unescaped. Why explicit: the only ways in are our own constant strings and the
 * sanitizer's output (markdown.ts); a grep for `trusted(` lists every one of them.
 */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** A path segment or query value for an href (escaped again by `html` when placed in an attribute). */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

/** A `/`-separated path with each part percent-encoded. */
export function segs(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
