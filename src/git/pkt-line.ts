// pkt-line framing, the envelope of every git protocol message.
//
// From gitprotocol-common(5):
//
//   pkt-line     =  data-pkt / flush-pkt
//   data-pkt     =  pkt-len pkt-payload
//   pkt-len      =  4*(HEXDIG)
//   pkt-payload  =  (pkt-len - 4)*(OCTET)
//   flush-pkt    = "0000"
//
//   The maximum length of a pkt-line's data component is 65516 bytes.
//   Implementations MUST NOT send pkt-line whose length exceeds 65520
//   (65516 bytes of payload + 4 bytes of length data).
//
// and from gitprotocol-v2(5): "0001" delim-pkt separates sections of a message,
// "0002" response-end-pkt ends a response for stateless connections.
import { GitError } from "./types.ts";

/** Largest pkt-line git accepts, length prefix included (LARGE_PACKET_MAX). */
export const LARGE_PACKET_MAX = 65520;
/** Largest payload of one pkt-line. */
export const LARGE_PACKET_DATA_MAX = LARGE_PACKET_MAX - 4;

/** One packet as read from the wire; "eof" when the input ended cleanly between packets. */
export type Pkt = { type: "data"; data: Uint8Array } | { type: "flush" } | { type: "delim" } | { type: "response-end" } | { type: "eof" };

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEX = "0123456789abcdef";

/** The flush-pkt "0000": end of a message. */
export const FLUSH_PKT: Uint8Array = encoder.encode("0000");
/** The delim-pkt "0001": end of a section (v2). */
export const DELIM_PKT: Uint8Array = encoder.encode("0001");
/** The response-end-pkt "0002": end of a stateless response (v2). */
export const RESPONSE_END_PKT: Uint8Array = encoder.encode("0002");

/** Encode one data pkt-line; strings are UTF-8 encoded as given (callers add the LF). */
export function encodePkt(payload: Uint8Array | string): Uint8Array {
  const data = typeof payload === "string" ? encoder.encode(payload) : payload;
  if (data.length > LARGE_PACKET_DATA_MAX) {
    throw new GitError(`pkt-line payload too large: ${data.length} bytes`, "protocol");
  }
  const len = data.length + 4;
  const out = new Uint8Array(len);
  out[0] = HEX.charCodeAt((len >> 12) & 15);
  out[1] = HEX.charCodeAt((len >> 8) & 15);
  out[2] = HEX.charCodeAt((len >> 4) & 15);
  out[3] = HEX.charCodeAt(len & 15);
  out.set(data, 4);
  return out;
}

/** Encode a text line as a pkt-line, appending the LF git expects. */
export function pktLine(text: string): Uint8Array {
  return encodePkt(`${text}\n`);
}

/** Longest message an ERR packet carries; longer ones are cut (they quote client input). */
const ERR_MESSAGE_MAX = 4000;

/**
 * An `ERR <message>` packet, which a git client prints as "remote error: <message>" and stops
 * (gitprotocol-pack: "An error packet is a special pkt-line that contains an error string").
 * Newlines become spaces so the message stays one packet.
 */
export function errPkt(message: string): Uint8Array {
  const text = message.length > ERR_MESSAGE_MAX ? `${message.slice(0, ERR_MESSAGE_MAX)}…` : message;
  return pktLine(`ERR ${text.replaceAll("\n", " ")}`);
}

