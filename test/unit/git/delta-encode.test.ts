import { describe, expect, test } from "bun:test";
import { applyDelta } from "../../../src/git/delta.ts";
import { encodeDelta } from "../../../src/git/delta-encode.ts";
import { rng } from "./repo-fixture.ts";

const rand = rng(11);
const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
const text = (n: number) => {
  const words = ["foo", "bar", "const", "return", "\n", "  ", "if", "(x)", "{", "}", ";"];
  let s = "";
  while (s.length < n) s += `${words[Math.floor(rand() * words.length)]} `;
  return new TextEncoder().encode(s.slice(0, n));
};
const edit = (b: Uint8Array) => {
  const t = new Uint8Array(b);
  for (let i = 0; i < 10 && t.length > 0; i++) t[Math.floor(rand() * t.length)] = 65 + Math.floor(rand() * 26);
  return new Uint8Array([...t.subarray(0, t.length >> 1), ...text(b.length >> 4), ...t.subarray(t.length >> 1)]);
};

describe("encodeDelta", () => {
  test("round trips edited, unrelated, repeated and tiny inputs", () => {
    for (const n of [0, 1, 15, 16, 17, 31, 32, 100, 4096, 70_000, 200_000]) {
      for (const base of [text(n), bytes(n)]) {
        for (const target of [edit(base), text(n), bytes(n >> 1), base, new Uint8Array(0), new Uint8Array([...base, ...base])]) {
          const d = encodeDelta(base, target);
          expect(d).not.toBeNull();
          expect(applyDelta(base, d!)).toEqual(target);
        }
      }
    }
  });

  test("similar inputs give small deltas; long copies are split at 64 KiB", () => {
    const base = bytes(300_000);
    const d = encodeDelta(base, edit(base))!;
    expect(d.length).toBeLessThan(30_000);
    expect(encodeDelta(base, base)!.length).toBeLessThan(64);
  });

  test("gives up past the limit", () => {
    const base = bytes(10_000);
    expect(encodeDelta(base, bytes(10_000), 5_000)).toBeNull();
    expect(encodeDelta(base, base, 5_000)).not.toBeNull();
  });
});
