// Masking secrets in job logs (issue 29, "Masking adds ≤ 5% CPU to log streaming at 10 MB/s of
// output with 20 secrets"): the Masker of src/services/ci/mask.ts over realistic build output, fed
// as the agent feeds it (pipe reads of 64 KiB, and line-sized writes), with and without secrets
// printed in it. Prints a JSON summary: throughput, and the share of one core masking 10 MB/s costs.
//
// Then the agent's whole log path (cli/runner/log.ts, `--stream`): a LogStream fed 10 MB/s of the
// same output in 64 KiB writes for `--seconds`, uploading to a stub log endpoint in another
// process (so only the agent's CPU is counted), once without secrets (nothing to mask) and once
// with the 20: the difference in CPU is what masking adds to log streaming.
//
// `--baseline` also runs the Masker-alone rows with main's masker before the single-pass one
// (bench/lib/mask-386769c.ts: one regular expression), interleaved round by round in one process;
// `--tables` with the single-pass masker as it was before its tables were sized by the secrets
// (bench/lib/mask-914a284.ts: three 64 KiB tables per masker). Then `memory`: the heap a masker
// holds once it has masked one line, per masker over 2,000 of them, with 0, 1 and `--secrets` values.
// Hostile rows ("prefixes": output made only of prefixes of the forms, cut before their last
// unit; "periodic": a value `aaaa…` of 64 or 2,048 units and output `aaa…ab` repeated, an eighth
// of `--mb`) show the work per unit stays bounded (the masker's automata past its compare budget).
//
//   bun bench/masking.ts [--mb 64] [--secrets 20] [--rounds 3] [--baseline] [--tables] [--stream] [--seconds 8]
import { parseArgs } from "node:util";
import { LogStream, MaskedText } from "../cli/runner/log.ts";
import { Masker, maskForms } from "../src/services/ci/mask.ts";
import { Masker as BaselineMasker } from "./lib/mask-386769c.ts";
import { Masker as TablesMasker } from "./lib/mask-914a284.ts";

const { values } = parseArgs({
  options: {
    mb: { type: "string", default: "64" },
    secrets: { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
    stream: { type: "boolean", default: false },
    baseline: { type: "boolean", default: false },
    tables: { type: "boolean", default: false },
    seconds: { type: "string", default: "8" },
    "stub-server": { type: "boolean", default: false },
  },
});

if (values["stub-server"]) {
  // The log endpoint: acknowledges every append at its offset (what the server answers), nothing stored.
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { offset: number; text: string };
      return Response.json({ offset: body.offset + Buffer.byteLength(body.text) });
    },
  });
  console.log(server.port);
  await new Promise(() => {});
}
const MB = Number(values.mb);
const N = Number(values.secrets);
const ROUNDS = Number(values.rounds);

let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const word = (n: number) => Array.from({ length: n }, () => ALNUM[Math.floor(rand() * ALNUM.length)]).join("");

const secrets = Array.from({ length: N }, (_, i) =>
  i % 4 === 0
    ? `ghp_${word(36)}`
    : i % 4 === 1
      ? word(16)
      : i % 4 === 2
        ? `${word(8)}-${word(8)}/${word(6)}`
        : `-----BEGIN KEY-----\n${word(64)}\n${word(64)}\n-----END KEY-----`,
);

const LINES = [
  () => `[${Math.floor(rand() * 1000)}/1000] CC src/${word(8)}/${word(10)}.o`,
  () => `npm WARN deprecated ${word(6)}@${Math.floor(rand() * 9)}.${Math.floor(rand() * 20)}.0: use ${word(7)} instead`,
  () => `    at ${word(10)} (/home/runner/work/app/src/${word(6)}.ts:${Math.floor(rand() * 900)}:${Math.floor(rand() * 80)})`,
  () => `test ${word(12)} ... ok (${(rand() * 100).toFixed(2)} ms)`,
  () => `Downloading https://registry.example.com/${word(8)}/-/${word(8)}-1.2.3.tgz`,
];

function output(bytes: number, hits: number): string {
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const line =
      rand() < hits
        ? `echo token=${secrets[Math.floor(rand() * N)]} b64=${Buffer.from(secrets[0]!).toString("base64")}`
        : LINES[Math.floor(rand() * LINES.length)]!();
    parts.push(line, "\n");
    n += line.length + 1;
  }
  return parts.join("");
}

