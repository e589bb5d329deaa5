// Git LFS (issue 31, DECISIONS §5 "Git LFS"): the batch API, the basic transfers on object
// storage, and SSH `git-lfs-authenticate`. From git-lfs docs/api/batch.md:
//
//   POST $LFS/objects/batch   {"operation":"download"|"upload","transfers":["basic"],
//                              "ref":{"name":…},"objects":[{"oid":…,"size":…}],"hash_algo":"sha256"}
//   → 200 {"transfer":"basic","objects":[{"oid","size","authenticated":true,
//           "actions":{"upload"|"download"|"verify":{"href","header","expires_in"}}}
//         | {"oid","size","error":{"code":404|422|413,"message"}}],"hash_algo":"sha256"}
//
// An upload of an object the network already holds has no actions. On S3 the upload and
// download actions are presigned URLs of the bucket (svc moves none of the bytes); on fs they
// point at svc, which streams. The object counts (a row) only once its size and hash are checked:
// by svc while it streams (fs), or at the `verify` call (S3, where the presigned PUT carries a
// signed x-amz-checksum-sha256 header the bucket checks the body against).
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { AppError, Forbidden, Invalid, NotFound, TooLarge, Unauthorized } from "../../errors.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import { requireRepoFor } from "../access/access.ts";
import type { Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import { principalForKey } from "../people/ssh-keys.ts";
import { type ActionGrant, credentialMinter, type LfsGrant, mintCredential, readCredential, type SshGrant } from "./credentials.ts";
import { isLfsOid, parsePointer } from "./pointer.ts";
import * as store from "./store-lfs.ts";

/** How long an action (a presigned URL, an fs transfer's credential) may be started after the batch call. */
export const ACTION_TTL_SECONDS = 3600;
/** How long `git-lfs-authenticate`'s answer is good for. */
export const SSH_TTL_SECONDS = 600;
/** Most objects one batch request may name (git lfs sends 100 at a time); more is a 413. */
export const MAX_BATCH_OBJECTS = 1000;
/** Largest batch request body (1000 objects of about 100 bytes each, with room). */
export const MAX_BATCH_BODY = 256 * 1024;

/** A repository's LFS network: its root repository's id (a fork shares its parent's). */
export function networkOf(repo: Repo): string {
  return repo.lfsNetworkId ?? repo.id;
}

/** Where an object of a network is stored: one prefix per network. */
export function lfsObjectKey(networkId: string, oid: string): string {
  return `lfs/${networkId}/${oid.slice(0, 2)}/${oid}`;
}

/** One action of a batch answer. */
export interface LfsAction {
  href: string;
  header?: Record<string, string>;
  expires_in: number;
}

/** One object of a batch answer: actions, none (an upload the server already has), or an error. */
export type BatchObject =
  | { oid: string; size: number; authenticated: true; actions?: Partial<Record<"download" | "upload" | "verify", LfsAction>> }
  | { oid: string; size: number; error: { code: number; message: string } };

/** The batch answer. */
export interface BatchAnswer {
  transfer: "basic";
  objects: BatchObject[];
  hash_algo: "sha256";
}

/** Who calls the batch API: an HTTP caller (token, Basic, session), or the bearer of a `git-lfs-authenticate` answer. */
export type LfsCaller = { kind: "principal"; principal: Principal } | { kind: "ssh"; grant: SshGrant };

interface BatchInput {
  operation: "download" | "upload";
  objects: { oid: unknown; size: unknown }[];
}

/** The request body, checked (422 for a malformed one, 413 for too many objects, 409 for another hash). */
function parseBatch(body: unknown): BatchInput {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw Unprocessable422("the request body must be a JSON object");
  const b = body as Record<string, unknown>;
  if (b.operation !== "download" && b.operation !== "upload") throw Unprocessable422('operation must be "download" or "upload"');
  if (b.transfers !== undefined && b.transfers !== null) {
    if (!Array.isArray(b.transfers) || !b.transfers.includes("basic")) throw Unprocessable422("only the basic transfer adapter is supported");
  }
  if (b.hash_algo !== undefined && b.hash_algo !== null && b.hash_algo !== "sha256") {
    throw new AppError("conflict", `unsupported hash algorithm ${JSON.stringify(String(b.hash_algo).slice(0, 40))}: only sha256 is supported`);
  }
  if (!Array.isArray(b.objects)) throw Unprocessable422("objects must be an array");
  if (b.objects.length > MAX_BATCH_OBJECTS) throw TooLarge(`a batch may name at most ${MAX_BATCH_OBJECTS} objects`);
  const objects = b.objects.map((o: unknown) => (typeof o === "object" && o !== null ? (o as { oid: unknown; size: unknown }) : { oid: null, size: null }));
  return { operation: b.operation, objects };
}

function Unprocessable422(message: string): AppError {
  return new AppError("unprocessable", message);
}

/**
 * The caller's principal for an LFS request: an HTTP caller as it is; the bearer of an SSH grant
 * as the key's owner now (a revoked key's grant is refused), for the grant's repository and operation only.
 */
async function principalOf(ctx: Ctx, caller: LfsCaller): Promise<Principal> {
  if (caller.kind === "principal") return caller.principal;
  const found = await principalForKey(ctx, caller.grant.fingerprint);
  if (!found) throw Unauthorized("this key is no longer authorized");
  return found.principal;
}

/** Resolves the repository for `operation` (upload needs write; a write-blocked repository refuses with its `quota:` reason). */
async function admit(ctx: Ctx, caller: LfsCaller, orgName: string, repoName: string, operation: "download" | "upload"): Promise<{ org: Org; repo: Repo }> {
  const principal = await principalOf(ctx, caller);
  const { org, repo } = await requireRepoFor(ctx, principal, orgName, repoName, operation === "upload" ? "repo:write" : "repo:read");
  if (caller.kind === "ssh") {
    // Why: the SSH answer names one repository and one operation; an upload grant covers reading too (a push reads first).
    if (caller.grant.repoId !== repo.id) throw Unauthorized("this LFS credential is for another repository");
    if (operation === "upload" && caller.grant.op !== "upload") throw Forbidden("this LFS credential is for downloads only");
  }
  return { org, repo };
}

/** The LFS base URL of a repository (its batch API is under it). */
export function lfsHref(ctx: Ctx, org: Org, repo: Repo): string {
  return `${ctx.baseUrl}/${encodeURIComponent(org.name)}/${encodeURIComponent(repo.name)}.git/info/lfs`;
}

/** The checksum header value S3 checks a body against: the SHA-256 (the oid) as base64. */
function checksumOf(oid: string): string {
  return Buffer.from(oid, "hex").toString("base64");
}

/** POST …/info/lfs/objects/batch. */
export async function batchObjects(ctx: Ctx, caller: LfsCaller, input: { org: string; repo: string; body: unknown }): Promise<BatchAnswer> {
  const req = parseBatch(input.body);
  const { org, repo } = await admit(ctx, caller, input.org, input.repo, req.operation);
  const networkId = networkOf(repo);
  const valid = req.objects.filter((o) => isLfsOid(o.oid)).map((o) => o.oid as string);
  const held = await store.objectsIn(ctx.db.read, networkId, [...new Set(valid)]);
  if (req.operation === "upload" && held.size > 0) {
    // Objects offered as already held are touched (one statement) so that GC's grace counts from
    // now: the client will push pointers to them without uploading. A row GC removed between the
    // read and the touch is not held any more: the client is asked to upload it.
    const at = now();
    const alive = await ctx.db.transaction((tx) => store.touchObjects(tx, networkId, [...held.keys()], at));
    for (const oid of [...held.keys()]) if (!alive.has(oid)) held.delete(oid);
  }
  const exp = Math.floor(now() / 1000) + ACTION_TTL_SECONDS;
  const base = lfsHref(ctx, org, repo);
  const objects: BatchObject[] = [];
  // The credentials of fs actions and verify calls, minted with one derivation of the key.
  let mint: ((grant: LfsGrant) => string) | undefined;
  for (const o of req.objects) {
    const size = o.size;
    if (!isLfsOid(o.oid)) {
      objects.push({
        oid: String(o.oid ?? "").slice(0, 128),
        size: typeof size === "number" ? size : 0,
        error: { code: 422, message: "oid must be a SHA-256: 64 lower-case hex digits" },
      });
      continue;
    }
    const oid = o.oid;
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
      objects.push({ oid, size: 0, error: { code: 422, message: "size must be a whole number of bytes, at least 0" } });
      continue;
    }
    const row = held.get(oid);
    const key = lfsObjectKey(networkId, oid);
    if (req.operation === "download") {
      if (!row) {
        objects.push({ oid, size, error: { code: 404, message: "Object does not exist" } });
        continue;
      }
      mint ??= credentialMinter(ctx);
      objects.push({
        oid,
        size: row.size,
        authenticated: true,
        actions: { download: await downloadAction(ctx, base, key, { org, repo, networkId, oid, size: row.size, exp, mint }) },
      });
      continue;
    }
    if (row) {
      // Already held (verified): the client skips it.
      objects.push({ oid, size: row.size, authenticated: true });
      continue;
    }
    if (size > ctx.config.lfsMaxObject) {
      objects.push({
        oid,
        size,
        error: { code: 413, message: `object is ${size} bytes; the largest this server takes is ${ctx.config.lfsMaxObject} bytes (SVC_LFS_MAX_OBJECT)` },
      });
      continue;
    }
    const grant: ActionGrant = { kind: "action", op: "upload", networkId, repoId: repo.id, orgId: org.id, oid, size, exp };
    const credential = { Authorization: `RemoteAuth ${(mint ??= credentialMinter(ctx))(grant)}` };
    if (ctx.store.presign) {
      // Why only these headers: the URL carries the authority; the bucket must see no Authorization
      // (it would try to read it as its own and refuse: go-gitea/gitea#21525). Content-Length is
      // signed so that the bucket refuses a body of any other size: the URL cannot store more than
      // the size checked against SVC_LFS_MAX_OBJECT above (git lfs sends it as the object's size).
      const header = { "Content-Length": String(size), "x-amz-checksum-sha256": checksumOf(oid) };
      const href = await ctx.store.presign("PUT", key, ACTION_TTL_SECONDS, { headers: header });
      objects.push({
        oid,
        size,
        authenticated: true,
        actions: {
          upload: { href, header, expires_in: ACTION_TTL_SECONDS },
          verify: { href: `${base}/verify`, header: credential, expires_in: ACTION_TTL_SECONDS },
        },
      });
    } else {
      objects.push({
        oid,
        size,
        authenticated: true,
        actions: { upload: { href: `${base}/objects/${oid}`, header: credential, expires_in: ACTION_TTL_SECONDS } },
      });
    }
  }
  return { transfer: "basic", objects, hash_algo: "sha256" };
}

