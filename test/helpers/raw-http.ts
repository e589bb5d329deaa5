// HTTP requests a browser or fetch() cannot make: from a chosen local source address (127.0.0.x,
// to be another client as far as per-source limits go), or as raw bytes on a socket (any Host
// header, HTTP/1.0 without one).
import http from "node:http";
import { connect } from "node:net";

/** Status, headers and body of a response. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any;
}

function parsed(text: string): any {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** A request from the local address `source` (any 127.0.0.0/8 address works on Linux loopback). */
export function requestFrom(
  source: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {},
): Promise<RawAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: Number(u.port), path: u.pathname + u.search, method: init.method ?? "GET", localAddress: source, headers: init.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, text, body: parsed(text) });
        });
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

/** Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body` as raw bytes; parses the answer. */
export function rawRequest(url: string, head: string, body = ""): Promise<RawAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    // write, not end: a half-closed socket reads to the server as a client that went away.
    const socket = connect(Number(u.port), u.hostname, () =>
      socket.write(`${head}\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
    );
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const split = raw.indexOf("\r\n\r\n");
      const lines = raw.slice(0, split).split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(":");
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      let text = raw.slice(split + 4);
      // Chunked answers: join the chunks.
      if ((headers["transfer-encoding"] ?? "").includes("chunked")) {
        let out = "";
        let rest = text;
        for (;;) {
          const nl = rest.indexOf("\r\n");
          const size = parseInt(rest.slice(0, nl), 16);
          if (!size) break;
          out += rest.slice(nl + 2, nl + 2 + size);
          rest = rest.slice(nl + 2 + size + 2);
        }
        text = out;
      }
      resolve({ status, headers, text, body: parsed(text) });
    });
  });
}
