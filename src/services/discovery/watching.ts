// Watching a repository (DECISIONS §3): a person's level `all`, `participating` or `ignore`;
// watcher_count counts `all` only (SPEC §2.1).
import { Unprocessable } from "../../errors.ts";
import { authorizeAccount } from "../access/access.ts";
import { personOf } from "../access/principal.ts";
import { need, type RepoTarget } from "../access/target.ts";
import { now, type Ctx } from "../context.ts";
import type { Subscription, SubscriptionPut } from "./schemas.ts";
import * as store from "./store.ts";

const LEVELS = ["all", "participating", "ignore"] as const;

/** A watch level. */
export type WatchLevel = (typeof LEVELS)[number];

/** PUT /v1/orgs/{org}/repos/{repo}/subscription: sets the caller's level (a readable repository). */
export async function putSubscription(ctx: Ctx, t: RepoTarget, input: SubscriptionPut): Promise<Subscription> {
  need(t, "repo:read");
  const { repo, actor } = t;
  authorizeAccount(actor, { kind: "account:person" });
  const level = LEVELS.find((l) => l === input.level);
  // Why 422 and not a schema enum (which answers 400): SPEC §7 gives an enumeration its own status.
  if (!level) throw Unprocessable("level must be all, participating or ignore");
  await ctx.db.transaction((tx) => store.upsertSubscription(tx, { repoId: repo.id, userId: personOf(actor)!.id, level, createdAt: now() }));
  return { level, watcher_count: await store.watcherCount(ctx.db.read, repo.id) };
}

/** DELETE /v1/orgs/{org}/repos/{repo}/subscription: stops watching (not watching is no error). */
export async function deleteSubscription(ctx: Ctx, t: RepoTarget): Promise<void> {
  need(t, "repo:read");
  const { repo, actor } = t;
  authorizeAccount(actor, { kind: "account:person" });
  await ctx.db.transaction((tx) => store.deleteSubscription(tx, repo.id, personOf(actor)!.id));
}

/** The caller's own watch level on a readable repository: null when not watching, undefined for anyone but a signed-in person. */
export async function watchLevel(ctx: Ctx, t: RepoTarget): Promise<WatchLevel | null | undefined> {
  need(t, "repo:read");
  const person = personOf(t.actor);
  if (!person) return undefined;
  // Why the fact cache: every repository page's layout asks (Watch/Unwatch); any write drops it.
  // Local: the shared epoch does not follow subscriptions, so several nodes load it each time.
  return ctx.facts.getPairLocal("watch-level", t.repo.id, person.id, () => store.subscriptionLevel(ctx.db.read, t.repo.id, person.id));
}
