// The latency and fault proxy used by the S3 tests and benchmarks: it must forward faithfully,
// fault exactly what it is told to, and make the same decisions for the same seed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "minio";
import { startFaultProxy, type FaultProxyHandle } from "../../helpers/fault-proxy.ts";
import { startS3rver, type S3rverHandle } from "../../helpers/s3rver.ts";
import { bytes, same } from "../../unit/storage/object-store-contract.ts";

let s3: S3rverHandle;
let proxy: FaultProxyHandle;
const DATA = bytes(300_000, 5);

function client(endpoint: string): Client {
  const u = new URL(endpoint);
  return new Client({
    endPoint: u.hostname,
    port: Number(u.port),
    useSSL: false,
    accessKey: "S3RVER",
    secretKey: "S3RVER",
    region: "us-east-1",
    pathStyle: true,
    retryOptions: { disableRetry: true },
  });
}

async function read(c: Client, key: string, offset = 0, length = DATA.length): Promise<Uint8Array> {
  const stream = await c.getPartialObject("faults", key, offset, length);
  return new Uint8Array(Buffer.concat(await Array.fromAsync(stream as AsyncIterable<Buffer>)));
}

/** Outcome of one ranged read through the proxy: "ok", "SlowDown" or "reset". */
async function outcome(c: Client, offset: number): Promise<string> {
  try {
    const got = await read(c, "data", offset, 1000);
    return same(got, DATA.subarray(offset, offset + 1000)) ? "ok" : "corrupt";
  } catch (e) {
    const message = String((e as Error).message);
    return message.includes("503") ? "SlowDown" : "reset";
  }
}

beforeAll(async () => {
  s3 = await startS3rver();
  proxy = await startFaultProxy(s3.endpoint);
  await client(s3.endpoint).makeBucket("faults", "us-east-1");
  await client(s3.endpoint).putObject("faults", "data", Buffer.from(DATA));
}, 30_000);
afterAll(async () => {
  await proxy?.stop();
  await s3?.stop();
}, 30_000);

describe("fault proxy", () => {
  test("without faults it forwards reads and writes byte for byte, and counts them", async () => {
    await proxy.configure({ slowDown: 0, reset: 0, delayMs: 1 });
    await proxy.resetStats();
    const c = client(proxy.endpoint);
    await c.putObject("faults", "copy", Buffer.from(DATA));
    expect(same(await read(c, "copy"), DATA)).toBe(true);
    expect(same(await read(c, "data", 1234, 5000), DATA.subarray(1234, 6234))).toBe(true);
    const stats = await proxy.stats();
    expect(stats).toMatchObject({ requests: 3, byKind: { PUT: 1, GET: 2 }, slowDowns: 0, resets: 0, bytesDown: DATA.length + 5000 });
    expect(stats.bytesUp).toBeGreaterThanOrEqual(DATA.length);
  });

  test("SlowDown answers 503 with the S3 error body", async () => {
    await proxy.configure({ slowDown: 1, reset: 0, delayMs: 0 });
    const res = await fetch(`${proxy.endpoint}/faults/data`);
    expect({ status: res.status, body: await res.text() }).toMatchObject({ status: 503, body: expect.stringContaining("<Code>SlowDown</Code>") });
    await proxy.configure({ slowDown: 0 });
  });

  test("a reset cuts a response mid-body and an upload mid-body; the cut upload never lands", async () => {
    await proxy.configure({ slowDown: 0, reset: 1 });
    const c = client(proxy.endpoint);
    await expect(read(c, "data")).rejects.toThrow();
    await expect(c.putObject("faults", "never", Buffer.from(DATA))).rejects.toThrow();
    await proxy.configure({ reset: 0 });
    await expect(client(s3.endpoint).statObject("faults", "never")).rejects.toMatchObject({ code: "NotFound" });
    const stats = await proxy.stats();
    expect(stats.resets).toBeGreaterThanOrEqual(2);
    expect(stats.bytesDown).toBeLessThan(2 * DATA.length);
  });

  test("faults apply only to matching requests", async () => {
    await proxy.configure({ slowDown: 1, reset: 0, match: { pathIncludes: "/never-matches" } });
    expect(await outcome(client(proxy.endpoint), 0)).toBe("ok");
    await proxy.configure({ match: { method: "GET", pathIncludes: "/data" } });
    expect(await outcome(client(proxy.endpoint), 0)).toBe("SlowDown");
    await proxy.configure({ slowDown: 0, match: null });
  });

  test("firstTry faults the first sight of each request, and only that", async () => {
    await proxy.configure({ slowDown: 0, reset: 0, match: null, firstTry: "slowDown" });
    const c = client(proxy.endpoint);
    const seen = [await outcome(c, 0), await outcome(c, 0), await outcome(c, 5000), await outcome(c, 5000)];
    await proxy.configure({ firstTry: "reset" });
    seen.push(await outcome(c, 0), await outcome(c, 0));
    await proxy.configure({ firstTry: null });
    expect(seen).toEqual(["SlowDown", "ok", "SlowDown", "ok", "reset", "ok"]);
  });

  test("the same seed faults the same requests; another seed faults others", async () => {
    const run = async (seed: number) => {
      await proxy.configure({ seed, slowDown: 0.3, reset: 0.2, match: null });
      const c = client(proxy.endpoint);
      const out: string[] = [];
      for (let i = 0; i < 40; i++) out.push(await outcome(c, i * 1000));
      return out;
    };
    const a = await run(7);
    const b = await run(7);
    const other = await run(8);
    await proxy.configure({ seed: 1, slowDown: 0, reset: 0 });
    expect(a).toEqual(b);
    expect(other).not.toEqual(a);
    expect(a.filter((x) => x === "SlowDown").length).toBeGreaterThan(3);
    expect(a.filter((x) => x === "reset").length).toBeGreaterThan(1);
    expect(a.filter((x) => x === "ok").length).toBeGreaterThan(10);
    expect(a).not.toContain("corrupt");
  });
});
