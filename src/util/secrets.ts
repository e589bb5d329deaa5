// Hashing and constant-time comparison of secrets (tokens, session cookies, links).
import { timingSafeEqual } from "node:crypto";

/** Hex SHA-256 of a secret: the only form in which secrets are stored. */
export function hashSecret(secret: string): string {
  return Bun.CryptoHasher.hash("sha256", secret, "hex") as string;
}

/**
 * A stored hex digest (see hashSecret) decoded to its 32 bytes, once, so that checking a
 * presented secret against it (secretMatches) allocates and encodes nothing but the hash.
 */
export function storedDigest(hex: string): Uint8Array {
  return Buffer.from(hex, "hex");
}

/** Whether `secret` hashes to `digest` (from storedDigest), compared in constant time. */
export function secretMatches(secret: string, digest: Uint8Array): boolean {
  const presented = Bun.SHA256.hash(secret) as Uint8Array;
  return presented.byteLength === digest.byteLength && timingSafeEqual(presented, digest);
}
