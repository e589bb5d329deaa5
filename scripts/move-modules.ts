// Moves modules and rewrites every relative import that names them (src/, cli/, test/, bench/,
// scripts/). Usage: bun scripts/move-modules.ts old=new [old=new …] (paths from the repo root).
// Used for the domain-folder layout; kept so later moves stay mechanical.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const moves = new Map<string, string>();
for (const arg of process.argv.slice(2)) {
  const [from, to] = arg.split("=");
  if (!from || !to) throw new Error(`bad move ${arg}`);
  moves.set(resolve(ROOT, from), resolve(ROOT, to));
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (/\.(ts|tsx|js|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

const all = ["src", "cli", "test", "bench", "scripts"].flatMap((d) => files(join(ROOT, d)));
const SPEC = /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\brequire\(\s*)(["'])(\.{1,2}\/[^"']+)\2/g;

for (const file of all) {
  const text = readFileSync(file, "utf8");
  const newFile = moves.get(file) ?? file;
  const rewritten = text.replace(SPEC, (whole, lead: string, q: string, spec: string) => {
    const target = resolve(dirname(file), spec);
    const moved = moves.get(target) ?? target;
    let rel = relative(dirname(newFile), moved);
    if (!rel.startsWith(".")) rel = `./${rel}`;
    return rel === spec ? whole : `${lead}${q}${rel}${q}`;
  });
  if (rewritten !== text) writeFileSync(file, rewritten);
}
for (const [from, to] of moves) {
  mkdirSync(dirname(to), { recursive: true });
  renameSync(from, to);
}
console.log(`moved ${moves.size} modules`);
