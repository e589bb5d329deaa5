// Git LFS file locking (docs/api/locking.md of git-lfs; DECISIONS §5 "Git LFS"): create, list,
// verify (ours/theirs) and unlock the locks of one repository. Git enforces them on push
// (services/git/lfs-locks.ts reads the same rows).
//
//   POST …/locks            { path, ref?: { name } }        → 201 { lock } | 409 { lock, message }
//   GET  …/locks?path=&id=&cursor=&limit=&refspec=           → { locks, next_cursor? }
//   POST …/locks/verify     { cursor?, limit?, ref? }        → { ours, theirs, next_cursor? }
//   POST …/locks/:id/unlock { force?, ref? }                 → { lock }
//
// A lock is `{ id, path, locked_at (RFC 3339), owner: { name } }`. Locks are per repository: the
// spec's `ref` is for authentication only ("until advanced locking scenarios have been
// developed"), so it is stored with the lock but never narrows a listing or the enforcement.
import { AppError, Forbidden, Invalid, NotFound, Unauthorized, Unprocessable } from "../../errors.ts";
import { need, may, openRepoTarget, type RepoTarget } from "../access/target.ts";
import { personOf } from "../access/principal.ts";
import { auditActor, recordAudit } from "../audit/record.ts";
import { now, type Ctx } from "../context.ts";
import { encodeCursor, parsePage } from "../paging.ts";
import { newId } from "../../util/ids.ts";
import { principalForKey } from "../people/ssh-keys.ts";
import type { LfsCaller } from "./lfs.ts";
import * as store from "./store-locks.ts";
import type { LockView } from "./store-locks.ts";

/** A lock as the LFS API shows it. */
export interface LfsLock {
  id: string;
  path: string;
  locked_at: string;
  owner: { name: string };
}

/** Longest locked path, in UTF-8 bytes (PATH_MAX): longer input is refused unparsed. */
export const MAX_PATH_BYTES = 4096;
/** Longest ref name, cursor or lock id read from a request. */
const MAX_NAME = 1024;
/** Most locks one repository holds; a push reads them all (lfs-locks.ts), so they stay bounded. */
export const MAX_LOCKS_PER_REPO = 10_000;
/** Most locks in one answer (a larger `limit` is lowered to it, as the spec lets servers bound it). */
export const MAX_LIMIT = 100;

/** The API shape of a lock. */
export function lockBody(l: LockView): LfsLock {
  return { id: l.id, path: l.path, locked_at: new Date(l.createdAt).toISOString(), owner: { name: l.ownerName } };
}

/**
 * A path as locks store it: relative to the repository root, `/`-separated, with no empty or `.`
 * segments (`/a//./b` is `a/b`, as git names the file). Why refuse `..` and control characters:
 * no tree holds such a name, so the lock could never match a file and would only mislead.
 */
export function normalizeLockPath(raw: unknown): string {
  if (typeof raw !== "string" || raw === "") throw Invalid("path is required: the file's path relative to the repository root");
  if (Buffer.byteLength(raw) > MAX_PATH_BYTES) throw Invalid(`path is longer than ${MAX_PATH_BYTES} bytes`);
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw Invalid("path contains a control character");
  const segments = raw.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) throw Invalid("path must be relative to the repository root, without .. segments");
  if (!segments.length) throw Invalid("path names no file");
  return segments.join("/");
}

/** An optional `{ name }` ref of a request body: the name, or null. */
function refNameOf(ref: unknown): string | null {
  if (ref === undefined || ref === null) return null;
  if (typeof ref !== "object" || Array.isArray(ref)) throw Invalid("ref must be an object { name }");
  const name = (ref as { name?: unknown }).name;
  if (name === undefined || name === null || name === "") return null;
  if (typeof name !== "string" || name.length > MAX_NAME) throw Invalid(`ref.name must be a string of at most ${MAX_NAME} characters`);
  return name;
}

/** A request body as an object (no body reads as `{}`). */
function objectOf(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) throw Invalid("the request body must be a JSON object");
  return body as Record<string, unknown>;
}

/** `limit` from a query string or body: default and ceiling MAX_LIMIT; 400 unless a positive integer. */
function limitOf(raw: unknown): number {
  if (raw === undefined || raw === null || raw === "") return MAX_LIMIT;
  const n = typeof raw === "number" ? raw : typeof raw === "string" && /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < 1) throw Invalid("limit must be a positive integer");
  return Math.min(n, MAX_LIMIT);
}

