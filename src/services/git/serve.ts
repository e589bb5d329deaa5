// Git over any transport: the one entry point behind smart HTTP and SSH. Authority, snapshot,
// the engine, publishing and metrics live here; a transport parses its request with
// git/service-request.ts, calls serveGit (or advertiseGit for smart HTTP's info/refs), and only
// translates the typed outcome into an HTTP status or an SSH exit code and stderr text.
import { advertiseError, advertiseRefs, type GitService } from "../../git/advertise.ts";
import type { IndexTaskRunner } from "../../git/pack-indexer.ts";
import { serveReceivePack, type ReceivePackHooks } from "../../git/receive-pack.ts";
import type { ProtocolVersion } from "../../git/service-request.ts";
import { SlicedPackSet } from "../../git/time-slice.ts";
import { serveUploadPack } from "../../git/upload-pack.ts";
import { isAncestor } from "../../git/walk.ts";
import { ZERO_OID, type ServiceIO } from "../../git/types.ts";
import { AppError, databaseUnavailable, type ErrorCode } from "../../errors.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import { requireRepoFor } from "../access/access.ts";
import type { Ctx } from "../context.ts";
import { openSnapshot } from "./snapshot.ts";
import { uploadPacker } from "./upload.ts";
import { firstUnreachableNamed } from "./reach.ts";
import { PackIndex } from "../../git/pack-index.ts";
import { recordMetric } from "../metrics/record.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { publish, refusalReason, type RefUpdate } from "./publish.ts";
import { forbidsForcePush, refPolicy, withRefusals } from "./policy.ts";
import { lockRefusals } from "./lfs-locks.ts";

export type { GitService, ServiceIO };

/** One git service invocation as a transport parsed it. */
export interface GitServiceRequest {
  service: GitService;
  org: string;
  repo: string;
  /** From `Git-Protocol` (HTTP) or `GIT_PROTOCOL` (SSH); only upload-pack speaks v2. */
  protocol: ProtocolVersion;
  io: ServiceIO;
  /** Smart HTTP: one RPC per request, the advertisement came from advertiseGit. SSH: one conversation. */
  stateless: boolean;
  /** The transport, for the push event (`via: "git"` over HTTP, `"ssh"` over SSH; SPEC §7). */
  via: "http" | "ssh";
  /** A push's size as the client declared it (HTTP Content-Length), refused in band over SVC_GIT_MAX_PUSH before reading. */
  declaredBytes?: number;
}

/**
 * Why a request was not served. The transports map each kind once: unauthenticated (HTTP 401
 * with a Basic challenge), not-found (404), forbidden (403), payment (402), too-large (413),
 * bad-request (400); forbidden-in-band means the reason was already sent to git as an ERR packet.
 */
export type GitRefusal = StatusRefusal | "forbidden-in-band";

/** The refusals a transport still has to tell the client about. */
export type StatusRefusal = "unauthenticated" | "not-found" | "forbidden" | "payment" | "too-large" | "bad-request" | "unavailable";

/** A refusal with the message meant for the git user. */
export interface GitRefused<R extends GitRefusal = GitRefusal> {
  kind: "refused";
  refusal: R;
  message: string;
}

/** What became of one service invocation; `failed` was logged here with its stack. */
export type GitOutcome = { kind: "served" } | GitRefused | { kind: "failed" };

/**
 * What became of an info/refs request. A reader asking to push gets `forbidden-in-band` with a
 * body to send with 200: an advertisement of one ERR packet, which git prints (SPEC §5.5.4).
 */
export type AdvertiseOutcome =
  | { kind: "served"; body: Uint8Array }
  | (GitRefused<"forbidden-in-band"> & { body: Uint8Array })
  | GitRefused<StatusRefusal>
  | { kind: "failed" };

// unavailable (503): object storage gave up after its retries (snapshot.ts); temporary, so the client is told to retry.
// null: an unexpected failure (logged, answered as one).
const REFUSALS: { readonly [C in ErrorCode]: StatusRefusal | null } = Object.freeze({
  invalid: "bad-request",
  unauthenticated: "unauthenticated",
  payment_required: "payment",
  forbidden: "forbidden",
  not_found: "not-found",
  gone: "not-found",
  conflict: "bad-request",
  too_large: "too-large",
  unsupported_media_type: "bad-request",
  unprocessable: "bad-request",
  rate_limited: "bad-request",
  internal: null,
  upstream: null,
  unavailable: "unavailable",
});

