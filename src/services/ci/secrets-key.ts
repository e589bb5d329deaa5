// Where the key that seals CI secrets comes from (plan-29 Part A "Key"): SVC_SECRETS_KEY wins;
// else a SQLite installation keeps `secrets.key` in its data dir, created on first need (32
// random bytes, base64, mode 0600; when two creators race, the file written first wins). A
// PostgreSQL installation without SVC_SECRETS_KEY has no key. Why no file there: a per-node file
// cannot be shared by the nodes, and a key stored in the database beside the ciphertext protects
// nothing. The key never appears in a log line, error or answer.
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Unavailable } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { newSecretsKey, parseSecretsKey } from "./seal.ts";

/** The key file's name in the data dir (a backup carries it: cli/backup.ts). */
export const SECRETS_KEY_FILE = "secrets.key";

/** What a secret PUT answers on a several-node installation without SVC_SECRETS_KEY. */
export const NO_KEY_MESSAGE = "secrets need SVC_SECRETS_KEY on a several-node installation";

/** The secrets key, or null on PostgreSQL without SVC_SECRETS_KEY. Creates the SQLite key file when `create`. */
export function secretsKey(ctx: Ctx, opts: { create: boolean }): Uint8Array | null {
  if (ctx.config.secretsKey) return ctx.config.secretsKey;
  if (ctx.config.database) return null;
  const path = join(ctx.config.dataDir, SECRETS_KEY_FILE);
  const read = (): Uint8Array | null => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    try {
      return parseSecretsKey(text);
    } catch {
      throw new Error(`${path} does not hold a secrets key (32 bytes as base64 or 64 hex digits)`);
    }
  };
  const found = read();
  if (found || !opts.create) return found;
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    // Another creator won the race: its key is the key.
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return read();
    throw e;
  }
  try {
    writeSync(fd, `${newSecretsKey()}\n`);
  } finally {
    closeSync(fd);
  }
  return read();
}

/** The key for sealing a new value: 503 when this installation has none. */
export function sealingKey(ctx: Ctx): Uint8Array {
  const key = secretsKey(ctx, { create: true });
  if (!key) throw Unavailable(NO_KEY_MESSAGE);
  return key;
}