const isPosition = (k: unknown): k is [number, string] =>
  Array.isArray(k) && k.length === 2 && Number.isInteger(k[0]) && typeof k[1] === "string" && k[1].length <= MAX_NAME;

/** The position after which a page starts (`next_cursor` of the previous page), or null. */
function afterOf(cursor: unknown): [number, string] | null {
  if (cursor !== undefined && cursor !== null && typeof cursor !== "string") throw Invalid("invalid cursor");
  return parsePage({ cursor }, isPosition).after;
}

/** Reads up to `limit` locks after `cursor`, and the cursor of the next page (absent at the end). */
async function pageOf(
  ctx: Ctx,
  repoId: string,
  filter: { path?: string; id?: string },
  cursor: unknown,
  limit: number,
): Promise<{ rows: LockView[]; next_cursor?: string }> {
  const rows = await store.locksPage(ctx.db.read, repoId, filter, afterOf(cursor), limit + 1);
  if (rows.length <= limit) return { rows };
  const page = rows.slice(0, limit);
  const last = page[page.length - 1]!;
  return { rows: page, next_cursor: encodeCursor([last.createdAt, last.id]) };
}

/**
 * Write access as locking needs it. Why a write-blocked repository (private, its organization
 * without a subscription in force) is let through: locks store no bytes, and refusing them would
 * keep a team from releasing its locks.
 */
function requireWriter(t: RepoTarget): void {
  try {
    need(t, "repo:write");
  } catch (error) {
    if (!(error instanceof AppError && error.code === "payment_required")) throw error;
  }
}

/**
 * The repository of a locking request, `{repo}` with or without `.git` (the LFS server URL is the
 * remote's URL plus `.git/info/lfs`): unseen alike when missing or unreadable (401 anonymous, else
 * 404); each operation then asks for what it needs. The bearer of a `git-lfs-authenticate` answer
 * (an SSH remote: git-lfs sends that header to the lock API too) acts as the key's owner now, on
 * the grant's repository only, and changes locks only with an upload grant (`operation`).
 */
export async function openLockRepo(ctx: Ctx, caller: LfsCaller, orgName: string, repoSegment: string, operation: "download" | "upload"): Promise<RepoTarget> {
  const name = repoSegment.endsWith(".git") ? repoSegment.slice(0, -4) : repoSegment;
  if (caller.kind === "principal") return openRepoTarget(ctx, caller.principal, orgName, name, "repo:read");
  const found = await principalForKey(ctx, caller.grant.fingerprint);
  if (!found) throw Unauthorized("this key is no longer authorized");
  const t = await openRepoTarget(ctx, found.principal, orgName, name, "repo:read");
  // Why: the SSH answer names one repository and one operation, like the batch API's admission.
  if (caller.grant.repoId !== t.repo.id) throw Unauthorized("this LFS credential is for another repository");
  if (operation === "upload" && caller.grant.op !== "upload") throw Forbidden("this LFS credential is for downloads only");
  return t;
}

/** What became of a lock request: taken, or the path's existing lock (the spec's 409). */
export type CreateLockOutcome = { kind: "created"; lock: LfsLock } | { kind: "exists"; lock: LfsLock; message: string };

/** POST …/locks: locks `path` for the caller (write access; a person, since a lock has an owner). */
export async function createLock(ctx: Ctx, t: RepoTarget, input: unknown): Promise<CreateLockOutcome> {
  requireWriter(t);
  const body = objectOf(input);
  const path = normalizeLockPath(body.path);
  const refName = refNameOf(body.ref);
  const person = personOf(t.actor);
  // Why: a lock is released by its owner; a service token or deploy key belongs to nobody who could.
  if (!person) throw Forbidden("locks belong to a person: use a personal token, not a service token");
  const { org, repo, actor } = t;
  return await ctx.db.transaction(async (tx): Promise<CreateLockOutcome> => {
    const existing = await store.lockByPath(tx, repo.id, path);
    if (existing) return { kind: "exists", lock: lockBody(existing), message: `${path} is already locked by ${existing.ownerName}` };
    if ((await store.countLocks(tx, repo.id)) >= MAX_LOCKS_PER_REPO) {
      throw Unprocessable(`${repo.name} holds ${MAX_LOCKS_PER_REPO} locks, the most a repository may hold; unlock some first`);
    }
    const row = { id: newId(), repoId: repo.id, path, ownerId: person.id, refName, createdAt: now() };
    if (!(await store.insertLock(tx, row))) {
      // Taken between the read and the insert by another request: its lock is the answer.
      const winner = await store.lockByPath(tx, repo.id, path);
      if (winner) return { kind: "exists", lock: lockBody(winner), message: `${path} is already locked by ${winner.ownerName}` };
      throw new AppError("conflict", `${path} is being locked by another request; try again`);
    }
    await recordAudit(tx, {
      orgId: org.id,
      action: "lfs.lock",
      actor: auditActor(actor),
      target: `${repo.name}:${path}`,
      data: { lock_id: row.id, path, ref: refName },
    });
    return { kind: "created", lock: lockBody({ ...row, ownerName: person.handle }) };
  });
}

