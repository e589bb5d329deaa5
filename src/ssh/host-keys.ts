// Host keys (ed25519 and RSA), generated once. SQLite installations keep them in the data dir with
// mode 0600; on PostgreSQL every node presents the same keys, kept in the database
// (services/ops/host-keys.ts, `node_secrets`) and created by the first node that starts.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ssh2 from "ssh2";
import type { Ctx } from "../services/context.ts";
import { sharedHostKeys } from "../services/ops/host-keys.ts";
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

/** The key of `priv` with its fingerprint; `where` names its source in the error (never the key itself). */
function hostKey(type: HostKey["type"], priv: string, where: string): HostKey {
  const parsed = utils.parseKey(priv);
  if (parsed instanceof Error) throw new Error(`unreadable host key ${where}: ${parsed.message}`);
  const key = Array.isArray(parsed) ? parsed[0]! : parsed;
  return { type, private: priv, fingerprint: fingerprintOf(key.getPublicSSH()) };
}

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
    return hostKey(k.type, readFileSync(path, "utf8"), path);
  });
}

/**
 * The host keys this node presents: from the database on PostgreSQL (generated and stored by the
 * first node when none are there yet), else the data dir's files (loadHostKeys).
 */
export async function nodeHostKeys(db: Ctx["db"], dataDir: string): Promise<HostKey[]> {
  if (db.dialect !== "pg") return loadHostKeys(dataDir);
  const stored = await sharedHostKeys(db, (name) => KINDS.find((k) => k.file === name)!.generate().private);
  return KINDS.map((k) => hostKey(k.type, stored.find((s) => s.name === k.file)!.private, `node_secrets ${k.file}`));
}