async function downloadAction(
  ctx: Ctx,
  base: string,
  key: string,
  o: { org: Org; repo: Repo; networkId: string; oid: string; size: number; exp: number; mint: (grant: LfsGrant) => string },
): Promise<LfsAction> {
  if (ctx.store.presign) return { href: await ctx.store.presign("GET", key, ACTION_TTL_SECONDS), expires_in: ACTION_TTL_SECONDS };
  const grant: ActionGrant = {
    kind: "action",
    op: "download",
    networkId: o.networkId,
    repoId: o.repo.id,
    orgId: o.org.id,
    oid: o.oid,
    size: o.size,
    exp: o.exp,
  };
  return { href: `${base}/objects/${o.oid}`, header: { Authorization: `RemoteAuth ${o.mint(grant)}` }, expires_in: ACTION_TTL_SECONDS };
}

/** The action grant of a transfer or verify request for `oid`; 401 when the credential is missing, forged, expired or for something else. */
export function transferGrant(ctx: Ctx, credential: string | null, op: "download" | "upload", oid: string): ActionGrant {
  const grant = credential ? readCredential(ctx, credential, Math.floor(now() / 1000)) : null;
  // Why one answer for every mismatch: a credential is good for exactly its object and operation.
  if (!grant || grant.kind !== "action" || grant.op !== op || grant.oid !== oid) throw Unauthorized("missing, expired or unusable LFS transfer credential");
  return grant;
}