/** Concatenate byte arrays (for building small messages). */
export function concatBytes(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

/** Payload as text with one trailing LF removed (git's PACKET_READ_CHOMP_NEWLINE). */
export function pktText(data: Uint8Array): string {
  const end = data.length > 0 && data[data.length - 1] === 0x0a ? data.length - 1 : data.length;
  return decoder.decode(data.subarray(0, end));
}

/** Pull-based reader of pkt-lines over a byte stream cut at arbitrary boundaries. */
export class PktLineReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  /** Chunks received but not yet merged into `buf`. */
  private queued: Uint8Array[] = [];
  private queuedSize = 0;
  private ended = false;
  private peeked: Pkt | null = null;
  private restTaken = false;
  /** Type of the packet consumed by the last readLine(). */
  last: Pkt["type"] = "eof";

  constructor(input: AsyncIterable<Uint8Array>) {
    this.iterator = input[Symbol.asyncIterator]();
  }

  /** The next packet; throws GitError on a malformed length or input cut mid-packet. */
  async read(): Promise<Pkt> {
    if (this.peeked) {
      const p = this.peeked;
      this.peeked = null;
      return p;
    }
    if (this.restTaken) throw new Error("PktLineReader: read after rest()");
    if (!(await this.fill(4))) {
      if (this.available() === 0) return { type: "eof" };
      throw new GitError("protocol error: truncated pkt-line length", "protocol");
    }
    const len = parseLength(this.buf, this.pos);
    if (len < 0) {
      const shown = decoder.decode(this.buf.subarray(this.pos, this.pos + 4));
      throw new GitError(`protocol error: bad line length character: ${JSON.stringify(shown)}`, "protocol");
    }
    if (len < 4) {
      this.pos += 4;
      if (len === 0) return { type: "flush" };
      if (len === 1) return { type: "delim" };
      if (len === 2) return { type: "response-end" };
      throw new GitError(`protocol error: bad line length ${len}`, "protocol");
    }
    if (len > LARGE_PACKET_MAX) throw new GitError(`protocol error: bad line length ${len}`, "protocol");
    if (!(await this.fill(len))) throw new GitError("protocol error: truncated pkt-line", "protocol");
    const data = this.buf.slice(this.pos + 4, this.pos + len);
    this.pos += len;
    return { type: "data", data };
  }

  /** The next packet without consuming it. */
  async peek(): Promise<Pkt> {
    if (!this.peeked) this.peeked = await this.read();
    return this.peeked;
  }

  /** Next data packet as chomped text; null on flush, delim, response-end or eof (check `last` for which). */
  async readLine(): Promise<string | null> {
    const p = await this.read();
    this.last = p.type;
    return p.type === "data" ? pktText(p.data) : null;
  }

  /** The unread remainder of the input as raw bytes (a packfile after the commands); the reader is spent. */
  async *rest(): AsyncGenerator<Uint8Array> {
    if (this.peeked) throw new Error("PktLineReader: rest() after peek()");
    this.restTaken = true;
    if (this.buf.length > this.pos) yield this.buf.subarray(this.pos);
    for (const c of this.queued) yield c;
    this.buf = new Uint8Array(0);
    this.pos = 0;
    this.queued = [];
    this.queuedSize = 0;
    while (!this.ended) {
      const r = await this.iterator.next();
      if (r.done) {
        this.ended = true;
        break;
      }
      if (r.value.length > 0) yield r.value;
    }
  }

  private available(): number {
    return this.buf.length - this.pos + this.queuedSize;
  }

  /** Ensure `n` unread bytes are contiguous in `buf` from `pos`; false when the input ends first. */
  private async fill(n: number): Promise<boolean> {
    while (this.available() < n) {
      if (this.ended) return false;
      const r = await this.iterator.next();
      if (r.done) {
        this.ended = true;
        return false;
      }
      if (r.value.length === 0) continue;
      this.queued.push(r.value);
      this.queuedSize += r.value.length;
    }
    if (this.buf.length - this.pos >= n) return true;
    const merged = new Uint8Array(this.available());
    merged.set(this.buf.subarray(this.pos));
    let at = this.buf.length - this.pos;
    for (const c of this.queued) {
      merged.set(c, at);
      at += c.length;
    }
    this.buf = merged;
    this.pos = 0;
    this.queued = [];
    this.queuedSize = 0;
    return true;
  }
}

function parseLength(buf: Uint8Array, at: number): number {
  let len = 0;
  for (let i = 0; i < 4; i++) {
    const c = buf[at + i]!;
    let v: number;
    if (c >= 0x30 && c <= 0x39) v = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) v = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) v = c - 0x37;
    else return -1;
    len = (len << 4) | v;
  }
  return len;
}
