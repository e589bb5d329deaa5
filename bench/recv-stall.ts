// A quick prober for the receive side (issue 25 "the event loop is never the place for unbounded
// work"): pushes hostile packs over HTTP while a prober beside it GETs /healthz back to back, and
// prints the prober's p50/p99/max per case. bench/stall.ts (another helper's) replays every
// hostile case of issue 25; this one is only the receive path's.
//
//   bun bench/recv-stall.ts [--reps 3]
import { deflateSync } from "node:zlib";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createDelta } from "../src/git/delta.ts";
import { hashObject } from "../src/git/oid.ts";
import { encodeOfsDistance, encodeTypeSize } from "../src/git/pack-entry.ts";
import { bootstrap, createRepo, ROOT, startSvc } from "./lib/git-svc.ts";

const { values: args } = parseArgs({ options: { reps: { type: "string", default: "3" } } });

/** A pack of entries given as (type, size, zlib data, ofs base index). */
function pack(entries: { code: number; size: number; z: Uint8Array; base?: number }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const head = new Uint8Array(12);
  head.set([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2]);
  new DataView(head.buffer).setUint32(8, entries.length);
  parts.push(head);
  let pos = 12;
  const offsets: number[] = [];
  for (const e of entries) {
    offsets.push(pos);
    const bytes = [encodeTypeSize(e.code, e.size), ...(e.code === 6 ? [encodeOfsDistance(pos - offsets[e.base!]!)] : []), e.z];
    for (const b of bytes) {
      parts.push(b);
      pos += b.length;
    }
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, new Bun.CryptoHasher("sha1").update(body).digest()]);
}

const entry = (code: number, data: Uint8Array, base?: number) => ({ code, size: data.length, z: deflateSync(data), base });

/** 1 KiB doubled 20 times: a 1 GiB blob from a pack of a few KB. */
function deltaBomb(): Uint8Array {
  let data: Uint8Array = Uint8Array.from({ length: 1024 }, (_, i) => i & 0xff);
  const entries = [entry(3, data)];
  for (let k = 0; k < 20; k++) {
    // "copy the base twice", written by hand: createDelta would have to build the 1 GiB target.
    const n = data.length;
    const ops: number[] = [];
    const varint = (v: number) => {
      do {
        let c = v % 128;
        v = Math.floor(v / 128);
        if (v > 0) c |= 0x80;
        ops.push(c);
      } while (v > 0);
    };
    varint(n);
    varint(2 * n);
    for (let rep = 0; rep < 2; rep++) {
      for (let off = 0; off < n; off += 0x10000) {
        const size = Math.min(0x10000, n - off);
        ops.push(0x80 | 0x0f | (size === 0x10000 ? 0 : 0x30), off & 0xff, (off >> 8) & 0xff, (off >> 16) & 0xff, (off >>> 24) & 0xff);
        if (size !== 0x10000) ops.push(size & 0xff, (size >> 8) & 0xff);
      }
    }
    entries.push({ code: 6, size: ops.length, z: deflateSync(Uint8Array.from(ops)), base: k });
    data = { length: 2 * n } as Uint8Array;
  }
  return pack(entries);
}

/** A blob of `mib` MiB of zeros: a few hundred KB of zlib. */
function zlibBomb(mib: number): Uint8Array {
  return pack([{ code: 3, size: mib << 20, z: deflateSync(new Uint8Array(mib << 20), { level: 9 }) }]);
}

/** A chain of `n` deltas, each adding a byte. */
function deepChain(n: number): Uint8Array {
  let data: Uint8Array = new TextEncoder().encode("seed\n");
  const entries = [entry(3, data)];
  for (let k = 0; k < n; k++) {
    const next = new Uint8Array(data.length + 1);
    next.set(data);
    next[data.length] = 0x61 + (k % 26);
    entries.push(entry(6, createDelta(data, next), k));
    data = next;
  }
  return pack(entries);
}

function body(packBytes: Uint8Array): Uint8Array {
  // A new branch at some commit id: the pack is refused (or its ref is) before it matters.
  const line = `${"0".repeat(40)} ${hashObject("blob", new Uint8Array(0))} refs/heads/x\0report-status side-band-64k\n`;
  const pkt = new TextEncoder().encode((line.length + 4).toString(16).padStart(4, "0") + line);
  return Buffer.concat([pkt, new TextEncoder().encode("0000"), packBytes]);
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 10) / 10 : 0;
};

async function main() {
  const cases: [string, () => Uint8Array][] = [
    ["delta bomb (1 GiB from a few KB)", deltaBomb],
    ["zlib bomb (256 MiB declared)", () => zlibBomb(256)],
    ["99 MiB of zeros (under the cap: inflated)", () => zlibBomb(99)],
    ["50,000-deep delta chain", () => deepChain(50_000)],
  ];
  const svc = await startSvc({ dataDir: join(ROOT, "bench/work/recv-stall/svc"), log: "warn" });
  const acct = await bootstrap(svc, "stall");
  await createRepo(svc, acct, "r");
  const auth = `Basic ${btoa(`x:${acct.token}`)}`;
  const rows: Record<string, unknown>[] = [];
  try {
    for (const [name, make] of cases) {
      const bytes = body(make());
      for (let rep = 0; rep < Number(args.reps); rep++) {
        const lat: number[] = [];
        let done = false;
        const prober = (async () => {
          while (!done) {
            const t0 = performance.now();
            await fetch(`${svc.url}/healthz`).then((r) => r.arrayBuffer());
            lat.push(performance.now() - t0);
            await Bun.sleep(5);
          }
        })();
        const t0 = performance.now();
        const res = await fetch(`${svc.url}/stall/r.git/git-receive-pack`, {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/x-git-receive-pack-request" },
          body: bytes as unknown as BodyInit,
        });
        const text = new TextDecoder().decode(await res.arrayBuffer());
        const seconds = (performance.now() - t0) / 1000;
        done = true;
        await prober;
        const unpack = /unpack ([^\n]*)/.exec(text)?.[1] ?? `HTTP ${res.status}`;
        const row = {
          case: name,
          pack_bytes: bytes.length,
          push_s: Math.round(seconds * 100) / 100,
          unpack,
          probes: lat.length,
          healthz_p50_ms: pct(lat, 50),
          healthz_p99_ms: pct(lat, 99),
          healthz_max_ms: pct(lat, 100),
          load_1m: Math.round(loadavg()[0]! * 100) / 100,
        };
        rows.push(row);
        console.error(JSON.stringify(row));
      }
    }
  } finally {
    await svc.stop();
  }
  console.log(JSON.stringify({ commit: (await Bun.$`git -C ${ROOT} rev-parse --short HEAD`.text()).trim(), rows }, null, 2));
}

await main();