/** The refusal an AppError stands for; null for anything else (an unexpected failure). */
function refusalOf(thrown: unknown): GitRefused<StatusRefusal> | null {
  // A database that cannot be reached is a 503 the client is told about (issue 27), not a failure.
  const error = thrown instanceof AppError ? thrown : databaseUnavailable(thrown);
  if (!error) return null;
  const refusal = REFUSALS[error.code];
  return refusal ? { kind: "refused", refusal, message: error.message } : null;
}

function failed(ctx: Ctx, what: { service: GitService; org: string; repo: string }, via: string, error: unknown): { kind: "failed" } {
  ctx.log.error("git service failed", {
    service: what.service,
    repo: `${what.org}/${what.repo}`,
    via,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return { kind: "failed" };
}

/**
 * Resolves org/repo and checks the service's action (upload-pack reads, receive-pack writes);
 * a refusal when the caller may not.
 */
async function admit(
  ctx: Ctx,
  actor: Principal,
  req: { service: GitService; org: string; repo: string },
): Promise<{ org: Org; repo: Repo } | GitRefused<StatusRefusal>> {
  const action = req.service === "git-receive-pack" ? "repo:write" : "repo:read";
  try {
    const { org, repo } = await requireRepoFor(ctx, actor, req.org, req.repo, action);
    return { org, repo };
  } catch (error) {
    const refused = refusalOf(error);
    if (!refused) throw error;
    return refused;
  }
}

/**
 * A push to a repository that does not exist (or that the caller may not see: the same answer)
 * says how to create one; git shows the message as `remote:` text.
 */
function withCreateHint<R extends GitRefusal>(req: { service: GitService; org: string; repo: string }, refused: GitRefused<R>): GitRefused<R> {
  if (refused.refusal !== "not-found" || req.service !== "git-receive-pack") return refused;
  const name = req.repo.replace(/\.git$/, "");
  return { ...refused, message: `${refused.message}; create it first (POST /v1/orgs/${req.org}/repos with {"name":"${name}"}), then push again` };
}

/** A reader's push is told why in band, where git shows it (the repository named, a fork advised). */
function inBand(req: { service: GitService }, refused: GitRefused): boolean {
  return refused.refusal === "forbidden" && req.service === "git-receive-pack";
}

/** The smart-HTTP info/refs response for `service` (v2 capabilities for upload-pack when asked). */
export async function advertiseGit(
  ctx: Ctx,
  actor: Principal,
  req: { service: GitService; org: string; repo: string; protocol: ProtocolVersion },
): Promise<AdvertiseOutcome> {
  try {
    const admitted = await admit(ctx, actor, req);
    if ("kind" in admitted) {
      if (!inBand(req, admitted)) return withCreateHint(req, admitted);
      return { kind: "refused", refusal: "forbidden-in-band", message: admitted.message, body: advertiseError(req.service, admitted.message, { http: true }) };
    }
    const opened = await openSnapshot(ctx.db.read, ctx.git, admitted.repo);
    // Peeling thousands of refs yields between slices too.
    const snapshot = { ...opened, objects: new SlicedPackSet(opened.objects.packs, ctx.git.multiPackIndexes) };
    return { kind: "served", body: await advertiseRefs(snapshot, req.service, { protocol: req.protocol, http: true }) };
  } catch (error) {
    return refusalOf(error) ?? failed(ctx, req, "http", error);
  }
}

/** Serves one git-upload-pack or git-receive-pack invocation over `req.io`. */
export async function serveGit(ctx: Ctx, actor: Principal, req: GitServiceRequest): Promise<GitOutcome> {
  try {
    const admitted = await admit(ctx, actor, req);
    if ("kind" in admitted) {
      // Over a conversation the advertisement is still ours to send: the reason goes there.
      // Over stateless HTTP the advertisement has passed, so the RPC answers with a status.
      if (req.stateless || !inBand(req, admitted)) return withCreateHint(req, admitted);
      await req.io.write(advertiseError(req.service, admitted.message, { http: false }));
      return { kind: "refused", refusal: "forbidden-in-band", message: admitted.message };
    }
    if (req.service === "git-upload-pack") await uploadPack(ctx, admitted.org, admitted.repo, req);
    else await receivePack(ctx, actor, admitted.org, admitted.repo, req);
    return { kind: "served" };
  } catch (error) {
    return refusalOf(error) ?? failed(ctx, req, req.via, error);
  }
}

/** Clone and fetch; records a git.clone / git.fetch metric. */
async function uploadPack(ctx: Ctx, org: Org, repo: Repo, req: GitServiceRequest): Promise<void> {
  const started = performance.now();
  const opened = await openSnapshot(ctx.db.read, ctx.git, repo);
  // Walks over client input on the event loop (haves, shallow lines, wants to check) yield between slices.
  const snapshot = { ...opened, objects: new SlicedPackSet(opened.objects.packs, ctx.git.multiPackIndexes) };
  const summary = await serveUploadPack(snapshot, req.io, {
    protocol: req.protocol,
    statelessRpc: req.stateless,
    packer: uploadPacker(ctx, snapshot),
    limits: { maxLines: ctx.config.gitMaxNegotiation, setting: "SVC_GIT_MAX_NEGOTIATION" },
  });
  if (summary && (summary.objects > 0 || summary.kind === "clone") && summary.wants > 0) {
    await recordMetric(ctx, {
      orgId: org.id,
      repoId: repo.id,
      kind: summary.kind === "clone" ? "git.clone" : "git.fetch",
      bytes: summary.bytesSent,
      durationMs: performance.now() - started,
    });
  }
}

/** The indexer's task on the process's thread pool (pack-index-task.ts). */
export function indexOnThreads(ctx: Ctx): IndexTaskRunner {
  return (input, transfer) => ctx.threads.run("git.indexPack", input, { transfer });
}

/** Push: index, check, publish with CAS, the push event `{ via }`, a git.push metric. */
async function receivePack(ctx: Ctx, actor: Principal, org: Org, repo: Repo, req: GitServiceRequest): Promise<void> {
  const started = performance.now();
  const snapshot = await openSnapshot(ctx.db.read, ctx.git, repo);
  let bytes = 0;
  const hooks: ReceivePackHooks = {
    async apply(commands, pack, { atomic, objects }) {
      bytes = pack?.size ?? 0;
      // A fork may not name what it does not reach of the packs it lists (reach.ts): refused like a hole.
      const named = {
        tips: commands.map((c) => c.newOid),
        pack: pack ? { idx: PackIndex.parse(await Bun.file(pack.idxPath).bytes()), links: pack.links, appendedBases: pack.appendedBases } : undefined,
      };
      if (await firstUnreachableNamed(snapshot, repo.id, named)) return new Map(commands.map((c) => [c.ref, "missing necessary objects"]));
      const updates: RefUpdate[] = [];
      for (const c of commands) {
        let fastForward: boolean | undefined;
        if (c.oldOid !== ZERO_OID && c.newOid !== ZERO_OID && (await forbidsForcePush(ctx, repo, c.ref))) {
          fastForward = await isAncestor(objects, c.oldOid, c.newOid);
        }
        updates.push({ ...c, fastForward });
      }
      // The first push into an empty repository: the pack is exactly what its new tips reach.
      const tips = commands.map((c) => c.newOid).filter((o) => o !== ZERO_OID);
      const reachTips = (pack && snapshot.objects.packs.length === 0 && pack.reachabilityRecord(tips)) || undefined;
      const published = pack
        ? { name: pack.name, packPath: pack.packPath, idxPath: pack.idxPath, objectCount: pack.objectCount, size: pack.size, idxSize: pack.idxSize, reachTips }
        : null;
      const pusherId = personOf(actor)?.id ?? null;
      // LFS locks held by others (lfs-locks.ts): refused per ref like a protection, atomic pushes included.
      const locked = await lockRefusals(ctx, repo, snapshot.refs, objects, commands, pusherId);
      const results = await publish(ctx, org, repo, updates, published, {
        atomic,
        event: { via: req.via === "http" ? "git" : "ssh" },
        actorUserId: pusherId,
        policy: withRefusals(refPolicy(repo, "push"), locked),
      });
      if ([...results.values()].some((r) => r.kind === "applied")) {
        await recordMetric(ctx, { orgId: org.id, repoId: repo.id, kind: "git.push", bytes, durationMs: performance.now() - started });
      }
      // The engine reports each ref as `ok` or `ng <reason>` on the wire.
      return new Map([...results].map(([ref, r]) => [ref, refusalReason(ref, r)]));
    },
  };
  await serveReceivePack(snapshot, req.io, {
    statelessRpc: req.stateless,
    tmpDir: ctx.tmpDir,
    maxPackBytes: ctx.config.gitMaxPush,
    maxObjectBytes: ctx.config.gitMaxObject,
    declaredBytes: req.declaredBytes,
    // Indexing, checking and resolving run on a worker thread: the event loop only spools bytes.
    run: indexOnThreads(ctx),
    hooks,
  });
}
