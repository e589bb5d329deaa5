// Lists the write-transaction callbacks (`.transaction(…)`) under src/ that PostgreSQL's
// SERIALIZABLE retries make interesting (issue 27, plan §1.4): `bun scripts/tx-scan.ts [--all]`.
//
// - read-decide: a database read inside the callback whose answer steers a branch (`if`, `throw`,
//   `??`, `? :`) before a later write: correct under SQLite's process-wide write lock, and under
//   SERIALIZABLE (one of two racing transactions fails with 40001 and is retried).
// - side effects: in-memory state the callback changes that a retried attempt would change again:
//   assignments to, `++`/`--` of, and mutating calls (`push`, `set`, `add`, `delete`, `clear`,
//   `splice`, `unshift`) on names the callback did not declare, and calls on `this.` (methods that
//   may register state). Idempotent ones still show up: read the lines before trusting a flag.
//
// Textual (a small tokenizer, brace-matched), so it can be fooled; the replay switch of plan §1.4
// (every transaction run twice on SQLite) is the test that finds what it misses.
import { Glob } from "bun";

type Tok = { t: string; at: number; kind: "id" | "p" | "str" };

function skipTemplate(s: string, i: number): number {
  let j = i + 1;
  while (j < s.length) {
    const c = s[j]!;
    if (c === "\\") j += 2;
    else if (c === "`") return j + 1;
    else if (s.startsWith("${", j)) {
      j += 2;
      let depth = 1;
      while (depth > 0 && j < s.length) {
        const d = s[j]!;
        if (d === "`") {
          j = skipTemplate(s, j);
          continue;
        }
        if (d === "{") depth++;
        else if (d === "}") depth--;
        j++;
      }
    } else j++;
  }
  return j;
}

function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) i++;
    else if (s.startsWith("//", i)) i = s.indexOf("\n", i) < 0 ? s.length : s.indexOf("\n", i);
    else if (s.startsWith("/*", i)) i = s.indexOf("*/", i) + 2;
    else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < s.length && s[j] !== c) j += s[j] === "\\" ? 2 : 1;
      out.push({ t: s.slice(i, j + 1), at: i, kind: "str" });
      i = j + 1;
    } else if (c === "`") {
      const j = skipTemplate(s, i);
      out.push({ t: s.slice(i, j), at: i, kind: "str" });
      i = j;
    } else {
      const m = /^[A-Za-z_$][\w$]*/.exec(s.slice(i, i + 80));
      if (m) {
        out.push({ t: m[0], at: i, kind: "id" });
        i += m[0].length;
      } else {
        const p =
          ["?.", "=>", "...", "??=", "??", "===", "!==", "==", "!=", "&&", "||", "<=", ">=", "++", "--", "+=", "-="].find((p) => s.startsWith(p, i)) ?? c;
        out.push({ t: p, at: i, kind: "p" });
        i += p.length;
      }
    }
  }
  return out;
}

function closeOf(toks: Tok[], i: number): number {
  const open = toks[i]!.t;
  const close = open === "(" ? ")" : open === "[" ? "]" : "}";
  let depth = 0;
  for (let j = i; j < toks.length; j++) {
    if (toks[j]!.kind !== "p") continue;
    if (toks[j]!.t === open) depth++;
    else if (toks[j]!.t === close && --depth === 0) return j;
  }
  return toks.length - 1;
}

const MUTATORS = new Set(["push", "set", "add", "delete", "clear", "splice", "unshift"]);
/** Calls that take the transaction and only read (by name): the reads a decision can rest on. */
const READ_NAME =
  /^(get|find|read|load|list|count|is|has|exists|holds|resolve|lookup|next|select|by|of|due|which|can|fetch|current|lastAttempts|namespaceTaken|repoNameTaken)|ById$|ByName$|Of$|Taken$|Exists$/;

interface Found {
  file: string;
  line: number;
  readDecide: string[];
  sideEffects: string[];
}

