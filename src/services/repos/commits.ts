// POST /v1/orgs/{org}/repos/{repo}/commits (SPEC §2.3, §4.6, §6.1; DECISIONS §3): a commit made
// from JSON operations, published as a tiny pack through the same commit point as a push.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { rm } from "node:fs/promises";
import { parseCommit, serializeCommit, type Signature } from "../../git/object.ts";
import { FsckError, fsckObjects } from "../../git/fsck.ts";
import { hashObject } from "../../git/oid.ts";
import { writePackIndex } from "../../git/pack-index.ts";
import { buildPack } from "../../git/pack-writer.ts";
import { checkRefFormat } from "../../git/ref-name.ts";
import { editTree, type TreeOp } from "../../git/tree-edit.ts";
import { GitError, ZERO_OID, type Oid, type RawObject } from "../../git/types.ts";
import { Conflict, Forbidden, Invalid, NotFound, Unprocessable } from "../../errors.ts";
import type { Tx } from "../../db/database.ts";
import { newId } from "../../util/ids.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import { openSnapshot, readRef } from "../git/snapshot.ts";
import { recordMetric } from "../metrics/record.ts";
import { personOf } from "../access/principal.ts";
import { refPolicy, withRefusals } from "../git/policy.ts";
import { lockRefusals, withObjects } from "../git/lfs-locks.ts";
import { publish, refusalReason, type RefOutcome } from "../git/publish.ts";
import { MAX_OPERATIONS, type CommitCreated, type CommitOperation, type CommitRequest } from "./schemas.ts";
import * as store from "./store.ts";

/** Rebuilds on a moved tip when expected_parent was omitted, at most this many times. */
const MAX_REBASE_ATTEMPTS = 20;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// Code points that HFS+ ignores in names, so ".g\u200cit" is ".git" on a Mac.
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * The name a component has on the filesystems git protects against (HFS+ and NTFS): ignorable
 * code points dropped, case folded, NTFS stream suffix and trailing dots/spaces removed.
 */
function protectedName(part: string): string {
  return part
    .replace(HFS_IGNORABLE, "")
    .toLowerCase()
    .split(":")[0]!
    .replace(/[. ]+$/, "");
}

/** Whether git (core.protectHFS/protectNTFS, fsck) would treat a component as `.git`. */
function isDotGit(part: string): boolean {
  const name = protectedName(part);
  return name === ".git" || /^git~\d+$/.test(name);
}

/** Splits and validates a repository path: relative, no empty, `.`, `..` or `.git` parts, no NUL. */
export function splitPath(path: unknown, field = "path"): string[] {
  if (typeof path !== "string" || path === "") throw Invalid(`${field} must be a non-empty string`);
  if (path.includes("\0")) throw Invalid(`${field} ${JSON.stringify(path)} contains a NUL byte`);
  if (path.startsWith("/")) throw Invalid(`${field} ${JSON.stringify(path)} must be relative`);
  const parts = path.split("/");
  for (const p of parts) {
    if (p === "") throw Invalid(`${field} ${JSON.stringify(path)} has an empty component`);
    if (p === "." || p === "..") throw Invalid(`${field} ${JSON.stringify(path)} may not contain . or ..`);
    // Why: names git reads as .git (".GIT.", "git~1", ".g\u200cit") would let a file overwrite
    // repository internals on checkout; git's fsck refuses them, so clones would break.
    if (isDotGit(p)) throw Invalid(`${field} ${JSON.stringify(path)} may not contain a .git component`);
    if (p.includes("\\")) throw Invalid(`${field} ${JSON.stringify(path)} may not contain a backslash`);
  }
  for (const p of parts.slice(0, -1)) {
    // git's fsck refuses a directory by either name (gitmodulesBlob, gitattributesBlob).
    for (const name of [".gitmodules", ".gitattributes"])
      if (protectedName(p) === name) throw Invalid(`${field} ${JSON.stringify(path)}: ${name} must be a file`);
  }
  return parts;
}

/** The operations SPEC §2.3 knows, by `op`. */
export const OPERATION_KINDS = ["put", "put_base64", "delete"] as const;

/**
 * 422 for an operation whose `op` is a string outside OPERATION_KINDS (SPEC §7: a value outside an
 * enumeration), checked on the raw body before the schema would answer it 400. Anything else
 * malformed is left to the schema.
 */
export function checkOperationKinds(body: unknown): void {
  const ops = (body as { operations?: unknown } | null)?.operations;
  if (!Array.isArray(ops) || ops.length > MAX_OPERATIONS) return;
  ops.forEach((o, i) => {
    const op = (o as { op?: unknown } | null)?.op;
    if (typeof op === "string" && !OPERATION_KINDS.includes(op as never)) {
      throw Unprocessable(`operations[${i}].op must be one of ${OPERATION_KINDS.join(", ")}, got ${JSON.stringify(op.slice(0, 40))}`);
    }
  });
}

