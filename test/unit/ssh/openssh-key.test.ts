// Ed25519 host keys in OpenSSH's file format: read back by ssh2 (the server) and by OpenSSH's
// ssh-keygen, for every key, including the one in 256 whose public key starts with a zero byte
// (ssh2's own generator drops that byte and writes a key nothing can read).
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ssh2 from "ssh2";
import { ed25519FromSeed, ed25519ToOpenSsh, generateEd25519 } from "../../../src/ssh/openssh-key.ts";

const { utils } = ssh2 as unknown as typeof import("ssh2");

/** The first seed sha256("seed <i>") whose public key's first byte satisfies `want`. */
function seedWhere(want: (firstByte: number) => boolean): Uint8Array {
  for (let i = 0; ; i++) {
    const seed = createHash("sha256").update(`seed ${i}`).digest();
    const jwk = ed25519FromSeed(seed).export({ format: "jwk" });
    if (want(Buffer.from(jwk.x!, "base64url")[0]!)) return seed;
  }
}

/** What `ssh-keygen -y` (OpenSSH itself) derives from the private key file. */
function keygenPublic(privateText: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "svc-key-")), "key");
  writeFileSync(path, privateText, { mode: 0o600 });
  const r = Bun.spawnSync(["ssh-keygen", "-y", "-f", path]);
  if (r.exitCode !== 0) throw new Error(`ssh-keygen -y: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

function ssh2Public(privateText: string): string {
  const parsed = utils.parseKey(privateText);
  if (parsed instanceof Error) throw parsed;
  const key = Array.isArray(parsed) ? parsed[0]! : parsed;
  return `ssh-ed25519 ${key.getPublicSSH().toString("base64")}`;
}

describe("Ed25519 keys in OpenSSH format", () => {
  for (const [name, want] of [
    ["a public key starting with a zero byte", (b: number) => b === 0],
    ["a public key starting with 0x80 or above", (b: number) => b >= 0x80],
    ["any other public key", (b: number) => b > 0 && b < 0x80],
  ] as const) {
    test(`${name}: ssh2 and ssh-keygen read it back to the same public key`, () => {
      const pair = ed25519ToOpenSsh(ed25519FromSeed(seedWhere(want)));
      expect(Buffer.from(pair.public.split(" ")[1]!, "base64").readUInt32BE(15)).toBe(32);
      expect(ssh2Public(pair.private)).toBe(pair.public);
      expect(keygenPublic(pair.private)).toBe(pair.public);
    });
  }

  test("2,000 generated keys all parse (about 8 of them start with a zero byte)", () => {
    for (let i = 0; i < 2000; i++) {
      const pair = generateEd25519();
      expect(ssh2Public(pair.private)).toBe(pair.public);
    }
  });

  test("the file is OpenSSH's unencrypted openssh-key-v1, padded to 8 bytes", () => {
    const { private: text } = generateEd25519();
    expect(text.startsWith("-----BEGIN OPENSSH PRIVATE KEY-----\n")).toBe(true);
    expect(text.endsWith("\n-----END OPENSSH PRIVATE KEY-----\n")).toBe(true);
    const body = Buffer.from(text.split("\n").slice(1, -2).join(""), "base64");
    expect(body.subarray(0, 15).toString("latin1")).toBe("openssh-key-v1\0");
    expect(
      text
        .split("\n")
        .slice(1, -2)
        .every((l) => l.length <= 70),
    ).toBe(true);
  });
});
