// SSH keys (SPEC §4.6, §5.6; DECISIONS §2): personal keys name a person, deploy keys name a
// token. The fingerprint is resolved against the database on every connection.
import { Conflict, Invalid, NotFound, Unauthorized } from "../../errors.ts";
import { newId } from "../../util/ids.ts";
import { allows, decide, enforce, orgFacts } from "../access/access.ts";
import { now, type Ctx } from "../context.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { pageOf, parsePage } from "../paging.ts";
import type { SshKey, SshKeyCreate, SshKeyList } from "./schemas.ts";
import * as store from "./store.ts";
import * as credentials from "./store-credentials.ts";
import { isCreatedKey, type SshKeyRow } from "./store-credentials.ts";
import { auditActor, recordAudit } from "../audit/record.ts";

const ECDSA_CURVES: Readonly<Record<string, { curve: string; pointBytes: number }>> = {
  "ecdsa-sha2-nistp256": { curve: "nistp256", pointBytes: 65 },
  "ecdsa-sha2-nistp384": { curve: "nistp384", pointBytes: 97 },
  "ecdsa-sha2-nistp521": { curve: "nistp521", pointBytes: 133 },
};
const MIN_RSA_BITS = 2048;

/** A parsed OpenSSH public key line. */
export interface PublicKey {
  type: string;
  blob: Buffer;
  /** `type base64` without the comment: the canonical stored form. */
  canonical: string;
}

/** Reads SSH wire strings (uint32 length + bytes) from a key blob. */
function wireStrings(blob: Buffer, count: number): Buffer[] | null {
  const out: Buffer[] = [];
  let pos = 0;
  for (let i = 0; i < count; i++) {
    if (pos + 4 > blob.length) return null;
    const len = blob.readUInt32BE(pos);
    pos += 4;
    if (pos + len > blob.length) return null;
    out.push(blob.subarray(pos, pos + len));
    pos += len;
  }
  return pos === blob.length ? out : null;
}

/** Bit length of an SSH mpint (big-endian, possibly with a leading zero byte). */
function mpintBits(b: Buffer): number {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  if (i === b.length) return 0;
  return (b.length - i - 1) * 8 + (32 - Math.clz32(b[i]!));
}

/** Parses and validates `type base64 [comment]`: ed25519, ECDSA P-256/384/521, RSA ≥ 2048 bits. */
export function parsePublicKey(line: string): PublicKey {
  const parts = line.trim().split(/\s+/);
  if (parts.length < 2) throw Invalid("public_key must be an OpenSSH public key line: <type> <base64> [comment]");
  const [type, b64] = parts as [string, string];
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw Invalid("public_key is not valid base64");
  const blob = Buffer.from(b64, "base64");
  const bad = (why: string) => Invalid(`unsupported or malformed ${type} key: ${why}`);
  if (type === "ssh-ed25519") {
    const s = wireStrings(blob, 2);
    if (!s || s[0]!.toString() !== type || s[1]!.length !== 32) throw bad("expected a 32-byte ed25519 key");
  } else if (type === "ssh-rsa") {
    const s = wireStrings(blob, 3);
    if (!s || s[0]!.toString() !== type || mpintBits(s[1]!) < 2) throw bad("malformed RSA key");
    const bits = mpintBits(s[2]!);
    if (bits < MIN_RSA_BITS) throw bad(`RSA keys need at least ${MIN_RSA_BITS} bits, this one has ${bits}`);
  } else if (ECDSA_CURVES[type]) {
    const s = wireStrings(blob, 3);
    const want = ECDSA_CURVES[type]!;
    if (!s || s[0]!.toString() !== type || s[1]!.toString() !== want.curve || s[2]![0] !== 0x04 || s[2]!.length !== want.pointBytes)
      throw bad("malformed ECDSA key");
  } else {
    throw Invalid(`unsupported key type ${JSON.stringify(type)}: use ed25519, ECDSA (P-256, P-384, P-521) or RSA of at least ${MIN_RSA_BITS} bits`);
  }
  return { type, blob, canonical: `${type} ${blob.toString("base64")}` };
}

/** The OpenSSH SHA-256 fingerprint (`ssh-keygen -lf`): `SHA256:` + unpadded base64. */
export function fingerprintOf(blob: Uint8Array): string {
  const digest = new Bun.CryptoHasher("sha256").update(blob).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
}

function keyBody(k: SshKeyRow): SshKey {
  return { id: k.id, kind: k.kind, label: k.label, fingerprint: k.fingerprint, token_id: k.tokenId, created_at: k.createdAt };
}