/**
 * The operations as tree edits, in request order: paths checked, each path at most once, base64
 * decoded. The schema already checked the shapes and the count (at most MAX_OPERATIONS).
 */
function parseOperations(raw: CommitOperation[]): TreeOp[] {
  // Kept for in-process callers that bypass the route's schema: the limit is a hostile-input bound.
  if (raw.length === 0 || raw.length > MAX_OPERATIONS) throw Invalid(`operations must hold 1 to ${MAX_OPERATIONS} items`);
  const ops: TreeOp[] = [];
  const seen = new Set<string>();
  const encoder = new TextEncoder();
  raw.forEach((o, i) => {
    const path = splitPath(o.path, `operations[${i}].path`);
    const key = path.join("/");
    if (seen.has(key)) throw Invalid(`operations[${i}].path ${JSON.stringify(key)} appears twice`);
    seen.add(key);
    switch (o.op) {
      case "put":
        ops.push({ kind: "put", path, data: encoder.encode(o.content) });
        break;
      case "put_base64":
        if (!BASE64_RE.test(o.content)) throw Invalid(`operations[${i}].content is not valid base64`);
        ops.push({ kind: "put", path, data: new Uint8Array(Buffer.from(o.content, "base64")) });
        break;
      case "delete":
        ops.push({ kind: "delete", path });
        break;
    }
  });
  // A path may not be a file and a directory in the same request.
  for (const key of seen) {
    const parts = key.split("/");
    for (let n = 1; n < parts.length; n++) {
      const prefix = parts.slice(0, n).join("/");
      if (seen.has(prefix)) throw Invalid(`${JSON.stringify(prefix)} is used both as a file and as a directory`);
    }
  }
  return ops;
}

/**
 * A name as a git ident can hold it: without `<`, `>` and control characters, trimmed; `fallback`
 * when nothing is left. For names this server chose (a person's stored name, a token's label),
 * which may predate the rule that refuses such names (issue 25 row 14); a name the caller sends
 * as `author` is refused instead (parseIdentity).
 */
