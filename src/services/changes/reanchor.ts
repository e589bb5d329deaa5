// The `change.reanchor` job (issue 28 plan §3.1 "Outdated"): after a push records a patchset, the
// change's line comments are mapped onto it and the result stored (outdated, current position).
// Reads never wait for it: listComments maps rows still behind in memory with the same function,
// so what a reader sees right after a push is what the job then writes.
import type { Tx } from "../../db/database.ts";
import type { Ctx } from "../context.ts";
import type { Attempt } from "../jobs/engine.ts";
import { jobKind } from "../jobs/kind.ts";
import { currentAnchors } from "./comments.ts";
import * as store from "./store.ts";
import * as cstore from "./store-comments.ts";

/** Comments mapped per attempt at most; more go to a follow-up job. */
export const REANCHOR_BATCH = 5_000;

/** The payload: the change whose comments follow its latest patchset. */
export interface ReanchorPayload {
  changeId: string;
}

/** One attempt per change at a time; a push while one waits folds into it. */
export const CHANGE_REANCHOR = jobKind<ReanchorPayload>("change.reanchor", {
  key: (p) => `reanchor:${p.changeId}`,
  unique: (p) => p.changeId,
  concurrency: 2,
});

/** Queues the re-anchoring of `changeId`'s comments inside `tx` (the push's transaction). */
export async function queueReanchor(ctx: Ctx, tx: Tx, changeId: string): Promise<void> {
  await ctx.work.enqueue(tx, CHANGE_REANCHOR, { changeId });
}

/**
 * Maps the change's published line comments anchored behind its current patchset and stores the
 * result, each row guarded by `anchored_patchset < patchset` (a replayed or late attempt writes
 * nothing twice, and a position never moves back).
 */
export async function reanchorChange(ctx: Ctx, p: ReanchorPayload, at: Attempt): Promise<void> {
  const change = await cstore.changeById(ctx.db.read, p.changeId);
  if (!change) return;
  const repo = (await store.repoWithOrg(ctx.db.read, change.repoId))?.repo;
  if (!repo) return;
  const rows = await cstore.behindComments(ctx.db.read, change.id, change.patchset, REANCHOR_BATCH);
  if (!rows.length) return;
  const mapped = await currentAnchors(ctx, repo, change, rows, true);
  await at.complete(async (tx) => {
    for (const r of rows) {
      const m = mapped.get(r.id);
      // A row with nothing mapped (a reply, no position) only moves its watermark.
      await cstore.writeAnchor(tx, r.id, change.patchset, m ?? { outdated: r.outdated, curLine: r.curLine, curStartLine: r.curStartLine });
    }
    if (rows.length === REANCHOR_BATCH) await queueReanchor(ctx, tx, change.id);
  });
}