/** POST /v1/orgs/{org}/ssh-keys: a personal key for the caller, or a deploy key naming a token (admins). */
export async function createSshKey(ctx: Ctx, actor: Principal, orgName: string, input: SshKeyCreate): Promise<SshKey> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  if (actor.kind === "anonymous") throw Unauthorized();
  const deploy = input.token_id !== undefined && input.token_id !== null;
  enforce(decide(facts, { kind: "key:create", deploy }));
  let userId: string | null = null;
  let tokenId: string | null = null;
  if (input.token_id !== undefined && input.token_id !== null) {
    const token = await credentials.managedToken(ctx.db.read, org.id, input.token_id);
    if (!token) throw NotFound("token not found");
    tokenId = token.id;
  } else {
    userId = personOf(actor)!.id;
  }
  const label = input.label.trim();
  if (!label || input.label.length > 100) throw Invalid("label must be a string of 1-100 characters");
  const key = parsePublicKey(input.public_key);
  const fingerprint = fingerprintOf(key.blob);
  return ctx.db.transaction(async (tx) => {
    if (await credentials.keyByFingerprint(tx, fingerprint)) throw Conflict("this key is already registered");
    const row: SshKeyRow = {
      id: newId(),
      orgId: org.id,
      userId,
      tokenId,
      kind: deploy ? "deploy" : "personal",
      label,
      publicKey: key.canonical,
      fingerprint,
      createdAt: now(),
    };
    await credentials.insertKey(tx, row);
    await recordAudit(tx, {
      orgId: org.id,
      action: "ssh_key.created",
      actor: auditActor(actor),
      target: label,
      data: { key_id: row.id, kind: row.kind, fingerprint },
    });
    return keyBody(row);
  });
}

/**
 * GET /v1/orgs/{org}/ssh-keys: all keys for an admin, one's own personal keys for a member; by
 * creation, a page at a time. `own` narrows an admin's list to their own personal keys too.
 */
export async function listSshKeys(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  q: { limit?: unknown; cursor?: unknown },
  opts: { own?: boolean } = {},
): Promise<SshKeyList> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, { kind: "credential:list" }));
  const page = parsePage(q, isCreatedKey);
  const person = personOf(actor);
  if (opts.own && !person) return { keys: [], next_cursor: null };
  const owner = allows(facts, "org:admin") && !opts.own ? null : person!.id;
  const rows = await credentials.listKeys(ctx.db.read, org.id, owner, { after: page.after, limit: page.limit + 1 });
  const { items, next_cursor } = pageOf(rows, page, (k) => [k.createdAt, k.id]);
  return { keys: items.map(keyBody), next_cursor };
}

/** DELETE /v1/orgs/{org}/ssh-keys/{id}: effective at the next connection; others' keys are 404. */
export async function deleteSshKey(ctx: Ctx, actor: Principal, orgName: string, keyId: string): Promise<void> {
  const { org, facts } = await orgFacts(ctx, actor, orgName);
  enforce(decide(facts, { kind: "credential:list" }));
  const row = await credentials.keyInOrg(ctx.db.read, org.id, keyId);
  if (!row) throw NotFound("key not found");
  enforce(decide(facts, { kind: "credential:revoke", ownerUserId: row.userId, what: "key" }));
  await ctx.db.transaction(async (tx) => {
    await credentials.deleteKey(tx, row.id);
    await recordAudit(tx, {
      orgId: org.id,
      action: "ssh_key.revoked",
      actor: auditActor(actor),
      target: row.label,
      data: { key_id: row.id, fingerprint: row.fingerprint },
    });
  });
}

/**
 * The principal behind an offered key, resolved now: a personal key acts as its person (all
 * scopes, bounded by their roles); a deploy key as its token. Null when unknown or revoked.
 */
export async function principalForKey(ctx: Ctx, fingerprint: string): Promise<{ principal: Principal; name: string } | null> {
  const key = await credentials.keyByFingerprint(ctx.db.read, fingerprint);
  if (!key) return null;
  if (key.kind === "personal") {
    const user = key.userId ? await store.userById(ctx.db.read, key.userId) : null;
    if (!user || user.disabledAt !== null) return null;
    return { principal: { kind: "session", user, sessionId: `ssh-key:${key.id}` }, name: user.handle };
  }
  const token = key.tokenId ? await store.tokenById(ctx.db.read, key.tokenId) : null;
  if (!token) return null;
  let user = null;
  if (token.userId) {
    user = await store.userById(ctx.db.read, token.userId);
    if (!user || user.disabledAt !== null) return null;
  }
  return { principal: { kind: "token", token, user }, name: token.label };
}
