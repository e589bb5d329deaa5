// Host keys (ed25519 and RSA), generated once and kept in the data dir with mode 0600.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ssh2 from "ssh2";
import { fingerprintOf } from "../services/people/ssh-keys.ts";
import { HOST_KEY_NAMES } from "./host-key-files.ts";
import { generateEd25519 } from "./openssh-key.ts";

const { utils } = ssh2 as unknown as typeof import("ssh2");

/** One host key: its private key (OpenSSH format) and public fingerprint. */
export interface HostKey {
  type: "ED25519" | "RSA";
  private: string;
  fingerprint: string;
}

const KINDS = [
  { type: "ED25519" as const, file: HOST_KEY_NAMES.ed25519, generate: generateEd25519 },
  { type: "RSA" as const, file: HOST_KEY_NAMES.rsa, generate: () => utils.generateKeyPairSync("rsa", { bits: 3072 }) },
] as const;

/** Loads the host keys, generating any that are missing (atomically, so two processes agree). */
export function loadHostKeys(dataDir: string): HostKey[] {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return KINDS.map((k) => {
    const path = join(dataDir, k.file);
    // Why: a key file left readable by an older version or a restore is tightened on start.
    if (existsSync(path)) chmodSync(path, 0o600);
    else {
      const pair = k.generate();
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, pair.private, { mode: 0o600 });
      writeFileSync(`${tmp}.pub`, `${pair.public}\n`, { mode: 0o644 });
      renameSync(`${tmp}.pub`, `${path}.pub`);
      renameSync(tmp, path);
    }
    const priv = readFileSync(path, "utf8");
    const parsed = utils.parseKey(priv);
    if (parsed instanceof Error) throw new Error(`unreadable host key ${path}: ${parsed.message}`);
    const key = Array.isArray(parsed) ? parsed[0]! : parsed;
    return { type: k.type, private: priv, fingerprint: fingerprintOf(key.getPublicSSH()) };
  });
}
