// The examples in the people schemas are valid instances of their schemas, so /v1/openapi.json
// never shows a client a shape the service would not send or accept.
import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import * as schemas from "../../../src/services/people/schemas.ts";

/** Every exported schema with its examples (and those of its properties). */
function examplesOf(name: string, schema: TSchema): [string, TSchema, unknown][] {
  const out: [string, TSchema, unknown][] = [];
  for (const e of (schema.examples as unknown[] | undefined) ?? []) out.push([name, schema, e]);
  const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  for (const [key, prop] of Object.entries(props)) out.push(...examplesOf(`${name}.${key}`, prop));
  return out;
}

describe("people schemas", () => {
  const all = Object.entries(schemas) as [string, TSchema][];

  test("every example validates against its schema", () => {
    const checked = all.flatMap(([name, s]) => examplesOf(name, s));
    expect(checked.length).toBeGreaterThan(20);
    const bad = checked.filter(([, s, e]) => !Value.Check(s, e)).map(([name, , e]) => `${name}: ${JSON.stringify(e)}`);
    expect(bad).toEqual([]);
  });

  test("every response shape has an example", () => {
    for (const name of [
      "Account",
      "Accepted",
      "InvitePreview",
      "EmailList",
      "EmailPending",
      "EmailVerified",
      "Token",
      "MintedToken",
      "TokenList",
      "SshKey",
      "SshKeyList",
    ]) {
      const s = (schemas as Record<string, TSchema>)[name]!;
      expect({ name, examples: ((s.examples as unknown[]) ?? []).length > 0 }).toEqual({ name, examples: true });
    }
  });

  test("a minted token's fields are a token's fields plus the secret", () => {
    expect(Object.keys(schemas.MintedToken.properties).sort()).toEqual([...Object.keys(schemas.Token.properties), "token"].sort());
  });
});