/** A stored object to stream (fs): its file and size; 404 when absent. */
export async function objectFile(ctx: Ctx, grant: ActionGrant): Promise<{ path: string; size: number }> {
  if (!ctx.store.localPath) throw NotFound("object not found");
  const path = ctx.store.localPath(lfsObjectKey(grant.networkId, grant.oid));
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) throw NotFound("object not found");
  return { path, size: info.size };
}

/**
 * PUT of an object's bytes (fs): streamed to a temp file with the announced size as a hard cap
 * while hashing, then stored and recorded. Memory stays at one chunk whatever the size.
 */
export async function receiveObject(ctx: Ctx, grant: ActionGrant, body: AsyncIterable<Uint8Array>): Promise<void> {
  const temp = join(ctx.tmpDir, `lfs-${randomUUID()}`);
  const hasher = new Bun.CryptoHasher("sha256");
  let received = 0;
  const out = createWriteStream(temp, { flags: "wx" });
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => {});
  try {
    for await (const chunk of body) {
      received += chunk.byteLength;
      if (received > grant.size) throw Invalid(`the body is longer than the object's ${grant.size} bytes`);
      hasher.update(chunk);
      if (!out.write(chunk)) await Promise.race([new Promise((r) => out.once("drain", r)), failed]);
    }
    await Promise.race([new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r()))), failed]);
    if (received !== grant.size) throw Invalid(`the body has ${received} of the object's ${grant.size} bytes`);
    if (hasher.digest("hex") !== grant.oid) throw Unprocessable422("the body's SHA-256 is not the object's oid");
    await ctx.store.putFile(lfsObjectKey(grant.networkId, grant.oid), temp);
    await record(ctx, grant);
  } finally {
    out.destroy();
    await rm(temp, { force: true });
  }
}

