// Opaque identifiers and secrets.
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** A new opaque id: 16 lowercase base32 characters (80 random bits), never containing `_`. */
export function newId(): string {
  return base32(crypto.getRandomValues(new Uint8Array(10)));
}

/** A new secret: 32 lowercase base32 characters (160 random bits). */
export function newSecret(): string {
  return base32(crypto.getRandomValues(new Uint8Array(20)));
}
