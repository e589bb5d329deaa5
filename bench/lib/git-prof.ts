// Summarizes a .cpuprofile written by `bun --cpu-prof` (bench/git.ts --cpu-prof): shares of
// samples by function (self and inclusive), counting samples rather than time deltas so that
// idle gaps (the server waiting for the client) do not inflate whatever ran next.
//
//   bun bench/lib/git-prof.ts <file.cpuprofile> [--top 30] [--focus name]
//
// --focus name: only samples whose stack contains a function of that name (e.g. createPackFile),
// shares relative to those samples.
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface ProfileRow {
  fn: string;
  selfPct: number;
  totalPct: number;
  self: number;
  total: number;
}

export function summarizeProfile(
  file: string,
  opts: { top?: number; focus?: string } = {},
): { samples: number; focusSamples: number; self: ProfileRow[]; total: ProfileRow[] } {
  const prof = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[] };
  const byId = new Map<number, Node>();
  const parent = new Map<number, number>();
  for (const n of prof.nodes) byId.set(n.id, n);
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: Node) => {
    const url = n.callFrame.url.replace(/^file:\/\//, "").replace(/^.*\/work\/main\//, "");
    return `${n.callFrame.functionName || "(anonymous)"} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : "[native]"}`;
  };
  const stackCache = new Map<number, string[]>();
  const stackOf = (id: number): string[] => {
    let s = stackCache.get(id);
    if (s) return s;
    s = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      if (n.callFrame.functionName !== "(root)") s.push(label(n));
    }
    stackCache.set(id, s);
    return s;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let counted = 0;
  for (const id of prof.samples) {
    const stack = stackOf(id);
    if (!stack.length) continue;
    if (opts.focus && !stack.some((f) => f.startsWith(opts.focus + " ") || f.startsWith("async " + opts.focus + " "))) continue;
    counted++;
    self.set(stack[0]!, (self.get(stack[0]!) ?? 0) + 1);
    for (const f of new Set(stack)) total.set(f, (total.get(f) ?? 0) + 1);
  }
  const rows = (m: Map<string, number>, other: Map<string, number>, isSelf: boolean) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, opts.top ?? 30)
      .map(([fn, n]) => {
        const o = other.get(fn) ?? 0;
        const [s, t] = isSelf ? [n, o] : [o, n];
        return { fn, selfPct: Math.round((1000 * s) / counted) / 10, totalPct: Math.round((1000 * t) / counted) / 10, self: s, total: t };
      });
  return { samples: prof.samples.length, focusSamples: counted, self: rows(self, total, true), total: rows(total, self, false) };
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const get = (n: string) => {
    const i = argv.indexOf(`--${n}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const file = argv.find((a) => a.endsWith(".cpuprofile"));
  if (!file) {
    process.stderr.write("usage: bun bench/lib/git-prof.ts <file.cpuprofile> [--top 30] [--focus fn]\n");
    process.exit(2);
  }
  const s = summarizeProfile(file, { top: Number(get("top") ?? 30), focus: get("focus") });
  process.stdout.write(`${s.focusSamples} of ${s.samples} samples (1 ms each)\n\nself%  total%  function\n`);
  for (const r of s.self) process.stdout.write(`${r.selfPct.toFixed(1).padStart(5)}  ${r.totalPct.toFixed(1).padStart(6)}  ${r.fn}\n`);
  process.stdout.write(`\ntotal%  self%  function (inclusive)\n`);
  for (const r of s.total) process.stdout.write(`${r.totalPct.toFixed(1).padStart(6)}  ${r.selfPct.toFixed(1).padStart(5)}  ${r.fn}\n`);
}
