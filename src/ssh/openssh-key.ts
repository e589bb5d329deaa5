// An Ed25519 private key in OpenSSH's own file format ("openssh-key-v1", unencrypted), as
// ssh-keygen writes it. Why not ssh2's generateKeyPairSync: it strips every leading zero byte of
// the public key it reads from DER, so one key in 256 (a public key starting with 0x00) comes out
// 31 bytes long and no parser, ssh2's own included, reads it back.
import { createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";

const MAGIC = "openssh-key-v1\0";
const KEY_TYPE = "ssh-ed25519";
/** PKCS#8 DER of an Ed25519 key, up to its 32-byte seed (RFC 8410). */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** An Ed25519 key pair: the private key file's text and the `ssh-ed25519 AAAA…` public line. */
export interface OpenSshKeyPair {
  private: string;
  public: string;
}

/** A new Ed25519 key pair in OpenSSH formats. */
export function generateEd25519(): OpenSshKeyPair {
  return ed25519ToOpenSsh(generateKeyPairSync("ed25519").privateKey);
}

/** The Ed25519 key with this 32-byte seed (tests: keys chosen for their bytes). */
export function ed25519FromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error("an Ed25519 seed is 32 bytes");
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
}

/** An Ed25519 private key object in OpenSSH formats. */
export function ed25519ToOpenSsh(key: KeyObject): OpenSshKeyPair {
  const jwk = key.export({ format: "jwk" });
  if (jwk.crv !== "Ed25519" || !jwk.d || !jwk.x) throw new Error("not an Ed25519 private key");
  const seed = Buffer.from(jwk.d, "base64url");
  const pub = Buffer.from(jwk.x, "base64url");
  if (seed.length !== 32 || pub.length !== 32) throw new Error("malformed Ed25519 key");
  const publicBlob = Buffer.concat([str(KEY_TYPE), str(pub)]);
  const check = randomBytes(4);
  const section = Buffer.concat([check, check, str(KEY_TYPE), str(pub), str(Buffer.concat([seed, pub])), str("")]);
  // Padded with 1, 2, 3, … to the cipher's block size (8 for "none").
  const pad = (8 - (section.length % 8)) % 8;
  const padded = Buffer.concat([section, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([Buffer.from(MAGIC, "latin1"), str("none"), str("none"), str(""), u32(1), str(publicBlob), str(padded)]);
  const lines = body.toString("base64").match(/.{1,70}/g)!;
  return {
    private: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join("\n")}\n-----END OPENSSH PRIVATE KEY-----\n`,
    public: `${KEY_TYPE} ${publicBlob.toString("base64")}`,
  };
}

/** SSH wire `string`: a uint32 length, then the bytes. */
function str(value: string | Uint8Array): Buffer {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(value);
  return Buffer.concat([u32(bytes.length), bytes]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}