function chunks(text: string, size: number | "lines"): string[] {
  if (size === "lines") return text.split(/(?<=\n)/);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

type AnyMasker = { push(text: string): string; flush(): string };
const MASKERS: [string, (values: string[]) => AnyMasker][] = [
  ...(values.baseline ? [["main 386769c (one regular expression)", (v: string[]) => new BaselineMasker(v)] as [string, (values: string[]) => AnyMasker]] : []),
  ...(values.tables ? [["single pass, 914a284 (64 KiB tables)", (v: string[]) => new TablesMasker(v)] as [string, (values: string[]) => AnyMasker]] : []),
  ["single pass (prefix filter, skip loop)", (v: string[]) => new Masker(v)],
];

/** Heap bytes per masker that has masked one line (its lazy tables built), over `count` kept alive. */
function heapPerMasker(make: (values: string[]) => AnyMasker, vals: string[], count: number): number {
  Bun.gc(true);
  const before = process.memoryUsage().heapUsed;
  const kept: AnyMasker[] = [];
  for (let i = 0; i < count; i++) {
    const m = make(vals);
    m.push("a line of ordinary output, long enough for the skip loop\n");
    kept.push(m);
  }
  Bun.gc(true);
  const after = process.memoryUsage().heapUsed;
  if (kept.length !== count) throw new Error("unreachable");
  return (after - before) / count;
}

/** CPU milliseconds (user + system) of masking `parts`: the machine is shared, so wall time would count other work. */
function run(parts: string[], masker: AnyMasker): { ms: number; bytes: number } {
  Bun.gc(true);
  const t0 = process.cpuUsage();
  let bytes = 0;
  for (const p of parts) bytes += masker.push(p).length;
  bytes += masker.flush().length;
  const t = process.cpuUsage(t0);
  return { ms: (t.user + t.system) / 1000, bytes };
}

/** Output made only of prefixes of the forms of `values` (each cut before its last unit), in lines. */
function prefixes(bytes: number, vals: string[]): string {
  const forms = vals.flatMap((v) => maskForms(v));
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const f = forms[Math.floor(rand() * forms.length)]!;
    const p = f.slice(0, 1 + Math.floor(rand() * (f.length - 1)));
    parts.push(p);
    n += p.length;
    if (rand() < 0.05) {
      parts.push("\n");
      n++;
    }
  }
  return parts.join("");
}

// Memory first, before the outputs below take hundreds of MB of heap.
const memory: Record<string, unknown>[] = [];
for (const vals of [[], secrets.slice(0, 1), secrets])
  for (const [name, make] of MASKERS) {
    // The median of the rounds: a collection between two reads can move one round either way.
    const rounds = Array.from({ length: Math.max(3, ROUNDS) }, () => heapPerMasker(make, vals, 2000)).sort((a, b) => a - b);
    const median = rounds[rounds.length >> 1]!;
    memory.push({
      masker: name,
      values: vals.length,
      forms: new Masker(vals).empty ? 0 : new Set(vals.flatMap(maskForms)).size,
      kib_per_masker: Number((median / 1024).toFixed(1)),
    });
  }
const results: Record<string, unknown>[] = [];
const cases: { output: string; values: string[]; text: string; sizes: readonly (number | "lines")[] }[] = [];
for (const hits of [0, 0.01])
  cases.push({
    output: hits ? "1 % of lines print secrets" : "no secrets printed",
    values: secrets,
    text: output(MB * 1024 * 1024, hits),
    sizes: [64 * 1024, "lines"],
  });
