// Counts, per module, what ties the metadata code to SQLite (input for issue 27, PostgreSQL as a
// second database; see docs/postgres-notes.md): `bun scripts/sqlite-specifics.ts [--all]`.
// Looks at src/db and the store modules (src/services/**/store*.ts, facts-store.ts); --all adds
// every other file under src/ that matches a database pattern (JS's Map#get etc. are not counted
// outside the store modules). Patterns are textual: read the lines before trusting a count.
import { Glob } from "bun";

const PATTERNS: [string, RegExp][] = [
  // drizzle's bun-sqlite terminals: synchronous; pg-core builders are awaited instead.
  ["drizzle .get()", /\.get\(\)/g],
  ["drizzle .all()", /\.all\(\)/g],
  ["drizzle .run()", /\.run\(\)/g],
  ["q.all/get/run/values(sql)", /\b(q|tx)\.(all|get|run|values)(<[^>]*>)?\(\s*sql`/g],
  // bun:sqlite statements prepared on the connection under drizzle ($client.prepare)
  ["raw bun:sqlite stmt", /\braw\(\s*(q|tx)\s*,/g],
  ["$client", /\$client/g],
  ["sql`…` fragments", /\bsql(<[^>]*>)?`/g],
  ["positional ?N params", /\?\d\b/g],
  ["json_extract/json_each", /\bjson_(extract|each|group_array|object|array)\b/gi],
  ["scalar max/min(a, b)", /\b(max|min)\((?![^()]*\bseq\b)[^()]*\([^()]*\)[^()]*,|\b(max|min)\([^()]*,[^()]*\)/g],
  ["rowid", /\browid\b/gi],
  ["FTS5 MATCH", /\bMATCH\b/g],
  ["boolean as 0/1 in SQL", /\b(public|hosted|ephemeral|is_default|allow_public|isDefault\}?)\s*=\s*[01]\b/g],
  ["sql`1` as a condition", /sql`1`/g],
  ["IS NOT (null-safe)", /\bIS NOT \?/g],
  ["count(*) typed number", /sql<number>`count\(\*\)`|count\(\*\) AS n/gi],
  ["onConflictDo*", /onConflictDo\w+/g],
  ["INSERT OR", /INSERT\s+OR\s+\w+/gi],
  ["COLLATE NOCASE", /COLLATE\s+NOCASE/gi],
  ["strftime/datetime", /\b(strftime|datetime|julianday|unixepoch)\(/gi],
  ["sqlite-core / bun:sqlite import", /from "(drizzle-orm\/sqlite-core|drizzle-orm\/bun-sqlite|bun:sqlite)"/g],
  ["blob column", /\bblob\(/g],
  ["mode: boolean/json", /mode: "(boolean|json)"/g],
  ["ctx.db.transaction(", /\.db\.transaction\(/g],
];

const all = process.argv.includes("--all");
const files: string[] = [];
for await (const f of new Glob("src/**/*.ts").scan(".")) files.push(f);
files.sort();
const isStore = (f: string) => f.startsWith("src/db/") || /\/store[^/]*\.ts$|facts-store\.ts$/.test(f);
const totals = new Map<string, number>();
const lines: string[] = [];
for (const f of files) {
  const text = await Bun.file(f).text();
  const store = isStore(f);
  const counts = PATTERNS.map(([name, re]) => [name, (text.match(re) ?? []).length] as const).filter(
    ([name, n]) => (n > 0 && (store || (all && !name.startsWith("drizzle .")))) || (n > 0 && name === "ctx.db.transaction("),
  );
  if (!counts.length) continue;
  for (const [name, n] of counts) totals.set(name, (totals.get(name) ?? 0) + n);
  lines.push(`${f}: ${counts.map(([k, n]) => `${k} ${n}`).join(", ")}`);
}
console.log(lines.join("\n"));
console.log(`\ntotal: ${[...totals].map(([k, n]) => `${k} ${n}`).join(", ")}`);
