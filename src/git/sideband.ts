// side-band multiplexing of the packfile, progress and errors over pkt-lines.
//
// From gitprotocol-pack(5):
//
//   If 'side-band' or 'side-band-64k' capabilities have been specified by
//   the client, the server will send the packfile data multiplexed.
//
//   Each packet starting with the packet-line length of the amount of data
//   that follows, followed by a single byte specifying the sideband the
//   following data is coming in on.
//
//   In 'side-band' mode, it will send up to 999 data bytes plus 1 control
//   code, for a total of up to 1000 bytes in a pkt-line.  In 'side-band-64k'
//   mode it will send up to 65519 data bytes plus 1 control code, for a
//   total of up to 65520 bytes in a pkt-line.
//
//   The sideband byte will be a '1', '2' or a '3'. Sideband '1' will contain
//   packfile data, sideband '2' will be used for progress information that the
//   client will generally print to stderr and sideband '3' is used for error
//   information.
import { encodePkt, LARGE_PACKET_MAX } from "./pkt-line.ts";

/** Packet size limit of the 'side-band' capability (DEFAULT_PACKET_MAX). */
export const SIDE_BAND_PACKET_MAX = 1000;
/** Packet size limit of 'side-band-64k' and of protocol v2's packfile section. */
export const SIDE_BAND_64K_PACKET_MAX = LARGE_PACKET_MAX;

/** 1: pack data, 2: progress, 3: fatal error. */
export type Band = 1 | 2 | 3;

const encoder = new TextEncoder();
const HEX = "0123456789abcdef";

/** Frame `data` on `band` as pkt-lines no longer than `packetMax` (as git's send_sideband does). */
export function encodeSideband(band: Band, data: Uint8Array | string, packetMax: number): Uint8Array[] {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const room = packetMax - 5;
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += room) {
    const part = bytes.subarray(at, Math.min(bytes.length, at + room));
    const payload = new Uint8Array(part.length + 1);
    payload[0] = band;
    payload.set(part, 1);
    out.push(encodePkt(payload));
  }
  return out;
}

/** Writes multiplexed output, coalescing small data writes into full packets. */
export class SidebandWriter {
  private packet: Uint8Array;
  private used = 5;

  constructor(
    private readonly write: (chunk: Uint8Array) => void | Promise<void>,
    private readonly packetMax: number,
  ) {
    this.packet = new Uint8Array(packetMax);
  }

  /** Queue pack data for band 1 (copied); full packets are written as they fill. */
  async data(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) {
      const take = Math.min(this.packetMax - this.used, bytes.length - at);
      this.packet.set(bytes.subarray(at, at + take), this.used);
      this.used += take;
      at += take;
      if (this.used === this.packetMax) await this.flushData();
    }
  }

  /** Progress text for band 2 (the client prints it as "remote: ..."). */
  async progress(text: string): Promise<void> {
    await this.flushData();
    for (const p of encodeSideband(2, text, this.packetMax)) await this.write(p);
  }

  /** Fatal error text for band 3; the client aborts after it. */
  async error(text: string): Promise<void> {
    await this.flushData();
    for (const p of encodeSideband(3, text, this.packetMax)) await this.write(p);
  }

  /** Write out any buffered band-1 data. */
  async flushData(): Promise<void> {
    if (this.used === 5) return;
    const out = this.packet.subarray(0, this.used);
    const len = this.used;
    out[0] = HEX.charCodeAt((len >> 12) & 15);
    out[1] = HEX.charCodeAt((len >> 8) & 15);
    out[2] = HEX.charCodeAt((len >> 4) & 15);
    out[3] = HEX.charCodeAt(len & 15);
    out[4] = 1;
    this.packet = new Uint8Array(this.packetMax);
    this.used = 5;
    await this.write(out);
  }
}