export function gitIdentName(name: string, fallback: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = name
    .replace(/[<>\u0000-\u001f\u007f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean || fallback;
}

/** The author as git records it: trimmed, not blank, no `<`, `>`, newline or NUL (git's ident rules). */
function parseIdentity(a: CommitRequest["author"]): { name: string; email: string } | null {
  if (a === undefined) return null;
  const bad = (s: string) => !s.trim() || /[<>\n\0]/.test(s);
  if (bad(a.name) || bad(a.email)) throw Invalid("author must be { name, email } without <, > or newlines");
  return { name: a.name.trim(), email: a.email.trim() };
}

/** Creates one commit on a branch from JSON operations. */
export async function createCommit(ctx: Ctx, t: RepoTarget, body: CommitRequest): Promise<CommitCreated> {
  return commitOperations(ctx, t, body);
}

/** What a caller of commitOperations may add to the commit's publish. */
export interface CommitExtras {
  /**
   * Writes that commit together with the branch move, in the publish transaction (exactly once with
   * the commit; rerun if the transaction is retried, so rows only, no I/O).
   */
  also?: (tx: Tx, made: { commit: Oid; parent: Oid | null }) => Promise<void> | void;
}

/**
 * Creates one commit on a branch from JSON operations (the commit API's machinery, for in-process
 * callers such as applying suggestions): same checks, same publish path as a push.
 */
export async function commitOperations(ctx: Ctx, t: RepoTarget, body: CommitRequest, extras: CommitExtras = {}): Promise<CommitCreated> {
  const started = performance.now();
  need(t, "repo:write");
  const { org, repo, actor } = t;

  const branch = body.branch ?? "main";
  if (!checkRefFormat(`refs/heads/${branch}`)) throw Invalid("branch must be a valid branch name");
  // Omitted means "on the current tip"; null means "the branch must not exist".
  const hasExpected = body.expected_parent !== undefined;
  const expected = body.expected_parent ?? null;
  if (!body.message.trim()) throw Invalid("message must be a non-empty string");
  if (body.message.includes("\0")) throw Invalid("message may not contain a NUL byte");
  const ops = parseOperations(body.operations);
  const authorIn = parseIdentity(body.author);
  const hasContext = body.context !== undefined;

  const ref = `refs/heads/${branch}`;
  const person = personOf(actor);
  const host = new URL(ctx.baseUrl).hostname;
  const message = body.message.endsWith("\n") ? body.message : `${body.message}\n`;
  // Without expected_parent the commit goes on whatever the tip is when it lands: if another
  // writer wins the race, rebuild on the new tip (a bounded number of times).
  for (let attempt = 0; ; attempt++) {
    const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
    const tip = snapshot.refs.find((r) => r.name === ref)?.oid ?? null;
    if (hasExpected && expected !== tip) {
      throw Conflict(expected === null ? `branch ${branch} already exists` : `branch ${branch} is not at ${expected}`, { current: tip });
    }
    let baseTree: Oid | null = null;
    if (tip) {
      const obj = await snapshot.objects.read(tip);
      if (!obj || obj.type !== "commit") throw new Error(`branch ${branch} points at a missing commit`);
      baseTree = parseCommit(obj.data).tree;
    }
    let edited: { tree: Oid; objects: RawObject[] };
    try {
      edited = await editTree(snapshot.objects, baseTree, ops);
    } catch (e) {
      if (e instanceof GitError && (e.code === "missing" || e.code === "conflict")) throw Unprocessable(e.message);
      throw e;
    }

    const when = { timestamp: Math.floor(now() / 1000), timezone: "+0000" };
    const author: Signature = authorIn
      ? { ...authorIn, ...when }
      : person
        ? { name: gitIdentName(person.name, person.handle), email: person.email, ...when }
        : { name: gitIdentName(actor.kind === "token" ? actor.token.label : "svc", "svc"), email: `noreply@${host}`, ...when };
    const committer: Signature = { name: "svc", email: `svc@${host}`, ...when };
    const commitData = serializeCommit({ tree: edited.tree, parents: tip ? [tip] : [], author, committer, message, extraHeaders: [] });
    const commit = hashObject("commit", commitData);
    const objects: RawObject[] = [];
    for (const o of edited.objects) if (!(await snapshot.objects.has(hashObject(o.type, o.data)))) objects.push(o);
    objects.push({ type: "commit", data: commitData });
    // The same object checks as a push (git's receive.fsckObjects): a bad .gitmodules is refused here too.
    await fsckObjects(objects, snapshot.objects).catch((e: unknown) => {
      throw e instanceof FsckError ? Invalid(e.message) : e;
    });

    // LFS locks of others refuse the commit as they refuse a push (git/lfs-locks.ts).
    const update = { ref, oldOid: tip ?? ZERO_OID, newOid: commit };
    const locked = await lockRefusals(ctx, repo, snapshot.refs, withObjects(snapshot.objects, objects), [update], person?.id ?? null);

    // The tiny pack goes through the same publish path as a push.
    const built = buildPack(objects);
    const idx = writePackIndex(built.entries, built.checksum);
    const base = join(ctx.tmpDir, `commit-${newId()}`);
    const packPath = `${base}.pack`;
    const idxPath = `${base}.idx`;
    writeFileSync(packPath, built.pack);
    writeFileSync(idxPath, idx);
    let result: RefOutcome;
    try {
      const results = await publish(
        ctx,
        org,
        repo,
        [{ ref, oldOid: tip ?? ZERO_OID, newOid: commit, fastForward: true }],
        { name: built.checksum, packPath, idxPath, objectCount: objects.length, size: built.pack.byteLength, idxSize: idx.byteLength },
        {
          atomic: true,
          event: { via: "api", commit, branch },
          actorUserId: person?.id ?? null,
          policy: withRefusals(refPolicy(repo, "commit-api"), locked),
          also: async (tx) => {
            await extras.also?.(tx, { commit, parent: tip });
            if (hasContext)
              await store.insertCommitContext(tx, { repoId: repo.id, sha: commit, context: JSON.stringify(body.context ?? null), createdAt: now() });
          },
        },
      );
      result = results.get(ref)!;
    } finally {
      await Promise.all([rm(packPath, { force: true }), rm(idxPath, { force: true })]);
    }
    switch (result.kind) {
      case "applied":
        await recordMetric(ctx, { orgId: org.id, repoId: repo.id, kind: "api.commit", bytes: 0, durationMs: performance.now() - started });
        return { commit, branch, parent: tip, tree: edited.tree };
      case "policy":
        throw Forbidden(result.message);
      case "clash":
        throw Conflict(refusalReason(ref, result)!, { current: null });
      case "repo-deleted":
        throw NotFound("repository not found");
      case "stale":
      case "moved":
      case "missing":
      case "atomic-failed":
        // Another writer won the race: rebuild on the new tip unless the caller pinned the parent.
        if (hasExpected || attempt >= MAX_REBASE_ATTEMPTS) {
          throw Conflict(`branch ${branch} moved; retry on the current tip`, { current: await readRef(ctx.db.read, repo.id, ref) });
        }
    }
  }
}
