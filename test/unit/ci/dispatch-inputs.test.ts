import { describe, expect, test } from "bun:test";
import { checkInputs } from "../../../src/services/ci/dispatch.ts";
import type { InputSpec } from "../../../src/services/ci/workflow-on.ts";

const spec = (name: string, type: InputSpec["type"], extra: Partial<InputSpec> = {}): InputSpec => ({
  name,
  description: null,
  required: false,
  type,
  default: null,
  options: null,
  ...extra,
});

describe("dispatch inputs (checkInputs)", () => {
  test("a number input takes a number or its text and is stored as a number", () => {
    const specs = [spec("n", "number"), spec("m", "number", { default: "5" }), spec("e", "environment")];
    expect(checkInputs(specs, { n: "3", e: "staging" })).toEqual({ ok: true, inputs: { n: 3, m: 5, e: "staging" } });
    expect(checkInputs(specs, { n: 2.5 })).toEqual({ ok: true, inputs: { n: 2.5, m: 5, e: "" } });
  });
  test("a number input refuses text that is not a number", () => {
    const out = checkInputs([spec("n", "number")], { n: "three" });
    expect(out).toEqual({ ok: false, problems: { n: "must be a number" } });
    expect(checkInputs([spec("n", "number")], { n: "1e999" }).ok).toBe(false);
  });
});
