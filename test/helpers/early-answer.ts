// A request whose body never arrives in full: the request line and headers, then only `sent` of
// the bytes `content-length` (or chunked encoding) promises. A server that refuses from the
// headers answers at once; one that reads the body first never answers (the caller's timeout).
import { connect } from "node:net";

/** Status and the first bytes of the answer to a request whose body is cut short. */
export function answerBeforeBody(
  url: string,
  o: { method?: string; path: string; headers?: Record<string, string>; declared?: number; chunked?: boolean; sent?: Uint8Array },
): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const head = [
      `${o.method ?? "POST"} ${o.path} HTTP/1.1`,
      `host: ${u.host}`,
      ...Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
      o.chunked ? "transfer-encoding: chunked" : `content-length: ${o.declared ?? 0}`,
    ].join("\r\n");
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.write(`${head}\r\n\r\n`);
      const sent = o.sent ?? new Uint8Array(0);
      if (sent.length) socket.write(o.chunked ? Buffer.concat([Buffer.from(`${sent.length.toString(16)}\r\n`), sent, Buffer.from("\r\n")]) : sent);
    });
    let raw = "";
    socket.on("data", (c: Buffer) => {
      raw += c.toString("utf8");
      const end = raw.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(raw.slice(0, end))?.[1] ?? 0);
      if (raw.length - end - 4 < length) return;
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0), text: raw.slice(end + 4) });
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`connection closed before an answer: ${JSON.stringify(raw.slice(0, 200))}`)));
  });
}
