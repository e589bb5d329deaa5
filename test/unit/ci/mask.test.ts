// Masking secrets in logs (issue 29): the forms a value is printed in, leftmost-longest matching,
// and streaming with a held tail so a value split across writes (or log chunks) is masked.
import { describe, expect, test } from "bun:test";
import { MASK, Masker, maskForms } from "../../../src/services/ci/mask.ts";
import { maskDifferential, maskReference } from "../../fuzz/ci-targets.ts";
import { Rand } from "../../fuzz/lib.ts";

const SECRET = "hunter2-Pa55/word+x";
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("the forms of a value", () => {
  test("raw, base64 at every alignment, base64url, URL-encoded, JSON-escaped, lines", () => {
    const m = new Masker([SECRET, 'say "hi"\\', "line one\nline two\r\nok"]);
    for (const before of ["", "a", "ab", "abc", "abcd"])
      for (const after of ["", "z", "zz", "zzz"]) {
        const printed = b64(before + SECRET + after);
        expect(m.mask(printed)).toContain(MASK);
        expect(m.mask(printed.replace(/\+/g, "-").replace(/\//g, "_"))).toContain(MASK);
      }
    expect(m.mask(`url=${encodeURIComponent(SECRET)}&x=1`)).toBe(`url=${MASK}&x=1`);
    expect(m.mask(`{"v":${JSON.stringify('say "hi"\\')}}`)).toBe(`{"v":"${MASK}"}`);
    expect(m.mask("> line one\n> line two\n")).toBe(`> ${MASK}\n> ${MASK}\n`);
    expect(m.mask(`x ${SECRET} y`)).toBe(`x ${MASK} y`);
  });

  test("derived forms shorter than 4 characters are left alone; the value itself never", () => {
    expect(maskForms("ab")).toEqual(["ab"]);
    expect(new Masker(["ab"]).mask("abc cab")).toBe(`${MASK}c c${MASK}`);
    expect(maskForms("a\nb")).toEqual(["a\nb", "YQpi", "a%0Ab", "a\\nb"]);
    expect(maskForms("")).toEqual([]);
  });

  test("leftmost-longest: a longer value wins over its prefix", () => {
    const m = new Masker(["abc", "abcdef"]);
    expect(m.mask("xabcdefx abcx")).toBe(`x${MASK}x ${MASK}x`);
  });

  test("no values: text passes unchanged", () => {
    const m = new Masker([]);
    expect(m.empty).toBe(true);
    expect(m.push("anything")).toBe("anything");
    expect(m.flush()).toBe("");
  });
});

describe("streaming", () => {
  const line = `token: ${SECRET} and again ${b64(SECRET)} end\n`;
  const masked = (() => new Masker([SECRET]).mask(line))();

  test("a value split across two writes at every position is masked", () => {
    expect(masked).not.toContain(SECRET);
    for (let cut = 0; cut <= line.length; cut++) {
      const m = new Masker([SECRET]);
      const out = m.push(line.slice(0, cut)) + m.push(line.slice(cut)) + m.flush();
      expect(out).toBe(masked);
    }
  });

  test("one character at a time", () => {
    const m = new Masker([SECRET, "other-secret"]);
    let out = "";
    for (const ch of line + "other-secret!") out += m.push(ch);
    expect(out + m.flush()).toBe(`${masked}${MASK}!`);
  });

  test("only a tail that could start a value is held, and flush releases it", () => {
    const m = new Masker(["zzzz1234"]);
    expect(m.push("abc zz")).toBe("abc ");
    expect(m.push("zq")).toBe("zzzq");
    expect(m.push("zzzz12")).toBe("");
    expect(m.flush()).toBe("zzzz12");
    expect(m.push("plain text")).toBe("plain text");
  });

  test("a tail is never held longer than the longest form", () => {
    const m = new Masker(["a".repeat(10)]);
    expect(m.push("a".repeat(9))).toBe("");
    expect(m.push("b")).toBe(`${"a".repeat(9)}b`);
    expect(m.push("a".repeat(25))).toBe(`${MASK}${MASK}`);
    expect(m.flush()).toBe("aaaaa");
  });

  test("values added while streaming (::add-mask::) apply to what follows", () => {
    const m = new Masker([]);
    expect(m.push("before s3cr3t-later ")).toBe("before s3cr3t-later ");
    m.add("s3cr3t-later");
    expect(m.push("after s3cr3t-later\n") + m.flush()).toBe(`after ${MASK}\n`);
  });

  test("contains", () => {
    const m = new Masker([SECRET]);
    expect(m.contains(`x${b64(SECRET)}`)).toBe(true);
    expect(m.contains("nothing here")).toBe(false);
  });
});

describe("against the naive reference (longest form at each position, random writes)", () => {
  const ALPHABET = "ab\nc=/\u0161\u0100";
  test("random values and texts, some with a value added while streaming, half on the automata (budget 0)", () => {
    const r = new Rand(29);
    const word = (n: number) => Array.from({ length: n }, () => ALPHABET[r.int(ALPHABET.length)]).join("");
    for (let n = 0; n < 400; n++) {
      const min = n % 2 ? 4 : 1;
      const values = Array.from({ length: 1 + r.int(5) }, () => word(min + r.int(n % 5 ? 8 : 40)));
      const text = Array.from({ length: r.int(30) }, () => {
        const v = r.pick(values);
        return r.pick([v, v.slice(0, r.int(v.length)), Buffer.from(word(r.int(3)) + v).toString("base64"), word(r.int(10))]);
      }).join("");
      maskDifferential(r, values, text, n % 3 ? null : word(min + r.int(8)), n % 4 < 2 ? 0 : undefined);
    }
  });

  test("code units outside Latin-1 share table slots but are compared in full", () => {
    const m = new Masker(["\u0161\u0162x", "\u0100"]);
    expect(m.mask("abx ab\u0162x \u0161\u0162x \u0100 \u0200")).toBe(`abx ab\u0162x ${MASK} ${MASK} \u0200`);
    expect(m.push("a\u0161")).toBe("a");
    expect(m.push("\u0162x\u0100")).toBe(`${MASK}${MASK}`);
    expect(m.push("a") + m.flush()).toBe("a");
  });

  test("a log of only prefixes of the forms: each write held at most to the longest form less one", () => {
    const secrets = ["ghp_0123456789abcdefABCDEF", "p4ss-w0rd/xyz"];
    const forms = secrets.flatMap((s) => maskForms(s));
    const longest = Math.max(...forms.map((f) => f.length));
    const m = new Masker(secrets);
    let text = "";
    for (let i = 0; i < 2000; i++) text += forms[i % forms.length]!.slice(0, 1 + (i % (forms[i % forms.length]!.length - 1)));
    let out = "";
    for (let i = 0; i < text.length; i += 7) {
      out += m.push(text.slice(i, i + 7));
      expect(m.holding).toBeLessThan(longest);
    }
    expect(out + m.flush()).toBe(maskReference(secrets, text));
  });
});

test("a value repeating itself against output that repeats it with one unit changed: past the compare budget the automata answer the same", () => {
  // Longer than the skip loop's largest shift (255), so most positions are compared up to the `b`.
  const value = "a".repeat(1000);
  const text = `${`${"a".repeat(999)}b`.repeat(10)}${value}b${`${"a".repeat(999)}b`.repeat(10)}${value}${"a".repeat(999)}`;
  const m = new Masker([value]);
  let out = "";
  for (let i = 0; i < text.length; i += 5000) out += m.push(text.slice(i, i + 5000));
  expect(m.holding).toBe(999);
  expect(out + m.flush()).toBe(maskReference([value], text));
  expect(new Masker([value]).mask(text)).toBe(maskReference([value], text));
});
