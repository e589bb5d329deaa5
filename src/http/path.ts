// Request paths on the hot path, without building URL objects; the one place a path is checked.

/** The path of a request URL without building a URL object (hot path); relative URLs too. */
export function pathOf(url: string): string {
  const start = url.charCodeAt(0) === 0x2f ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

/**
 * Whether every percent-escape of `path` decodes (to UTF-8). The front door answers 400 for a
 * path that does not, before any route sees it, so routes never meet an undecodable parameter.
 */
export function wellFormedPath(path: string): boolean {
  if (!path.includes("%")) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
