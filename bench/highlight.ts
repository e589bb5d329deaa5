// Highlighting engines in-process (issue 19), two parts:
//   1. the cost of one 5,000-line TypeScript file (the text bench/web.ts serves), interleaved rep by
//      rep: speed-highlight's tokenizer alone, our markup on it (`markupLines`), and highlight.js
//      with the per-line split (the path before it); CPU of this process per rep;
//   2. --hostile: every language we highlight against files made of one repeated fragment
//      (`<a b=`, `1.`, `a `, quotes, comment openers, …), each run on the highlighting thread
//      (highlight-worker.ts) with a cap; prints the slowest. This is how the grammars that
//      backtrack were found; run it again after upgrading either package.
// Usage: bun bench/highlight.ts [--reps 15] [--hostile] [--size 32768] [--cap-ms 10000] [--top 30]
import hljs from "highlight.js/lib/common";
import { tokenizeWith } from "@speed-highlight/core/tokenize";
import ts from "@speed-highlight/core/languages/ts.js";
import { join } from "node:path";
import { LANGUAGES, markupLines, splitMarkupLines } from "../src/http/web/repos/highlight-engine.ts";
import { machine } from "./lib/machine.ts";
import { ROOT } from "./lib/proc.ts";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const REPS = Number(arg("reps", "15"));
const SIZE = Number(arg("size", "32768"));
const CAP_MS = Number(arg("cap-ms", "10000"));
const TOP = Number(arg("top", "30"));

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: +s[0]!.toFixed(1), p50: +s[Math.floor(s.length / 2)]!.toFixed(1), max: +s[s.length - 1]!.toFixed(1) };
};

console.log(JSON.stringify({ machine: machine(), load: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ") }));

if (!process.argv.includes("--hostile")) {
  // The same text as bench/web.ts: this repository's sources, concatenated, first 5,000 lines.
  let text = "";
  for await (const path of new Bun.Glob("src/**/*.ts").scan({ cwd: ROOT })) {
    text += await Bun.file(join(ROOT, path)).text();
    if (text.split("\n").length > 5000) break;
  }
  const code = text.split("\n").slice(0, 5000).join("\n");
  const runs = { shj_tokenize: [] as number[], shj_markup: [] as number[], hljs_markup: [] as number[] };
  const grammars = { ts, js: ts };
  for (let i = 0; i < REPS; i++) {
    let c = cpuMs();
    tokenizeWith(code, ts, () => {}, { languages: grammars });
    runs.shj_tokenize.push(cpuMs() - c);
    c = cpuMs();
    markupLines(code, "ts");
    runs.shj_markup.push(cpuMs() - c);
    c = cpuMs();
    splitMarkupLines(hljs.highlight(code, { language: "typescript", ignoreIllegals: true }).value);
    runs.hljs_markup.push(cpuMs() - c);
  }
  console.log(
    JSON.stringify({ bytes: Buffer.byteLength(code), reps: REPS, cpu_ms: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, summary(v)])) }, null, 2),
  );
} else {
  const FRAGMENTS = [
    "a ",
    "a",
    "/*",
    "'",
    '"',
    "`",
    "${",
    "<",
    "<a ",
    "<a b=",
    "#",
    "\\",
    "(",
    "{",
    "[",
    "//",
    "--",
    "=",
    ":",
    "f'",
    '"""',
    "```",
    "$(",
    "|",
    "*",
    " ",
    "1.",
    "1e-",
    "a:",
    "a =",
    "x(",
    "/",
    "/a",
    "<!--",
    "[a",
    "**",
    "_a",
    "$",
    "-",
    "@",
    "!",
    ".a",
    "a.",
    "'a",
    "A",
    "a {",
    "a;",
  ];
  /** A file of `fragment` repeated, in lines of ~80 characters, SIZE bytes in all. */
  const fileOf = (fragment: string) => {
    const lines: string[] = [];
    let line = "";
    let total = 0;
    while (total < SIZE) {
      line += fragment;
      if (line.length >= 78) {
        lines.push(line);
        total += line.length + 1;
        line = "";
      }
    }
    return lines.join("\n");
  };
  /** Milliseconds the highlighting thread takes on `code`, or Infinity past the cap (the thread is then terminated). */
  const timeOnThread = (code: string, language: string) =>
    new Promise<number>((resolve) => {
      const w = new Worker(new URL("../src/http/web/repos/highlight-worker.ts", import.meta.url).href);
      let t = 0;
      const cap = setTimeout(() => {
        w.terminate();
        resolve(Infinity);
      }, CAP_MS);
      w.onmessage = (e: MessageEvent<{ id: number }>) => {
        if (e.data.id === 0) {
          t = performance.now();
          w.postMessage({ id: 1, code, language });
          return;
        }
        clearTimeout(cap);
        w.terminate();
        resolve(performance.now() - t);
      };
      w.postMessage({ id: 0, code: "x", language });
    });
  const results: [number, string][] = [];
  for (const language of Object.keys(LANGUAGES)) {
    for (const fragment of FRAGMENTS) {
      const ms = await timeOnThread(fileOf(fragment), language);
      results.push([ms, `${language} ${JSON.stringify(fragment)}`]);
      if (ms > 1000) console.log(`slow: ${language} ${JSON.stringify(fragment)} ${ms === Infinity ? `> ${CAP_MS}` : ms.toFixed(0)} ms`);
    }
  }
  results.sort((a, b) => b[0] - a[0]);
  console.log(
    JSON.stringify(
      { size: SIZE, cap_ms: CAP_MS, slowest: results.slice(0, TOP).map(([ms, what]) => `${ms === Infinity ? `>${CAP_MS}` : ms.toFixed(0)} ms  ${what}`) },
      null,
      2,
    ),
  );
}
