// The fetch client's HTTP, for mirror origins: every request goes through the egress checks
// (public addresses only unless SVC_MIRROR_ALLOW_PRIVATE, the checked address connected to,
// redirects not followed) and stops with the sync's signal.
import type { HttpTransport } from "../../git/fetch-client.ts";
import { egressFetch, parseEgressUrl } from "../../util/egress.ts";

/** Time to wait for an origin's response headers. */
const HEADERS_TIMEOUT_MS = 60_000;

/** An HttpTransport for origins; `signal` ends everything (the sync's time limit). */
export function originTransport(opts: { allowPrivate: boolean; signal: AbortSignal }): HttpTransport {
  return async (req) => {
    const headersTimeout = AbortSignal.timeout(HEADERS_TIMEOUT_MS);
    const aborter = new AbortController();
    const onAbort = () => aborter.abort(opts.signal.reason);
    opts.signal.addEventListener("abort", onAbort, { once: true });
    const onHeadersTimeout = () => aborter.abort(new Error(`origin sent no answer within ${HEADERS_TIMEOUT_MS / 1000} s`));
    headersTimeout.addEventListener("abort", onHeadersTimeout, { once: true });
    let res: Response;
    try {
      res = await egressFetch(parseEgressUrl(req.url, "origin URL", { allowCredentials: true }), {
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal: aborter.signal,
        allowPrivate: opts.allowPrivate,
      });
    } finally {
      headersTimeout.removeEventListener("abort", onHeadersTimeout);
    }
    const reader = res.body?.getReader() ?? null;
    let cancelled = false;
    const release = () => opts.signal.removeEventListener("abort", onAbort);
    return {
      status: res.status,
      header: (name) => res.headers.get(name),
      body: (async function* () {
        if (!reader) return;
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            yield value;
          }
        } finally {
          release();
        }
      })(),
      async cancel() {
        release();
        if (cancelled || !reader) return;
        cancelled = true;
        await reader.cancel().catch(() => {});
      },
    };
  };
}
