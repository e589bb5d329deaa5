import { describe, expect, test } from "bun:test";
import { concatBytes, DELIM_PKT, encodePkt, FLUSH_PKT, type Pkt, PktLineReader, pktLine, pktText, RESPONSE_END_PKT } from "../../../src/git/pkt-line.ts";
import { encodeSideband, SidebandWriter } from "../../../src/git/sideband.ts";
import { GitError } from "../../../src/git/types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

async function* chunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

async function readAll(bytes: Uint8Array, chunkSize: number): Promise<Pkt[]> {
  const reader = new PktLineReader(chunks(bytes, chunkSize));
  const out: Pkt[] = [];
  for (;;) {
    const p = await reader.read();
    out.push(p);
    if (p.type === "eof") return out;
  }
}

describe("encode", () => {
  test("data and special packets", () => {
    expect(dec.decode(pktLine("want abc"))).toBe("000dwant abc\n");
    expect(dec.decode(encodePkt(new Uint8Array(0)))).toBe("0004");
    expect(dec.decode(concatBytes([FLUSH_PKT, DELIM_PKT, RESPONSE_END_PKT]))).toBe("000000010002");
    expect(dec.decode(encodePkt(new Uint8Array(65516)).subarray(0, 4))).toBe("fff0");
  });

  test("refuses a payload over 65516 bytes", () => {
    expect(() => encodePkt(new Uint8Array(65517))).toThrow(GitError);
  });
});

describe("PktLineReader", () => {
  const stream = concatBytes([
    pktLine("hello"),
    FLUSH_PKT,
    encodePkt(new Uint8Array(0)),
    DELIM_PKT,
    encodePkt(new Uint8Array(65516).fill(7)),
    RESPONSE_END_PKT,
    pktLine("bye"),
  ]);

  for (const size of [1, 2, 3, 5, 4096, 1 << 20]) {
    test(`reads the same packets with ${size}-byte chunks`, async () => {
      const pkts = await readAll(stream, size);
      expect(pkts.map((p) => p.type)).toEqual(["data", "flush", "data", "delim", "data", "response-end", "data", "eof"]);
      expect(pktText((pkts[0] as { data: Uint8Array }).data)).toBe("hello");
      expect((pkts[2] as { data: Uint8Array }).data.length).toBe(0);
      const big = (pkts[4] as { data: Uint8Array }).data;
      expect(big.length).toBe(65516);
      expect(big.every((b) => b === 7)).toBe(true);
      expect(pktText((pkts[6] as { data: Uint8Array }).data)).toBe("bye");
    });
  }

  test("accepts upper-case hex lengths", async () => {
    const pkts = await readAll(enc.encode("000Aabcdef"), 3);
    expect(pkts.map((p) => p.type)).toEqual(["data", "eof"]);
  });

  const bad: [string, string][] = [
    ["0003", "bad line length 3"],
    ["zzzz", "bad line length character"],
    ["fff1", "bad line length 65521"],
    ["00", "truncated pkt-line length"],
    ["0009abc", "truncated pkt-line"],
    ["-001", "bad line length character"],
  ];
  for (const [input, message] of bad) {
    test(`rejects ${JSON.stringify(input)}`, async () => {
      const reader = new PktLineReader(chunks(enc.encode(input), 2));
      const err = await reader.read().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GitError);
      expect((err as GitError).message).toContain(message);
    });
  }

  test("peek, readLine and rest hand over the raw remainder", async () => {
    const body = concatBytes([pktLine("a"), pktLine("b"), FLUSH_PKT, enc.encode("PACK raw bytes")]);
    const reader = new PktLineReader(chunks(body, 3));
    expect((await reader.peek()).type).toBe("data");
    expect(await reader.readLine()).toBe("a");
    expect(await reader.readLine()).toBe("b");
    expect(await reader.readLine()).toBeNull();
    expect(reader.last).toBe("flush");
    const rest: Uint8Array[] = [];
    for await (const c of reader.rest()) rest.push(c);
    expect(dec.decode(concatBytes(rest))).toBe("PACK raw bytes");
  });
});

describe("sideband", () => {
  test("encodeSideband splits at the packet limit", () => {
    const pkts = encodeSideband(1, new Uint8Array(2000), 1000);
    expect(pkts.map((p) => p.length)).toEqual([1000, 1000, 15]);
    expect(pkts[0]![4]).toBe(1);
  });

  test("SidebandWriter coalesces data and interleaves progress", async () => {
    const out: Uint8Array[] = [];
    const w = new SidebandWriter((c) => {
      out.push(c);
    }, 1000);
    for (let i = 0; i < 10; i++) await w.data(new Uint8Array(300).fill(i));
    await w.progress("half\n");
    await w.data(enc.encode("tail"));
    await w.flushData();
    const pkts = await readAll(concatBytes(out), 7);
    const bands = pkts.filter((p) => p.type === "data").map((p) => (p as { data: Uint8Array }).data);
    expect(bands.map((b) => [b[0], b.length - 1])).toEqual([
      [1, 995],
      [1, 995],
      [1, 995],
      [1, 15],
      [2, 5],
      [1, 4],
    ]);
    const data = concatBytes(bands.filter((b) => b[0] === 1).map((b) => b.subarray(1)));
    expect(data.length).toBe(3004);
    expect(data[0]).toBe(0);
    expect(data[2999]).toBe(9);
  });
});
