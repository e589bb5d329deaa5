// Highlighted code's one-letter classes (kit/highlight-classes.ts): one map for both engines and
// the stylesheet. Every class an engine draws has its rule, the sub-scopes that had a colour of
// their own keep it, and no other markup or style of the web pages uses one of the letters.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { HIGHLIGHT_CSS, hljsClass, SHJ_CLASSES, TOKEN_CLASSES, TOKEN_STYLES } from "../../../../src/http/web/kit/highlight-classes.ts";
import { STYLE } from "../../../../src/http/web/kit/assets.ts";
import { markupLines } from "../../../../src/http/web/repos/highlight-engine.ts";

const WEB = resolve(import.meta.dir, "../../../../src/http/web");
/** The files that draw or style the classes themselves. */
const OWN = new Set(["kit/highlight-classes.ts", "repos/highlight-engine.ts"]);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith(".ts") ? [path] : [];
  });
}

describe("highlight classes", () => {
  test("the stylesheet has each class's rule, from the one map", () => {
    for (const c of TOKEN_CLASSES) expect(HIGHLIGHT_CSS).toContain(`span.${c}{${TOKEN_STYLES[c]}}`);
    expect(STYLE.body).toContain(HIGHLIGHT_CSS);
    for (const c of Object.values(SHJ_CLASSES)) expect(TOKEN_CLASSES).toContain(c);
  });

  test("both engines draw only the map's classes, merged runs, no span for plain text", () => {
    const ts = markupLines('export const a = 1; // note\nlet s = "x";', "ts")!;
    expect(ts[0]).toBe('<span class="k">export const</span> a = <span class="d">1</span>; <span class="m">// note</span>');
    const rb = markupLines('class Foo < Bar\n  def self.x = "a#{1}"\nend', "ruby")!;
    for (const line of [...ts, ...rb]) for (const m of line.matchAll(/<span([^>]*)>/g)) expect(m[1]).toMatch(/^ class="[bdefghikmst]"$/);
    expect(rb.join("\n")).toContain('<span class="k">class</span> <span class="t">Foo</span>');
    expect(rb.join("\n")).toContain('<span class="s">&quot;a#{<span class="d">1</span>}&quot;</span>');
  });

  test("highlight.js's scopes keep their colours", () => {
    const cases: [string, string | null][] = [
      ["hljs-keyword", "k"],
      ["hljs-title function_", "f"],
      ["hljs-title class_", "t"],
      ["hljs-title class_ inherited__", "t"],
      ["hljs-variable", "d"],
      ["hljs-variable language_", "k"],
      ["hljs-variable constant_", "d"],
      ["hljs-meta", "m"],
      ["hljs-meta prompt_", "m"],
      ["hljs-built_in", "t"],
      ["hljs-addition", "g"],
      ["hljs-deletion", "k"],
      ["hljs-emphasis", "i"],
      ["hljs-strong", "b"],
      ["hljs-punctuation", null],
      ["hljs-subst", null],
      ["hljs-constructor", null],
      ["", null],
    ];
    for (const [attr, cls] of cases) expect(hljsClass(attr), attr).toBe(cls as never);
  });

  test("no other markup or style of the web pages uses one of the letters", () => {
    const bad: string[] = [];
    const letters = new Set<string>(TOKEN_CLASSES);
    for (const path of files(WEB)) {
      const rel = relative(WEB, path);
      if (OWN.has(rel)) continue;
      const text = readFileSync(path, "utf8");
      for (const m of text.matchAll(/class="([^"]*)"/g)) for (const c of m[1]!.split(/\s+/)) if (letters.has(c)) bad.push(`${rel}: class ${c}`);
      if (/styles\.ts$|assets\.ts$/.test(rel)) for (const m of text.matchAll(/\.([a-z])(?![\w-])/g)) if (letters.has(m[1]!)) bad.push(`${rel}: .${m[1]}`);
    }
    expect(bad).toEqual([]);
  });
});
