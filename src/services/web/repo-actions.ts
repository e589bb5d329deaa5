// The repository layout's buttons (issue 33): Fork, Watch/Unwatch and a mirror's Sync now, each
// through the same service (and access rule) as its API route.
import { Unauthorized } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { personOf, type Principal } from "../access/principal.ts";
import { allows, orgFacts } from "../access/access.ts";
import { accountBody } from "../people/auth.ts";
import { createFork } from "../repos/forks.ts";
import type { RepoBody } from "../repos/repos.ts";
import { syncRequested } from "../mirrors/sync.ts";
import { deleteSubscription, putSubscription } from "../discovery/watching.ts";
import { openRepoPage, repoChrome, type RepoChrome } from "./views.ts";

/** The most namespaces the fork page offers (a person in more orgs names one in the form's text field). */
export const FORK_CHOICES = 100;

/** Where the viewer may fork a repository: their personal namespace first, then the orgs where they may create repositories. */
export async function forkChoicesView(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<{ chrome: RepoChrome; namespaces: string[] }> {
  const t = await openRepoPage(ctx, actor, orgName, repoName);
  const chrome = await repoChrome(ctx, t);
  const user = personOf(actor);
  if (!user) throw Unauthorized("sign in to fork");
  const orgs = (await accountBody(ctx, user)).orgs.slice(0, FORK_CHOICES);
  const namespaces: string[] = [];
  for (const o of orgs) {
    // The same decision createFork enforces on the target (quota aside: a refused private fork says why when submitted).
    if (allows((await orgFacts(ctx, actor, o.name)).facts, "org:create-repo")) namespaces.push(o.name);
  }
  const personal = namespaces.findIndex((n) => n.toLowerCase() === user.handle.toLowerCase());
  if (personal > 0) namespaces.unshift(...namespaces.splice(personal, 1));
  return { chrome, namespaces };
}

/** Forks the repository into `input.org` (default: the caller's personal namespace) under `input.name` (default: its name). */
export async function forkFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, input: { org?: string; name?: string }): Promise<RepoBody> {
  const t = await openRepoPage(ctx, actor, orgName, repoName);
  return createFork(ctx, t, { org: input.org || undefined, name: input.name || undefined });
}

/** Watch (level `all`) or stop watching. */
export async function watchFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string, on: boolean): Promise<void> {
  const t = await openRepoPage(ctx, actor, orgName, repoName);
  if (on) await putSubscription(ctx, t, { level: "all" });
  else await deleteSubscription(ctx, t);
}

/** A mirror's "Sync now": queues a sync (writers). */
export async function syncFromForm(ctx: Ctx, actor: Principal, orgName: string, repoName: string): Promise<void> {
  const t = await openRepoPage(ctx, actor, orgName, repoName);
  await syncRequested(ctx, t);
}