/** Records a checked object: from now on it counts (downloads, usage, GC). */
async function record(ctx: Ctx, grant: ActionGrant): Promise<void> {
  await ctx.db.transaction((tx) =>
    store.insertObject(tx, { networkId: grant.networkId, oid: grant.oid, size: grant.size, repoId: grant.repoId, orgId: grant.orgId, createdAt: now() }),
  );
}

/**
 * POST …/verify (S3): the object is in the bucket with the announced size (and, where the bucket
 * checks the signed x-amz-checksum-sha256 of the PUT, that hash), then recorded. No byte moves
 * through svc: one HEAD.
 */
export async function verifyObject(ctx: Ctx, credential: string | null, body: unknown): Promise<void> {
  const b = (typeof body === "object" && body !== null ? body : {}) as { oid?: unknown; size?: unknown };
  if (!isLfsOid(b.oid) || typeof b.size !== "number") throw Unprocessable422("verify needs the object's oid and size");
  const grant = transferGrant(ctx, credential, "upload", b.oid);
  if (b.size !== grant.size) throw Unprocessable422("the size is not the one the upload was granted for");
  const stored = await ctx.store.stat(lfsObjectKey(grant.networkId, grant.oid));
  if (!stored) throw NotFound("the object was not uploaded");
  if (stored.size !== grant.size) {
    // A wrong body is removed so that a retry starts clean.
    await ctx.store.delete(lfsObjectKey(grant.networkId, grant.oid));
    throw Unprocessable422(`the stored object has ${stored.size} bytes, not ${grant.size}`);
  }
  await record(ctx, grant);
}

/** SSH `git-lfs-authenticate {repo} {operation}`: the LFS URL and a header good for SSH_TTL_SECONDS, with the key's authority. */
export async function authenticateLfs(
  ctx: Ctx,
  who: { principal: Principal; fingerprint: string },
  input: { org: string; repo: string; operation: "download" | "upload" },
): Promise<{ href: string; header: Record<string, string>; expires_in: number }> {
  const { org, repo } = await requireRepoFor(ctx, who.principal, input.org, input.repo, input.operation === "upload" ? "repo:write" : "repo:read");
  const grant: SshGrant = { kind: "ssh", op: input.operation, repoId: repo.id, fingerprint: who.fingerprint, exp: Math.floor(now() / 1000) + SSH_TTL_SECONDS };
  return { href: lfsHref(ctx, org, repo), header: { Authorization: `RemoteAuth ${mintCredential(ctx, grant)}` }, expires_in: SSH_TTL_SECONDS };
}

