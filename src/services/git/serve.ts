// Git over any transport: authority, snapshot, the engine, publishing and metrics. HTTP and SSH
// both call these three functions, so the protocol has one engine and one set of rules.
import { advertiseRefs } from "../../git/advertise.ts";
import { serveReceivePack, type ReceivePackHooks } from "../../git/receive-pack.ts";
import { serveUploadPack } from "../../git/upload-pack.ts";
import { isAncestor } from "../../git/walk.ts";
import { ZERO_OID } from "../../git/types.ts";
import { AppError } from "../../errors.ts";
import type { Org, Repo } from "../../db/schema/index.ts";
import { authorize } from "../access/access.ts";
import type { Ctx } from "../context.ts";
import { openSnapshot } from "./snapshot.ts";
import { requireRepo } from "../access/lookup.ts";
import { recordMetric } from "../metrics/record.ts";
import { writeBlockedReason } from "../orgs/orgs.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { publish, type RefUpdate } from "./publish.ts";
import { forbidsForcePush, refPolicy } from "../repos/protections.ts";

export type GitServiceName = "git-upload-pack" | "git-receive-pack";

/** A byte conversation with the client. */
export interface GitIo {
  input: AsyncIterable<Uint8Array>;
  write(chunk: Uint8Array): void | Promise<void>;
}

/** Resolves org/repo and checks the action; refusals are AppErrors (401/402/403/404). */
function target(ctx: Ctx, actor: Principal, orgName: string, repoName: string, action: "repo:read" | "repo:write"): { org: Org; repo: Repo } {
  const { org, repo } = requireRepo(ctx, actor, orgName, repoName);
  authorize(ctx, actor, org, action, repo, { writeBlocked: writeBlockedReason(ctx, org, repo) });
  return { org, repo };
}

/**
 * The ref advertisement. For receive-pack a caller who may read but not write gets an in-band
 * error naming the repository (SPEC §5.5.4); everything else refused is an AppError.
 */
export async function advertise(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  service: GitServiceName,
  opts: { protocol: 0 | 2; http: boolean },
): Promise<Uint8Array> {
  const { org, repo } = target(ctx, actor, orgName, repoName, "repo:read");
  if (service === "git-receive-pack") {
    try {
      authorize(ctx, actor, org, "repo:write", repo, { writeBlocked: writeBlockedReason(ctx, org, repo) });
    } catch (e) {
      // Anonymous: 401 so git asks for credentials. Readers: the reason, in band.
      if (!(e instanceof AppError) || e.status !== 403) throw e;
      return inBandError(service, e.message, opts.http);
    }
  }
  const snapshot = await openSnapshot(ctx.db, ctx.git, repo);
  return advertiseRefs(snapshot, service, opts);
}

/** The SSH receive-pack greeting for a refused push: `ERR <message>` in band. */
export function advertiseRefusal(message: string): Uint8Array {
  return inBandError("git-receive-pack", message, false);
}

/** An advertisement that carries only `ERR <message>` (git prints it and stops). */
function inBandError(service: GitServiceName, message: string, http: boolean): Uint8Array {
  const pkt = (s: string) => {
    const b = new TextEncoder().encode(s);
    return Buffer.concat([Buffer.from((b.length + 4).toString(16).padStart(4, "0")), b]);
  };
  const parts = http ? [pkt(`# service=${service}\n`), Buffer.from("0000")] : [];
  parts.push(pkt(`ERR ${message}\n`));
  return Buffer.concat(parts);
}

/** Serves git-upload-pack (clone and fetch) and records a git.clone / git.fetch metric. */
export async function uploadPack(ctx: Ctx, actor: Principal, orgName: string, repoName: string, io: GitIo, opts: { protocol: 0 | 2; statelessRpc: boolean }): Promise<void> {
  const { org, repo } = target(ctx, actor, orgName, repoName, "repo:read");
  const started = performance.now();
  const snapshot = await openSnapshot(ctx.db, ctx.git, repo);
  const summary = await serveUploadPack(snapshot, io, opts);
  if (summary && (summary.objects > 0 || summary.kind === "clone") && summary.wants > 0) {
    recordMetric(ctx.db, { orgId: org.id, repoId: repo.id, kind: summary.kind === "clone" ? "git.clone" : "git.fetch", bytes: summary.bytesSent, durationMs: performance.now() - started });
  }
}

/** Serves git-receive-pack (push): index, check, publish with CAS, event `{ via }`, git.push metric. */
export async function receivePack(
  ctx: Ctx,
  actor: Principal,
  orgName: string,
  repoName: string,
  io: GitIo,
  opts: { statelessRpc: boolean; via: "git" | "ssh"; maxPackBytes?: number; declaredBytes?: number },
): Promise<void> {
  const { org, repo } = target(ctx, actor, orgName, repoName, "repo:write");
  const started = performance.now();
  const snapshot = await openSnapshot(ctx.db, ctx.git, repo);
  let bytes = 0;
  const hooks: ReceivePackHooks = {
    async apply(commands, pack, { atomic, objects }) {
      bytes = pack?.size ?? 0;
      const updates: RefUpdate[] = [];
      for (const c of commands) {
        let fastForward: boolean | undefined;
        if (c.oldOid !== ZERO_OID && c.newOid !== ZERO_OID && forbidsForcePush(ctx, repo, c.ref)) {
          fastForward = await isAncestor(objects, c.oldOid, c.newOid);
        }
        updates.push({ ...c, fastForward });
      }
      // The first push into an empty repository: the pack is exactly what its new tips reach.
      const tips = commands.map((c) => c.newOid).filter((o) => o !== ZERO_OID);
      const reachTips = (pack && snapshot.objects.packs.length === 0 && pack.reachabilityRecord(tips)) || undefined;
      const published = pack ? { name: pack.name, packPath: pack.packPath, idxPath: pack.idxPath, objectCount: pack.objectCount, size: pack.size, idxSize: pack.idxSize, reachTips } : null;
      const results = await publish(ctx, org, repo, updates, published, {
        atomic,
        event: { via: opts.via },
        actorUserId: personOf(actor)?.id ?? null,
        policy: refPolicy(ctx, repo, "push"),
      });
      if ([...results.values()].some((r) => r === null)) {
        recordMetric(ctx.db, { orgId: org.id, repoId: repo.id, kind: "git.push", bytes, durationMs: performance.now() - started });
      }
      return results;
    },
  };
  await serveReceivePack(snapshot, io, { statelessRpc: opts.statelessRpc, tmpDir: ctx.tmpDir, maxPackBytes: opts.maxPackBytes ?? ctx.config.gitMaxPush, declaredBytes: opts.declaredBytes, hooks });
}