function scan(file: string, text: string): Found[] {
  const toks = tokenize(text);
  const found: Found[] = [];
  for (let i = 0; i + 2 < toks.length; i++) {
    if (!(toks[i]!.t === "." && toks[i + 1]!.t === "transaction" && toks[i + 2]!.t === "(")) continue;
    const end = closeOf(toks, i + 2);
    const body = toks.slice(i + 3, end);
    // The callback's own names: its parameters and everything it declares.
    const declared = new Set<string>();
    for (let k = 0; k < body.length; k++) {
      const t = body[k]!;
      if (t.kind === "id" && ["const", "let", "var", "function"].includes(t.t)) {
        // const x / const { a, b } / const [a, b]
        let j = k + 1;
        if (body[j]?.t === "{" || body[j]?.t === "[") {
          const e = closeOf(body, j);
          for (let m = j + 1; m < e; m++) if (body[m]!.kind === "id" && body[m + 1]?.t !== ":") declared.add(body[m]!.t);
          j = e;
        } else if (body[j]) declared.add(body[j]!.t);
      }
      if (t.t === "=>") {
        // arrow parameters: ids before `=>` within the closing paren
        {
          let j = k - 1;
          if (body[j]?.kind === "id") declared.add(body[j]!.t);
          else if (body[j]?.t === ")") {
            let depth = 0;
            for (; j >= 0; j--) {
              if (body[j]!.t === ")") depth++;
              else if (body[j]!.t === "(" && --depth === 0) break;
              else if (body[j]!.kind === "id" && depth === 1 && body[j - 1]?.t !== ":") declared.add(body[j]!.t);
            }
          }
        }
      }
    }
    const lineOf = (t: Tok) => text.slice(0, t.at).split("\n").length;
    const sideEffects: string[] = [];
    const readDecide: string[] = [];
    let sawRead: string | null = null;
    let decided: string | null = null;
    for (let k = 0; k < body.length; k++) {
      const t = body[k]!;
      const prev = body[k - 1];
      if (t.kind !== "id") {
        if (sawRead && ["if", "throw", "??", "?", "??=", "||", "&&"].includes(t.t)) decided ??= `${sawRead} then ${t.t} (line ${lineOf(t)})`;
        continue;
      }
      if ((t.t === "if" || t.t === "throw") && sawRead) decided ??= `${sawRead} then ${t.t} (line ${lineOf(t)})`;
      // A call that takes tx: `name(tx` or `x.name(tx`
      if (body[k + 1]?.t === "(" && body[k + 2]?.t === "tx") {
        if (READ_NAME.test(t.t)) sawRead ??= `${t.t}(tx)`;
        else if (decided && !READ_NAME.test(t.t)) {
          if (!readDecide.length) readDecide.push(`${decided}, then ${t.t}(tx) line ${lineOf(t)}`);
        }
      }
      if (prev?.t === "." || prev?.t === "?.") {
        // a.b.push(…) whose root `a` the callback did not declare (or `this`)
        let r = k - 2;
        while (r >= 2 && (body[r - 1]?.t === "." || body[r - 1]?.t === "?.") && body[r - 2]?.kind === "id") r -= 2;
        const root = body[r];
        const chain = body
          .slice(r, k + 1)
          .map((x) => x.t)
          .join("");
        const outer = root?.kind === "id" && (root.t === "this" || !declared.has(root.t));
        if (outer && body[k + 1]?.t === "(" && (MUTATORS.has(t.t) || (root!.t === "this" && r === k - 2))) sideEffects.push(`${chain}(…) line ${lineOf(t)}`);
        if (outer && ["=", "++", "--", "+=", "-="].includes(body[k + 1]?.t ?? "")) sideEffects.push(`${chain} ${body[k + 1]!.t} line ${lineOf(t)}`);
        continue;
      }
      const next = body[k + 1]?.t;
      if (prev?.t === ":" || prev?.t === "<" || prev?.t === "|") continue; // a type annotation
      if (
        !declared.has(t.t) &&
        (next === "=" || next === "++" || next === "--" || next === "+=" || next === "-=" || next === "??=" || prev?.t === "++" || prev?.t === "--")
      )
        sideEffects.push(`${t.t} ${next === "=" ? "=" : (next ?? "")} line ${lineOf(t)}`);
    }
    found.push({ file, line: lineOf(toks[i]!), readDecide, sideEffects });
  }
  return found;
}

const all = process.argv.includes("--all");
const files: string[] = [];
for await (const f of new Glob("src/**/*.ts").scan(".")) if (!f.startsWith("src/db/")) files.push(f);
files.sort();
const results: Found[] = [];
for (const f of files) results.push(...scan(f, await Bun.file(f).text()));
const rd = results.filter((r) => r.readDecide.length);
const se = results.filter((r) => r.sideEffects.length);
console.log(`${results.length} transaction callbacks; ${rd.length} read-then-decide; ${se.length} with in-memory side effects\n`);
console.log("read-then-decide:");
for (const r of rd) console.log(`  ${r.file}:${r.line}: ${r.readDecide.join("; ")}`);
console.log("\nin-memory side effects (a retried attempt repeats them):");
for (const r of se) console.log(`  ${r.file}:${r.line}: ${r.sideEffects.join("; ")}`);
if (all) {
  console.log("\nneither:");
  for (const r of results) if (!r.readDecide.length && !r.sideEffects.length) console.log(`  ${r.file}:${r.line}`);
}
