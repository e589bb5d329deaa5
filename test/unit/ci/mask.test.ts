// Masking secrets in logs (issue 29): the forms a value is printed in, leftmost-longest matching,
// and streaming with a held tail so a value split across writes (or log chunks) is masked.
import { describe, expect, test } from "bun:test";
import { MASK, Masker, maskForms } from "../../../src/services/ci/mask.ts";

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
