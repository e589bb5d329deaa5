// Hashing and constant-time comparison of secrets (tokens, session cookies, links).
import { timingSafeEqual } from "node:crypto";

/** Hex SHA-256 of a secret: the only form in which secrets are stored. */
export function hashSecret(secret: string): string {
  return Bun.CryptoHasher.hash("sha256", secret, "hex") as string;
}

/** Constant-time equality of two hex digests (false on length mismatch). */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}