/** GET …/locks: the repository's locks, oldest first (read access); `path` and `id` filter exactly. */
export async function listLocks(ctx: Ctx, t: RepoTarget, query: Record<string, unknown>): Promise<{ locks: LfsLock[]; next_cursor?: string }> {
  need(t, "repo:read");
  const filter: { path?: string; id?: string } = {};
  if (query.path !== undefined && query.path !== "") filter.path = normalizeLockPath(query.path);
  if (query.id !== undefined && query.id !== "") {
    if (typeof query.id !== "string" || query.id.length > MAX_NAME) throw Invalid("invalid id");
    filter.id = query.id;
  }
  if (query.refspec !== undefined && (typeof query.refspec !== "string" || query.refspec.length > MAX_NAME)) throw Invalid("invalid refspec");
  const { rows, next_cursor } = await pageOf(ctx, t.repo.id, filter, query.cursor, limitOf(query.limit));
  return { locks: rows.map(lockBody), ...(next_cursor ? { next_cursor } : {}) };
}

/** POST …/locks/verify: the locks split into the caller's (`ours`) and everyone else's (`theirs`); write access. */
export async function verifyLocks(ctx: Ctx, t: RepoTarget, input: unknown): Promise<{ ours: LfsLock[]; theirs: LfsLock[]; next_cursor?: string }> {
  requireWriter(t);
  const body = objectOf(input);
  refNameOf(body.ref);
  const { rows, next_cursor } = await pageOf(ctx, t.repo.id, {}, body.cursor, limitOf(body.limit));
  // A caller who is no person (a service token) holds no lock: every lock is theirs.
  const me = personOf(t.actor)?.id ?? null;
  return {
    ours: rows.filter((l) => l.ownerId === me).map(lockBody),
    theirs: rows.filter((l) => l.ownerId !== me).map(lockBody),
    ...(next_cursor ? { next_cursor } : {}),
  };
}

/**
 * POST …/locks/:id/unlock: releases a lock (write access). Another person's lock needs `force`
 * and the admin role: the spec asks servers to keep users from deleting others' locks.
 */
export async function unlockLock(ctx: Ctx, t: RepoTarget, id: string, input: unknown): Promise<{ lock: LfsLock }> {
  requireWriter(t);
  const body = objectOf(input);
  if (body.force !== undefined && body.force !== null && typeof body.force !== "boolean") throw Invalid("force must be a boolean");
  const force = body.force === true;
  refNameOf(body.ref);
  const { org, repo, actor } = t;
  if (id.length > MAX_NAME) throw NotFound("lock not found");
  const me = personOf(actor)?.id ?? null;
  const lock = await ctx.db.transaction(async (tx) => {
    const found = await store.lockById(tx, repo.id, id);
    if (!found) throw NotFound("lock not found");
    const theirs = found.ownerId !== me;
    if (theirs && !force) {
      throw Forbidden(
        `${found.path} is locked by ${found.ownerName}: only they can unlock it, or an admin of ${repo.name} with force (git lfs unlock --force)`,
      );
    }
    if (theirs && !may(t, "repo:admin")) throw Forbidden(`unlocking ${found.ownerName}'s lock on ${found.path} needs the admin role on ${repo.name}`);
    if (!(await store.deleteLock(tx, repo.id, id))) throw NotFound("lock not found");
    await recordAudit(tx, {
      orgId: org.id,
      action: "lfs.unlock",
      actor: auditActor(actor),
      target: `${repo.name}:${found.path}`,
      data: { lock_id: found.id, path: found.path, owner: found.ownerName, force: theirs },
    });
    return found;
  });
  return { lock: lockBody(lock) };
}
