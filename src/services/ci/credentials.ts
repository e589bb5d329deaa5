// Runner credentials (SPEC §4.1, §5 item 3): registration tokens `svcg_<id>_<secret>` and machine
// credentials `svcr_<id>_<secret>`. Only SHA-256 digests are stored; a presented secret is looked
// up by its id and compared in constant time. Also the batched last_seen_at stamps of machines.
import type { RunnerRegistrationRow, RunnerRow } from "../../db/schema/index.ts";
import { newId, newSecret } from "../../util/ids.ts";
import { hashSecret, secretMatches, storedDigest } from "../../util/secrets.ts";
import type { Principal } from "../access/principal.ts";
import { now, type Ctx } from "../context.ts";
import * as store from "./store.ts";

const REGISTRATION_RE = /^svcg_[a-z2-7]{16}_[a-z2-7]{32}$/;
const RUNNER_RE = /^svcr_[a-z2-7]{16}_[a-z2-7]{32}$/;

/** A new credential with `prefix`: its id, the plaintext shown once, and the digest to store. */
export function mintCredential(prefix: "svcg" | "svcr"): { id: string; plaintext: string; hash: string } {
  const id = newId();
  const secret = newSecret();
  return { id, plaintext: `${prefix}_${id}_${secret}`, hash: hashSecret(secret) };
}

/** Whether a bearer value is meant as a runner credential (the front door routes it here by prefix). */
export function isRunnerCredential(raw: string): boolean {
  return raw.startsWith("svcg_") || raw.startsWith("svcr_");
}

/**
 * Resolves an `svcg_` registration token (valid, unspent, unexpired) or an `svcr_` machine
 * credential (live machine). Null for anything else: the caller answers one uniform 401.
 */
export async function resolveRunnerCredential(ctx: Ctx, raw: string): Promise<Principal | null> {
  const value = raw.trim();
  if (REGISTRATION_RE.test(value)) {
    const id = value.slice(5, 21);
    const row = await ctx.facts.get("runner-registration", id, () => store.registrationById(ctx.db.read, id));
    // Why: one constant-time comparison whatever the row's state, so timing says nothing either.
    const matches = row ? secretMatches(value.slice(22), storedDigest(row.secretHash)) : false;
    if (!row || !matches || row.spentAt !== null || row.expiresAt <= now()) return null;
    return { kind: "runner-registration", registration: row as RunnerRegistrationRow };
  }
  if (RUNNER_RE.test(value)) {
    const id = value.slice(5, 21);
    const known = ctx.ci.machines;
    // What can change about a machine after registration is its removal (removed_at, or the row
    // deleted) and its group (when its group is deleted); the rest of the row never changes and
    // is cached. Those two columns are a fact: on SQLite any commit (this process's or another's)
    // drops it, so a removed or replaced machine fails on its very next call. On a shared database
    // (several nodes) it is kept across this node's own writes and trusted while the fact epoch,
    // read at most every LIVENESS_STALE_MS for it, has not moved; a tombstone written here drops
    // it after COMMIT. So a removal is seen at once on this node and within that on the others,
    // an idle long poll costs no query, and the claim transaction re-reads the machine, so a
    // removed machine never gets a job.
    const live = await ctx.facts.getWithin("runner-live", id, () => store.runnerLiveness(ctx.db.read, id), LIVENESS_STALE_MS);
    if (!live || live.removedAt !== null) {
      known.delete(id);
      return null;
    }
    let hit = known.get(id);
    if (!hit || hit.runner.groupId !== live.groupId) {
      const row = await store.runnerById(ctx.db.read, id);
      if (!row || row.removedAt !== null) return null;
      if (known.size >= MAX_KNOWN_MACHINES) known.clear();
      known.set(id, (hit = { runner: row, digest: storedDigest(row.credentialHash) }));
    }
    // Why: compare the digest in constant time so timing does not reveal how much of a secret matched.
    if (!secretMatches(value.slice(22), hit.digest)) return null;
    noteRunnerSeen(ctx, id);
    return { kind: "runner", runner: hit.runner };
  }
  return null;
}

/** How late a machine's removal on another node may be seen by this one (several nodes only). */
const LIVENESS_STALE_MS = 1_000;

/** Machines whose credential was verified: the row (as registered) and the stored digest, by id (`ctx.ci.machines`). */
export type KnownMachines = Map<string, { runner: RunnerRow; digest: Uint8Array }>;
const MAX_KNOWN_MACHINES = 20_000;

// last_seen_at of machines, written in batches (as token-use.ts does for tokens): every write
// empties the fact cache, and a thousand long-polling machines would otherwise write 50 times a
// second. The online window is 60 s (SPEC §3.1), so a stamp a few seconds late changes nothing;
// readers in this process merge the pending stamps (seenAt) so a call shows at once.
const SEEN_FLUSH_MS = 5_000;

/** Records that machine `runnerId` made a call now. */
export function noteRunnerSeen(ctx: Ctx, runnerId: string): void {
  const p = ctx.buffers.runnerSeen;
  const t = now();
  p.note(runnerId, t);
  // Why not awaited: the stamp is bookkeeping, not part of the request; a failure is only logged.
  if (t - p.flushedAt >= SEEN_FLUSH_MS) void flushRunnerSeen(ctx).catch((error) => ctx.log.warn("runner last_seen_at not recorded", { error: String(error) }));
}

/** The latest call of `runnerId` this process knows of that is not yet written (or null). */
export function pendingSeen(ctx: Ctx, runnerId: string): number | null {
  return ctx.buffers.runnerSeen.pending.get(runnerId) ?? null;
}

/** Writes every waiting stamp in one transaction (by the sweeper, and at shutdown). */
export async function flushRunnerSeen(ctx: Ctx): Promise<void> {
  const stamps = ctx.buffers.runnerSeen.take(now());
  if (stamps.length === 0) return;
  await ctx.db.transaction((tx) => store.stampRunnersSeen(tx, stamps));
}
