// The SSH host keys as the database keeps them (issue 27, plan-27 §2 #14). Clients pin a host key,
// so every node behind one balancer must present the same one: on PostgreSQL the keys are rows of
// `node_secrets`, created by the first node that needs them and read by every other; SQLite keeps
// the 0600 files in the data dir (src/ssh/host-keys.ts), as before. `svc migrate-db` copies a
// SQLite installation's files in with `saveHostKeys`, so clients see no key change after moving.
//
// Key generation needs ssh2, which services do not import: the SSH layer passes a generator in.
// The private keys are never logged, never put into an error message, and no route answers them.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "../../db/database.ts";
import { x } from "../../db/dialect.ts";
import { now } from "../context.ts";
import * as store from "./store.ts";

/** The private key files, one per host key kind (ed25519, RSA); each has a `.pub` beside it. Also the names of their `node_secrets` rows. */
export const HOST_KEY_NAMES = Object.freeze({ ed25519: "ssh_host_ed25519_key", rsa: "ssh_host_rsa_key" } as const);

/** Every host key file a backup of a data dir carries. */
export const HOST_KEY_FILES: readonly string[] = Object.freeze(Object.values(HOST_KEY_NAMES).flatMap((f) => [f, `${f}.pub`]));

/** One host key by its name (a value of HOST_KEY_NAMES) and its private key text (OpenSSH or PEM). */
export interface HostKeySecret {
  name: string;
  private: string;
}

const NAMES: readonly string[] = Object.values(HOST_KEY_NAMES);
/** The transaction-scoped lock the creating node holds (dialect lockKey: an advisory lock on PostgreSQL). */
const CREATE_LOCK = "svc.host-keys";
/** Far above any real key (an RSA-4096 OpenSSH key is ~3.4 KB): a bound on what is stored. */
const MAX_KEY_BYTES = 16 * 1024;

function check(keys: readonly HostKeySecret[]): void {
  for (const k of keys) {
    // Why no value in the messages: they may end up in logs.
    if (!NAMES.includes(k.name)) throw new Error(`not a host key name: ${k.name}`);
    if (!/^-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(k.private.trimStart()) || k.private.length > MAX_KEY_BYTES) {
      throw new Error(`host key ${k.name} is not a private key in OpenSSH or PEM form`);
    }
  }
}

/**
 * The host key files present in a data dir (an existing SQLite installation's keys): what
 * `svc migrate-db` hands to saveHostKeys. Missing files are left out.
 */
export function readHostKeyFiles(dataDir: string): HostKeySecret[] {
  return NAMES.filter((name) => existsSync(join(dataDir, name))).map((name) => ({ name, private: readFileSync(join(dataDir, name), "utf8") }));
}

/**
 * Stores `keys` as the installation's host keys in `node_secrets`, replacing keys of the same
 * names (one transaction). Every node started afterwards presents them.
 */
export async function saveHostKeys(db: Database, keys: readonly HostKeySecret[]): Promise<void> {
  check(keys);
  const at = now();
  await db.transaction(async (tx) => {
    await x(tx).lockKey(CREATE_LOCK);
    await store.putNodeSecrets(
      tx,
      keys.map((k) => ({ name: k.name, value: k.private })),
      at,
      { replace: true },
    );
  });
}

/**
 * The installation's host keys from `node_secrets`, every name of HOST_KEY_NAMES. Missing ones are
 * generated (`generate(name)`, outside the transaction: an RSA key takes a while) and inserted
 * under a transaction-scoped lock; a key another node stored first wins, so every node answers
 * the same keys. Nodes started at once may each generate a candidate; one set is kept.
 */
export async function sharedHostKeys(db: Database, generate: (name: string) => string): Promise<HostKeySecret[]> {
  const stored = await store.nodeSecretValues(db.read, NAMES);
  if (NAMES.every((n) => stored.has(n))) return NAMES.map((name) => ({ name, private: stored.get(name)! }));
  const candidates = NAMES.filter((n) => !stored.has(n)).map((name) => ({ name, private: generate(name) }));
  check(candidates);
  const at = now();
  const kept = await db.transaction(async (tx) => {
    await x(tx).lockKey(CREATE_LOCK);
    await store.putNodeSecrets(
      tx,
      candidates.map((k) => ({ name: k.name, value: k.private })),
      at,
      { replace: false },
    );
    return await store.nodeSecretValues(tx, NAMES);
  });
  return NAMES.map((name) => {
    const value = kept.get(name);
    if (value === undefined) throw new Error(`host key ${name} was not stored`);
    return { name, private: value };
  });
}
