// The source address of an HTTP request: the peer of the TCP connection, or, behind a trusted
// reverse proxy (SVC_TRUST_PROXY=1), the address that proxy appended to X-Forwarded-For. Rate
// limits count per source address (README "Operations: limits").

const sources = new WeakMap<Request, string>();

/** What a request that did not come through the front door (in-process tests) counts as. */
export const UNKNOWN_SOURCE = "unknown";

/**
 * The client address of `request` as the front door sees it. Why the last X-Forwarded-For entry:
 * a client may send the header itself, and a proxy appends the peer it saw, so only the entry
 * added by our own proxy is trustworthy. Without SVC_TRUST_PROXY the header is ignored, since
 * anyone could claim any address with it.
 */
export function sourceAddress(request: Request, peer: string | null | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const header = request.headers.get("x-forwarded-for");
    const last = header?.split(",").pop()?.trim();
    if (last && last.length <= 64 && /^[0-9A-Fa-f:.]+$/.test(last)) return last;
  }
  return peer || UNKNOWN_SOURCE;
}

/** Remembers the source address the front door found for `request`. */
export function rememberSource(request: Request, address: string): void {
  sources.set(request, address);
}

/** The source address of `request` (UNKNOWN_SOURCE when the front door did not see it). */
export function sourceOf(request: Request): string {
  return sources.get(request) ?? UNKNOWN_SOURCE;
}
