// A plain HttpTransport for the fetch client in tests: global fetch, redirects not followed.
import type { HttpTransport } from "../../src/git/fetch-client.ts";

/** Sends the fetch client's requests with global fetch; `log` collects method and URL. */
export function plainTransport(log?: string[]): HttpTransport {
  return async (r) => {
    log?.push(`${r.method} ${r.url}`);
    const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body as BodyInit | undefined, redirect: "manual" });
    const reader = res.body?.getReader() ?? null;
    let cancelled = false;
    return {
      status: res.status,
      header: (name) => res.headers.get(name),
      body: (async function* () {
        if (!reader) return;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          yield value;
        }
      })(),
      async cancel() {
        if (cancelled || !reader) return;
        cancelled = true;
        await reader.cancel().catch(() => {});
      },
    };
  };
}