/**
 * The SSH commands of Git LFS (git-lfs docs/api/authentication.md, docs/proposals/ssh_adapter.md):
 * `git-lfs-authenticate <path> <upload|download>` and `git-lfs-transfer <path> <operation>`;
 * the path as git would name the repository (`org/repo.git` or `/org/repo.git`, maybe quoted).
 */
export function parseLfsCommand(
  command: string,
): { kind: "authenticate" | "transfer"; org: string; repo: string; operation: "download" | "upload" } | { kind: "bad"; message: string } | null {
  if (command.length > 4096) return null;
  const m = /^(git-lfs-authenticate|git-lfs-transfer)\s+(.*)$/.exec(command.trim());
  if (!m) return null;
  const kind = m[1] === "git-lfs-authenticate" ? "authenticate" : "transfer";
  const args = m[2]!.trim().split(/\s+/);
  const usage = { kind: "bad" as const, message: `usage: ${m[1]} <org>/<repo>.git <upload|download>` };
  if (args.length < 2) return usage;
  const operation = args[1];
  if (operation !== "upload" && operation !== "download") return usage;
  const path = args[0]!
    .replace(/^'(.*)'$/, "$1")
    .replace(/^"(.*)"$/, "$1")
    .replace(/^\//, "");
  const parts = /^([^/]+)\/([^/]+?)(?:\.git)?\/?$/.exec(path);
  if (!parts) return usage;
  return { kind, org: parts[1]!, repo: parts[2]!, operation };
}

/** The size of an upload as a caller must declare it (Content-Length), checked against the grant before reading. */
export function checkDeclaredLength(grant: ActionGrant, declared: number | null): void {
  if (declared !== null && declared !== grant.size) throw Invalid(`Content-Length ${declared} is not the object's ${grant.size} bytes`);
}

/** An LFS pointer's object as the repository's network holds it: its oid, real size, and whether the bytes are stored (verified). */
export interface PointedObject {
  oid: string;
  size: number;
  stored: boolean;
}

/**
 * The LFS object a blob points at, when the blob is a pointer file (issue 31, the web's file
 * pages); null for any other blob. The caller has read access to `repo` (its page resolved it).
 */
export async function pointedObject(ctx: Ctx, repo: Repo, blob: Uint8Array): Promise<PointedObject | null> {
  const pointer = parsePointer(blob);
  if (!pointer) return null;
  const row = (await store.objectsIn(ctx.db.read, networkOf(repo), [pointer.oid])).get(pointer.oid);
  return { oid: pointer.oid, size: row?.size ?? pointer.size, stored: row !== undefined };
}

/** A stored object's bytes, whole (previews of small objects only: the caller bounds the size). */
export async function readPointedObject(ctx: Ctx, repo: Repo, oid: string): Promise<Uint8Array | null> {
  return ctx.store.get(lfsObjectKey(networkOf(repo), oid));
}

/**
 * How a browser gets a stored object's bytes: on S3 a presigned GET of the bucket (with the
 * content type and disposition the page wants), on fs the file to stream.
 */
export async function pointedObjectSource(
  ctx: Ctx,
  repo: Repo,
  oid: string,
  response: { contentType: string; disposition?: string },
): Promise<{ kind: "redirect"; url: string } | { kind: "file"; path: string; size: number }> {
  const key = lfsObjectKey(networkOf(repo), oid);
  if (ctx.store.presign) {
    const query: Record<string, string> = { "response-content-type": response.contentType };
    if (response.disposition) query["response-content-disposition"] = response.disposition;
    return { kind: "redirect", url: await ctx.store.presign("GET", key, 300, { query }) };
  }
  if (!ctx.store.localPath) throw NotFound("object not found");
  const path = ctx.store.localPath(key);
  const info = await stat(path).catch(() => null);
  if (!info?.isFile()) throw NotFound("object not found");
  return { kind: "file", path, size: info.size };
}
