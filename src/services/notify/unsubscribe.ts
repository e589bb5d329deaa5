// One-click unsubscribe from notification mail (RFC 8058): the mail's List-Unsubscribe link
// carries an `svcu_` token whose sha256 is stored with the person and thread. The GET page changes
// nothing (mail scanners fetch links); POST mutes the thread, or with `what=mail` turns mail off.
import type { Ctx } from "../context.ts";
import { now } from "../context.ts";
import { hashSecret } from "../../util/secrets.ts";
import { jobKind } from "../jobs/kind.ts";
import { setMuted } from "./inbox.ts";
import * as store from "./store.ts";

const TOKEN = /^svcu_[a-z2-7]{32}$/;

/** What a live unsubscribe token is about, or null (malformed, unknown or expired). */
export async function unsubscribeTarget(ctx: Ctx, token: string) {
  if (!TOKEN.test(token)) return null;
  const row = await store.unsubscribeByHash(ctx.db.read, hashSecret(token));
  if (!row || row.expiresAt <= now() || !row.repoId || !row.subjectKind || !row.subjectId) return null;
  const r = (await store.reposWithOrgs(ctx.db.read, [row.repoId])).get(row.repoId);
  const n = await store.notificationBySubject(ctx.db.read, row.userId, row.subjectKind, row.subjectId);
  return {
    ...row,
    repoId: row.repoId,
    subjectKind: row.subjectKind,
    subjectId: row.subjectId,
    repoName: r ? `${r.org.name}/${r.repo.name}` : null,
    title: n?.title ?? null,
  };
}

/** POST: mutes the token's thread (`thread`, the one-click default) or turns notification mail off (`mail`). */
export async function unsubscribe(ctx: Ctx, token: string, what: "thread" | "mail" = "thread"): Promise<boolean> {
  const t = await unsubscribeTarget(ctx, token);
  if (!t) return false;
  await ctx.db.transaction(async (tx) => {
    if (what === "mail") await store.setMailSetting(tx, t.userId, false, now());
    else await setMuted(tx, { userId: t.userId, repoId: t.repoId, subjectKind: t.subjectKind, subjectId: t.subjectId }, true);
  });
  return true;
}

/** Activity and unsubscribe tokens are kept 90 days. */
const KEEP_MS = 90 * 24 * 3600 * 1000;

/** Hourly, once across the cluster: drops expired unsubscribe tokens and activity older than 90 days. */
export const NOTIFY_PRUNE = jobKind<unknown>("notify.prune", { every: { ms: 3_600_000, scope: "cluster" } });

export async function pruneNotify(ctx: Ctx): Promise<void> {
  const t = now();
  await ctx.db.transaction(async (tx) => {
    await store.pruneUnsubscribes(tx, t);
    await store.pruneActivity(tx, t - KEEP_MS);
  });
}
