// C git's own smart-HTTP server for tests: `git http-backend` run as a CGI program behind a
// Bun.serve on port 0, so the fetch client is proven against the reference implementation.
// Options: Basic credentials to require, v0 only (the Git-Protocol header is dropped, as an old
// server would), and a stall that holds a pack response after some bytes until released.
import type { Server } from "bun";

/** Options of startHttpBackend. */
export interface HttpBackendOptions {
  /** The directory whose bare repositories are served (GIT_PROJECT_ROOT). */
  root: string;
  /** Require these Basic credentials (401 with a challenge otherwise). */
  auth?: { username: string; password: string };
  /** Ignore `Git-Protocol: version=2`: the server speaks v0 only. */
  v0Only?: boolean;
  /** Hold upload-pack responses after `afterBytes` bytes until `release` resolves. */
  stall?: { afterBytes: number; release: Promise<void>; reached: () => void };
}

/** A running http-backend: its base URL, the requests it saw, and stop. */
export interface HttpBackend {
  url: string;
  /** Method and path (with query) of every request, in order. */
  requests: { method: string; path: string; protocol: string | null; authorized: boolean }[];
  stop(): void;
  [Symbol.dispose](): void;
}

/** Starts `git http-backend` behind a local HTTP server. */
export function startHttpBackend(opts: HttpBackendOptions): HttpBackend {
  const requests: HttpBackend["requests"] = [];
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      let user: string | null = null;
      if (opts.auth) {
        const h = req.headers.get("authorization") ?? "";
        const expected = `Basic ${Buffer.from(`${opts.auth.username}:${opts.auth.password}`).toString("base64")}`;
        if (h !== expected) {
          requests.push({ method: req.method, path: url.pathname + url.search, protocol: req.headers.get("git-protocol"), authorized: false });
          return new Response("authentication required\n", { status: 401, headers: { "www-authenticate": 'Basic realm="origin"' } });
        }
        user = opts.auth.username;
      }
      const protocol = opts.v0Only ? null : req.headers.get("git-protocol");
      requests.push({ method: req.method, path: url.pathname + url.search, protocol, authorized: true });
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: opts.root,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_PROJECT_ROOT: opts.root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: decodeURIComponent(url.pathname),
        REQUEST_METHOD: req.method,
        QUERY_STRING: url.search.replace(/^\?/, ""),
        CONTENT_TYPE: req.headers.get("content-type") ?? "",
        REMOTE_ADDR: "127.0.0.1",
        SERVER_PROTOCOL: "HTTP/1.1",
      };
      if (user) env.REMOTE_USER = user;
      if (protocol) env.GIT_PROTOCOL = protocol;
      const encoding = req.headers.get("content-encoding");
      if (encoding) env.HTTP_CONTENT_ENCODING = encoding;
      const body = req.method === "POST" ? new Uint8Array(await req.arrayBuffer()) : null;
      if (body) env.CONTENT_LENGTH = String(body.length);
      const proc = Bun.spawn(["git", "http-backend"], { env, stdin: body ?? "ignore", stdout: "pipe", stderr: "ignore" });
      const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
      // CGI output: header lines, a blank line, then the body.
      let head = new Uint8Array(0);
      let split = -1;
      while (split < 0) {
        const { value, done } = await reader.read();
        if (done) break;
        const merged = new Uint8Array(head.length + value.length);
        merged.set(head);
        merged.set(value, head.length);
        head = merged;
        split = Buffer.from(head).indexOf("\r\n\r\n");
      }
      if (split < 0) return new Response("http-backend failed\n", { status: 500 });
      const headers = new Headers();
      let status = 200;
      for (const line of new TextDecoder().decode(head.subarray(0, split)).split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers.set(name, value);
      }
      const rest = head.subarray(split + 4);
      const stall = req.method === "POST" && url.pathname.endsWith("/git-upload-pack") ? opts.stall : undefined;
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          const push = async (chunk: Uint8Array) => {
            if (stall && sent < stall.afterBytes && sent + chunk.length >= stall.afterBytes) {
              const cut = stall.afterBytes - sent;
              controller.enqueue(chunk.slice(0, cut));
              sent += cut;
              stall.reached();
              await stall.release;
              chunk = chunk.slice(cut);
            }
            sent += chunk.length;
            if (chunk.length) controller.enqueue(chunk);
          };
          try {
            if (rest.length) await push(rest.slice());
            for (;;) {
              const { value, done } = await reader.read();
              if (done) break;
              await push(value);
            }
            controller.close();
          } catch (e) {
            controller.error(e);
          }
        },
      });
      return new Response(stream, { status, headers });
    },
  });
  const stop = () => void server.stop(true);
  return { url: `http://127.0.0.1:${server.port}`, requests, stop, [Symbol.dispose]: stop };
}
