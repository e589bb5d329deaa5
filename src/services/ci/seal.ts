// Sealing CI secrets at rest (issue 29, DECISIONS §5 CI "Encrypted at rest"): AES-256-GCM under
// the installation's secrets key, a fresh 12-byte nonce per value, and additional data naming the
// row (org, repo, name) so a sealed value copied into another row does not open. The stored form
// is `v1:<key id>:<nonce, base64>:<ciphertext and tag, base64>`; the key id (16 hex digits of a
// SHA-256 of the key) tells "sealed under another key" from "damaged". Pure given the key: where
// the key comes from (SVC_SECRETS_KEY or the data dir's file) is secrets-key.ts's business.
// Why no value or key in any message: they end up in logs and API errors.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/** Bytes of a secrets key (AES-256). */
export const SECRETS_KEY_BYTES = 32;

const VERSION = "v1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Decodes a secrets key written as base64 (of 32 bytes) or 64 hex digits; throws a message that never quotes it. */
export function parseSecretsKey(text: string): Uint8Array {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return new Uint8Array(Buffer.from(t, "hex"));
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const bytes = Buffer.from(t, t.includes("-") || t.includes("_") ? "base64url" : "base64");
    if (bytes.length === SECRETS_KEY_BYTES) return new Uint8Array(bytes);
  }
  throw new Error(`the secrets key must be ${SECRETS_KEY_BYTES} bytes written as base64 (44 characters) or as 64 hex digits`);
}

/** A new random key, as the data dir's key file holds it (base64). */
export function newSecretsKey(): string {
  return randomBytes(SECRETS_KEY_BYTES).toString("base64");
}

/** The key's id: 16 hex digits of SHA-256 over a label and the key (names the key in errors without revealing it). */
export function secretsKeyId(key: Uint8Array): string {
  return createHash("sha256").update("svc-secrets-key:").update(key).digest("hex").slice(0, 16);
}

/** The additional data binding a sealed value to its row. */
export function secretScope(orgId: string, repoId: string | null, name: string): string {
  return `svc-secret:${VERSION}:${orgId}:${repoId ?? ""}:${name}`;
}

/** Seals `value` under `key` for the row named by `scope` (secretScope). */
export function seal(key: Uint8Array, scope: string, value: string): string {
  if (key.length !== SECRETS_KEY_BYTES) throw new Error("the secrets key has the wrong length");
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(scope));
  const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}:${secretsKeyId(key)}:${nonce.toString("base64")}:${body.toString("base64")}`;
}

/** What opening a sealed value gives: the value, or why not (another key sealed it; the text is damaged or belongs to another row). */
export type Opened = { ok: true; value: string } | { ok: false; kind: "other_key"; keyId: string } | { ok: false; kind: "damaged" };

/** Opens a value sealed by `seal` for the same `scope`. */
export function unseal(key: Uint8Array, scope: string, sealed: string): Opened {
  const parts = sealed.split(":");
  if (parts.length !== 4 || parts[0] !== VERSION) return { ok: false, kind: "damaged" };
  const [, keyId, nonceText, bodyText] = parts as [string, string, string, string];
  if (keyId !== secretsKeyId(key)) return { ok: false, kind: "other_key", keyId };
  const nonce = Buffer.from(nonceText, "base64");
  const body = Buffer.from(bodyText, "base64");
  if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) return { ok: false, kind: "damaged" };
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, nonce);
    decipher.setAAD(Buffer.from(scope));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
    return { ok: true, value: plain.toString("utf8") };
  } catch {
    // Why one answer for every failure: a wrong scope, a flipped bit and a truncated tag are all "not this row's value".
    return { ok: false, kind: "damaged" };
  }
}
