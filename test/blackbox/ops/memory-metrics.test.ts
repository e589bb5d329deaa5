// svc_process_memory_bytes names its heap kinds after what Bun measures (issue 24 item 6): Bun's
// process.memoryUsage() reports heapUsed (the heap after the last collection, large objects
// included) above heapTotal (the small-object blocks), so kinds called heap_used and heap_total
// read as a part larger than its whole on every scrape.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../../helpers/server.ts";

const TOKEN = "metrics-token-for-the-memory-test";
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ env: { SVC_METRICS_TOKEN: TOKEN } });
}, 60_000);
afterAll(async () => {
  await server?.[Symbol.asyncDispose]();
});

test("the memory gauge's kinds are heap_size_after_gc, heap_blocks_allocated, array_buffers and external; no used/total pair", async () => {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  const kinds = Object.fromEntries([...text.matchAll(/^svc_process_memory_bytes\{kind="([a-z_]+)"\} (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  expect(Object.keys(kinds).sort()).toEqual(["array_buffers", "external", "heap_blocks_allocated", "heap_size_after_gc"]);
  expect(kinds.heap_size_after_gc).toBeGreaterThan(0);
  expect(kinds.heap_blocks_allocated).toBeGreaterThan(0);
  // process_heap_bytes is the same figure as heap_size_after_gc, scraped together.
  const heap = Number(/^process_heap_bytes (\S+)$/m.exec(text)?.[1]);
  expect(heap).toBe(kinds.heap_size_after_gc!);
  expect(text).toContain("# HELP svc_process_memory_bytes Process memory by kind (Bun's figures)");
});
