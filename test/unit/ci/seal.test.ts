// Sealing CI secrets at rest (issue 29): AES-256-GCM round trip, the row binding, another key told
// apart from damage, fresh nonces, and key parsing that never quotes the key.
import { describe, expect, test } from "bun:test";
import { newSecretsKey, parseSecretsKey, seal, secretScope, secretsKeyId, unseal } from "../../../src/services/ci/seal.ts";

const key = parseSecretsKey(newSecretsKey());
const other = parseSecretsKey(newSecretsKey());
const scope = secretScope("org1", "repo1", "DEPLOY_KEY");

describe("seal and unseal", () => {
  test("round trip, including multi-line and non-ASCII values; the stored form holds no plaintext", () => {
    for (const value of ["s3cret", "-----BEGIN KEY-----\nabc\n-----END KEY-----\n", "pässwörd ✓", "x".repeat(48 * 1024)]) {
      const sealed = seal(key, scope, value);
      expect(sealed).toStartWith(`v1:${secretsKeyId(key)}:`);
      expect(sealed).not.toContain(value.slice(0, 6));
      expect(unseal(key, scope, sealed)).toEqual({ ok: true, value });
    }
  });

  test("a fresh nonce each time", () => {
    expect(seal(key, scope, "same")).not.toBe(seal(key, scope, "same"));
  });

  test("bound to its row: another org, repo or name does not open it", () => {
    const sealed = seal(key, scope, "s3cret");
    for (const s of [secretScope("org2", "repo1", "DEPLOY_KEY"), secretScope("org1", null, "DEPLOY_KEY"), secretScope("org1", "repo1", "OTHER")])
      expect(unseal(key, s, sealed)).toEqual({ ok: false, kind: "damaged" });
  });

  test("sealed under another key: named by its id", () => {
    const sealed = seal(other, scope, "s3cret");
    expect(unseal(key, scope, sealed)).toEqual({ ok: false, kind: "other_key", keyId: secretsKeyId(other) });
  });

  test("damaged text", () => {
    const sealed = seal(key, scope, "s3cret");
    const [v, id, nonce, body] = sealed.split(":") as [string, string, string, string];
    const flipped = Buffer.from(body, "base64");
    flipped[0]! ^= 1;
    for (const bad of [
      `${v}:${id}:${nonce}:${flipped.toString("base64")}`,
      `${v}:${id}:${nonce}:AAAA`,
      `v2:${id}:${nonce}:${body}`,
      "garbage",
      `${v}:${id}:AAAA:${body}`,
    ])
      expect(unseal(key, scope, bad)).toEqual({ ok: false, kind: "damaged" });
  });
});

describe("keys", () => {
  test("base64, base64url and hex forms of 32 bytes", () => {
    const raw = Buffer.alloc(32, 7);
    for (const text of [raw.toString("base64"), raw.toString("base64url"), raw.toString("hex"), ` ${raw.toString("hex")}\n`])
      expect(Buffer.from(parseSecretsKey(text)).equals(raw)).toBe(true);
  });

  test("anything else is refused without quoting it", () => {
    for (const text of ["", "short", Buffer.alloc(31).toString("base64"), Buffer.alloc(33).toString("hex"), "z".repeat(64)]) {
      let message = "";
      try {
        parseSecretsKey(text);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toBe("the secrets key must be 32 bytes written as base64 (44 characters) or as 64 hex digits");
    }
  });

  test("the key id is stable and differs between keys", () => {
    expect(secretsKeyId(key)).toMatch(/^[0-9a-f]{16}$/);
    expect(secretsKeyId(key)).toBe(secretsKeyId(new Uint8Array(key)));
    expect(secretsKeyId(key)).not.toBe(secretsKeyId(other));
  });
});