cases.push({ output: "hostile: only prefixes of the forms", values: secrets, text: prefixes(MB * 1024 * 1024, secrets), sizes: [64 * 1024] });
for (const len of [64, 2048]) {
  // An eighth of the output: the maskers before this one compare up to the value's length at every position.
  const periodic = "a".repeat(len);
  const text = `${periodic.slice(1)}b`.repeat(Math.ceil((MB * 1024 * 1024) / 8 / len));
  cases.push({ output: `hostile: value a×${len}, output (a×${len - 1} b) repeated`, values: [...secrets, periodic], text, sizes: [64 * 1024] });
}
for (const c of cases)
  for (const size of c.sizes) {
    const parts = chunks(c.text, size);
    const best = MASKERS.map(() => Infinity);
    const masked = MASKERS.map(() => 0);
    for (let r = 0; r < ROUNDS; r++)
      MASKERS.forEach(([, make], k) => {
        const { ms, bytes } = run(parts, make(c.values));
        best[k] = Math.min(best[k]!, ms);
        masked[k] = bytes;
      });
    const mb = c.text.length / 1024 / 1024;
    MASKERS.forEach(([name], k) => {
      const mbps = mb / (best[k]! / 1000);
      results.push({
        masker: name,
        output: c.output,
        writes: size === "lines" ? "one per line" : "64 KiB",
        mb: Math.round(mb),
        best_cpu_ms: Math.round(best[k]!),
        mb_per_s: Math.round(mbps),
        cpu_share_at_10_mb_per_s: `${((10 / mbps) * 100).toFixed(2)}%`,
        output_bytes: masked[k],
      });
    });
    if (new Set(masked).size > 1) throw new Error(`the maskers disagree on ${c.output}: ${masked.join(" vs ")} bytes`);
  }
// The agent's front (the ::add-mask:: line scan, then the Masker), as CPU per MB like the rows above.
for (const hits of [0, 0.01]) {
  const parts = chunks(output(MB * 1024 * 1024, hits), 64 * 1024);
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const front = new MaskedText(new Masker(secrets));
    Bun.gc(true);
    const t0 = process.cpuUsage();
    for (const p of parts) front.write(p);
    front.end();
    const t = process.cpuUsage(t0);
    best = Math.min(best, (t.user + t.system) / 1000);
  }
  const mbps = MB / (best / 1000);
  results.push({
    hits_per_line: hits,
    writes: "64 KiB through MaskedText (log.ts)",
    mb: MB,
    best_cpu_ms: Math.round(best),
    mb_per_s: Math.round(mbps),
    cpu_share_at_10_mb_per_s: `${((10 / mbps) * 100).toFixed(2)}%`,
  });
}

/** CPU of this process while a LogStream takes 10 MB/s for `seconds` and uploads it all. */
async function streamCpu(url: string, masker: Masker, seconds: number): Promise<{ cpu_ms: number; wall_ms: number; mb: number }> {
  const rate = 10 * 1024 * 1024;
  const text = output(rate * seconds, 0.01);
  const parts = chunks(text, 64 * 1024);
  const stop = new AbortController();
  const log = new LogStream(url, "bench-token", stop.signal, masker);
  const wall0 = performance.now();
  const t0 = process.cpuUsage();
  let i = 0;
  let written = 0;
  while (i < parts.length) {
    const due = (rate * (performance.now() - wall0)) / 1000;
    while (i < parts.length && written < due) {
      log.write(parts[i]!);
      written += parts[i]!.length;
      i++;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  await log.close();
  const t = process.cpuUsage(t0);
  return { cpu_ms: Math.round((t.user + t.system) / 1000), wall_ms: Math.round(performance.now() - wall0), mb: Math.round(written / 1024 / 1024) };
}

const stream: Record<string, unknown>[] = [];
if (values.stream) {
  const stub = Bun.spawn([process.execPath, import.meta.path, "--stub-server"], { stdout: "pipe", stderr: "inherit" });
  const reader = (stub.stdout as ReadableStream<Uint8Array>).getReader();
  let port = "";
  while (!port.includes("\n")) port += new TextDecoder().decode((await reader.read()).value);
  const url = `http://127.0.0.1:${port.trim()}/logs`;
  const seconds = Number(values.seconds);
  try {
    for (let r = 0; r < ROUNDS; r++)
      for (const [label, masker] of [
        ["without the Masker (no secrets)", new Masker()],
        [`with the Masker (${N} secrets)`, new Masker(secrets)],
        ...(values.baseline ? [[`with main's Masker, 386769c (${N} secrets)`, new BaselineMasker(secrets) as unknown as Masker] as const] : []),
      ] as const) {
        const m = await streamCpu(url, masker, seconds);
        stream.push({ round: r + 1, path: label, ...m, core_share: `${((m.cpu_ms / m.wall_ms) * 100).toFixed(1)}%` });
      }
  } finally {
    stub.kill();
  }
}
console.log(JSON.stringify({ secrets: N, results, memory, stream }, null, 2));
