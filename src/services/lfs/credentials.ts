// The short-lived credentials of Git LFS (issue 31): what the batch API puts in an action's header
// (the fs transfers and the verify call, scoped to one object and one operation) and what SSH
// `git-lfs-authenticate` answers (scoped to one repository and one operation, naming the key).
//
// Why an HMAC and no row: a batch of 100 objects mints 100 credentials, and a row each would
// outlive its minutes by far. The credential is `svclfs_<payload>.<mac>`, the payload base64url
// JSON, the MAC HMAC-SHA256 under a key derived (HKDF) from the installation's secret that every
// node shares: SVC_SECRETS_KEY, else the S3 secret key (every node that presigns has it), else
// the SQLite data dir's secrets.key. Compared in constant time; never logged.
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { Unavailable } from "../../errors.ts";
import { secretsKey } from "../ci/secrets-key.ts";
import type { Ctx } from "../context.ts";

/** The prefix of every LFS credential (told apart from API tokens before any lookup). */
export const LFS_CREDENTIAL_PREFIX = "svclfs_";
/** The longest credential we read (a payload names a few ids, an oid and a fingerprint). */
const MAX_CREDENTIAL = 1024;

/** What an action credential lets its bearer do: one operation on one object of one network. */
export interface ActionGrant {
  kind: "action";
  op: "download" | "upload";
  networkId: string;
  /** The repository the batch was asked of (its org is counted for an upload). */
  repoId: string;
  orgId: string;
  oid: string;
  size: number;
  /** Expiry, epoch seconds. */
  exp: number;
}

/** What `git-lfs-authenticate` answers: the batch API of one repository for one operation, as the key's owner. */
export interface SshGrant {
  kind: "ssh";
  op: "download" | "upload";
  repoId: string;
  /** The SSH key's fingerprint: its authority is looked up again at each use (a revoked key stops at once). */
  fingerprint: string;
  exp: number;
}

export type LfsGrant = ActionGrant | SshGrant;

/** The key credentials are signed with; 503 when the installation has none. */
function macKey(ctx: Ctx): Buffer {
  const storage = ctx.config.storage;
  const secret: Uint8Array | string | null = ctx.config.secretsKey ?? (storage.kind === "s3" ? storage.secretKey : secretsKey(ctx, { create: true }));
  if (secret === null) throw Unavailable("Git LFS with PostgreSQL and local storage needs SVC_SECRETS_KEY (the key its transfer credentials are signed with)");
  return Buffer.from(hkdfSync("sha256", secret, "svc", "git-lfs credentials v1", 32));
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac("sha256", key).update(payload).digest();
}

/** A credential for `grant`. */
export function mintCredential(ctx: Ctx, grant: LfsGrant): string {
  return credentialMinter(ctx)(grant);
}

/** Mints many credentials with one derivation of the key (a batch of 100 objects mints 100). */
export function credentialMinter(ctx: Ctx): (grant: LfsGrant) => string {
  const key = macKey(ctx);
  return (grant) => {
    const payload = Buffer.from(JSON.stringify(grant)).toString("base64url");
    return `${LFS_CREDENTIAL_PREFIX}${payload}.${mac(key, payload).toString("base64url")}`;
  };
}

/** The grant of a credential if its MAC is ours and it has not expired at `nowSeconds`; null otherwise. */
export function readCredential(ctx: Ctx, credential: string, nowSeconds: number): LfsGrant | null {
  if (!credential.startsWith(LFS_CREDENTIAL_PREFIX) || credential.length > MAX_CREDENTIAL) return null;
  const body = credential.slice(LFS_CREDENTIAL_PREFIX.length);
  const dot = body.indexOf(".");
  if (dot <= 0) return null;
  const payload = body.slice(0, dot);
  const given = Buffer.from(body.slice(dot + 1), "base64url");
  const expected = mac(macKey(ctx), payload);
  // Why constant time: the MAC is the whole of the credential's authority.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let grant: LfsGrant;
  try {
    grant = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as LfsGrant;
  } catch {
    return null;
  }
  if (typeof grant !== "object" || grant === null || typeof grant.exp !== "number" || grant.exp <= nowSeconds) return null;
  return grant;
}

/** The credential in an Authorization header value (`RemoteAuth svclfs_…` or `Bearer svclfs_…`), or null when it carries none. */
export function credentialOf(authorization: string | null): string | null {
  if (!authorization) return null;
  const m = /^(?:RemoteAuth|Bearer)\s+(svclfs_\S+)$/i.exec(authorization.trim());
  return m ? m[1]! : null;
}
