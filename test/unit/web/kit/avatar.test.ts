// The generated pictures (issue 33): a pure function of the handle, symmetric, inert SVG.
import { describe, expect, test } from "bun:test";
import { avatar, avatarUrl, avatarVersion, identicon } from "../../../../src/http/web/kit/avatar.ts";

/** The filled cells of an identicon as a 5×5 grid of 0/1. */
function grid(svg: string): number[][] {
  const g = Array.from({ length: 5 }, () => [0, 0, 0, 0, 0]);
  for (const m of svg.matchAll(/M(\d+) (\d+)h2v2h-2z/g)) g[(Number(m[2]) - 1) / 2]![(Number(m[1]) - 1) / 2] = 1;
  return g;
}

describe("identicon", () => {
  test("the same handle (any case) gives the same picture; different handles differ", () => {
    expect(identicon("Ada")).toBe(identicon("ada"));
    const many = new Set(["ada", "grace", "linus", "margaret", "ken", "dennis", "barbara", "frances"].map(identicon));
    expect(many.size).toBe(8);
  });

  test("mirrored left to right on a 5×5 grid, with a hue from the hash", () => {
    for (const h of ["ada", "grace", "x", "a-very-long-handle-of-39-characters-xx"]) {
      const g = grid(identicon(h));
      for (const row of g) expect(row).toEqual([...row].reverse());
      expect(identicon(h)).toMatch(/fill="hsl\(\d{1,3} 35% 92%\)".*fill="hsl\(\d{1,3} 55% 42%\)"/);
    }
  });

  test("only shapes with presentation attributes: no script, style, link or event handler", () => {
    const svg = identicon("<script>alert(1)</script>");
    expect(svg).not.toMatch(/script|style|href|on\w+=|<foreignObject/i);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
  });
});

describe("avatar", () => {
  test("an <img> with alt text, size and the versioned address; names escaped", () => {
    expect(avatar("Ada", 20, { version: "i" }).value).toBe(
      '<img class="avatar" src="/avatars/ada?v=i" alt="Ada" width="20" height="20" loading="lazy" decoding="async">',
    );
    expect(avatar("ada", 32, { alt: "" }).value).toContain('alt=""');
    expect(avatar('a"b', 32).value).toContain('alt="a&quot;b"');
    expect(avatarUrl("x y")).toBe("/avatars/x%20y");
  });

  test("the version of a stored key is its hash's first 16 digits; i without one", () => {
    expect(avatarVersion("avatars/u1/0123456789abcdef0123.png")).toBe("0123456789abcdef");
    expect(avatarVersion(null)).toBe("i");
  });
});
