// Prints a timeline written by s3-trace.ts: one line per S3 request (start, first byte, end in
// ms from the first request; bytes; key; range) with the gaps where nothing was in flight, and
// the git response's progress for the raw requests.
//
//   bun bench/lib/s3-trace-show.ts bench/work/s3-trace/clone-s3.json [--max 400]
import { readFileSync } from "node:fs";
import type { TraceEntry } from "../../test/helpers/fault-proxy.ts";

const file = process.argv[2]!;
const maxIdx = process.argv.indexOf("--max");
const max = maxIdx >= 0 ? Number(process.argv[maxIdx + 1]) : 400;
const data = JSON.parse(readFileSync(file, "utf8")) as {
  marks: Record<string, number>;
  response: { firstByte: number; end: number; bytes: number; curve: [number, number][] } | null;
  entries: TraceEntry[];
};
console.log("marks", data.marks);
if (data.response)
  console.log(
    "response",
    { firstByte: data.response.firstByte, end: data.response.end, mib: (data.response.bytes / 2 ** 20).toFixed(1) },
    "curve (ms, MiB):",
    data.response.curve.map(([t, b]) => `${t.toFixed(0)}:${(b / 2 ** 20).toFixed(0)}`).join(" "),
  );
const entries = [...data.entries].sort((a, b) => a.start - b.start);
let busyUntil = 0;
let shown = 0;
for (const e of entries) {
  if (e.start > busyUntil + 5 && busyUntil > 0) console.log(`   -- idle ${(e.start - busyUntil).toFixed(0)} ms`);
  busyUntil = Math.max(busyUntil, e.end);
  if (shown++ < max) {
    const key = e.path.split("?")[0]!.split("/").slice(-1)[0]!.slice(0, 24);
    const q = e.path.includes("?") ? `?${e.path.split("?")[1]!.slice(0, 30)}` : "";
    console.log(
      `${e.start.toFixed(0).padStart(7)} ${(e.firstByte - e.start).toFixed(0).padStart(5)} ${(e.end - e.start).toFixed(0).padStart(6)}  ${e.method.padEnd(6)} ${String(e.status).padEnd(4)} ${(e.bytesDown + e.bytesUp).toString().padStart(9)}  ${key}${q} ${e.range}`,
    );
  }
}
