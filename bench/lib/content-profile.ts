// Summarises a V8/Bun .cpuprofile (as written by `bun --cpu-prof`) by sample counts:
//   - self samples per function;
//   - inclusive samples per project function (src/…), i.e. where the time is spent from the
//     point of view of our code;
//   - for a sample whose leaf is outside src/, the innermost src/ frame that led to it (who is
//     responsible for library/native time).
// Counts samples (not time deltas), so a process descheduled on a busy machine is not charged.
//
// With --root NAME, only samples with a frame whose function name is NAME count (e.g. --root
// getTree: where the tree listing spends its CPU), and shares are of those samples.
//
// With --from/--to (epoch ms, e.g. from the `windows` of bench/content.ts's summary), only samples
// taken in that interval count.
//
//   bun bench/lib/content-profile.ts FILE.cpuprofile [--top 25] [--match /src/] [--root NAME]
//                                    [--from EPOCH_MS] [--to EPOCH_MS]
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--"));
if (!file) {
  process.stderr.write("usage: bun bench/lib/content-profile.ts FILE.cpuprofile [--top 25] [--match /src/] [--root NAME] [--from EPOCH_MS] [--to EPOCH_MS]\n");
  process.exit(2);
}
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : dflt;
};
const top = Number(opt("top", "25"));
const match = opt("match", "/src/");
const root = opt("root", "");
const fromUs = Number(opt("from", "0")) * 1000;
const toUs = Number(opt("to", "Infinity")) * 1000;

const prof = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; startTime: number; timeDeltas: number[] };
// Sample timestamps: startTime (epoch µs in Bun's profiles) plus the running sum of deltas.
const at: number[] = [];
{
  let t = prof.startTime;
  for (const d of prof.timeDeltas) at.push((t += d));
}
const byId = new Map<number, Node>();
const parent = new Map<number, number>();
for (const n of prof.nodes) byId.set(n.id, n);
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = (n: Node) => {
  const url = n.callFrame.url.replace(/^.*\/work\/main\//, "");
  return `${n.callFrame.functionName || "(anonymous)"} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
};
const isIdle = (n: Node) => ["(idle)", "(program)", "(garbage collector)"].includes(n.callFrame.functionName);

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const blame = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [k, id] of prof.samples.entries()) {
  if (at[k]! < fromUs || at[k]! > toUs) continue;
  const leaf = byId.get(id)!;
  if (leaf.callFrame.functionName === "(idle)") {
    idle++;
    continue;
  }
  if (root) {
    let inRoot = false;
    for (let cur: number | undefined = id; cur !== undefined && !inRoot; cur = parent.get(cur)) inRoot = byId.get(cur)!.callFrame.functionName === root;
    if (!inRoot) continue;
  }
  total++;
  self.set(label(leaf), (self.get(label(leaf)) ?? 0) + 1);
  const seen = new Set<string>();
  let blamed = false;
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    if (isIdle(n)) continue;
    const l = label(n);
    if (n.callFrame.url.includes(match)) {
      if (!seen.has(l)) {
        seen.add(l);
        inclusive.set(l, (inclusive.get(l) ?? 0) + 1);
      }
      if (!blamed) {
        blamed = true;
        if (!leaf.callFrame.url.includes(match)) blame.set(l, (blame.get(l) ?? 0) + 1);
      }
    }
  }
}

const pct = (n: number) => `${((n / total) * 100).toFixed(1)}%`;
const show = (title: string, m: Map<string, number>) => {
  process.stdout.write(`\n## ${title}\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(v).padStart(6)}  ${String(v).padStart(6)}  ${k}\n`);
};
process.stdout.write(`${file}\nsamples: ${total} busy${root ? ` under ${root}` : ""}, ${idle} idle\n`);
show("self samples (share of busy samples)", self);
show(`inclusive samples of ${match} functions`, inclusive);
show(`library/native leaf samples, by innermost ${match} caller`, blame);
