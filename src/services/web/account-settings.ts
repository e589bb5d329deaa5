// What the account settings pages show: the signed-in person's profile, pins, addresses, tokens
// and SSH keys, each read through the same service the API route calls, as that person.
import { Unauthorized } from "../../errors.ts";
import type { Ctx } from "../context.ts";
import { personOf, type Principal } from "../access/principal.ts";
import type { User } from "../../db/schema/index.ts";
import { accountBody } from "../people/auth.ts";
import { listEmails } from "../people/emails.ts";
import { listTokens } from "../people/tokens.ts";
import { listSshKeys } from "../people/ssh-keys.ts";
import type { EmailRecord, SshKey, Token } from "../people/schemas.ts";
import { getUserProfile } from "../discovery/profiles.ts";
import { listPins } from "../discovery/pins.ts";
import type { PinList, UserProfile } from "../discovery/schemas.ts";
import { listRepos, type RepoBody } from "../repos/repos.ts";
import { PAGE_REPOS } from "./views.ts";

/** The signed-in person, or 401 (the page then asks them to sign in). */
export function signedIn(actor: Principal): User {
  const user = personOf(actor);
  if (!user) throw Unauthorized("sign in to see your settings");
  return user;
}

/** The orgs the person is in, by name, with their role. */
export async function myOrgs(ctx: Ctx, user: User): Promise<{ id: string; name: string; role: string }[]> {
  return (await accountBody(ctx, user)).orgs;
}

/** Profile settings: the profile, the current pins and the public repositories that could be pinned. */
export async function profileSettingsView(
  ctx: Ctx,
  actor: Principal,
): Promise<{ profile: UserProfile; pins: PinList["pins"]; candidates: RepoBody[]; ownPublic: RepoBody[] }> {
  const user = signedIn(actor);
  const profile = await getUserProfile(ctx, user.handle);
  const pins = (await listPins(ctx, user.handle)).pins;
  const candidates: RepoBody[] = [];
  let ownPublic: RepoBody[] = [];
  for (const o of await myOrgs(ctx, user)) {
    const pub = (await listRepos(ctx, actor, o.name, { limit: PAGE_REPOS })).repos.filter((r) => r.public);
    candidates.push(...pub);
    if (o.name.toLowerCase() === user.handle.toLowerCase()) ownPublic = pub;
  }
  return { profile, pins, candidates, ownPublic };
}

/** The person's addresses, the sign-in address first. */
export async function emailSettingsView(ctx: Ctx, actor: Principal): Promise<{ handle: string; emails: EmailRecord[] }> {
  const user = signedIn(actor);
  return { handle: user.handle, emails: (await listEmails(ctx, actor, user.handle)).emails };
}

/** One org's share of a credentials page. */
export interface OrgCredentials<T> {
  org: string;
  items: T[];
  more: boolean;
}

/** The person's own tokens in each of their orgs (an admin's list too holds only their own here). */
export async function tokenSettingsView(ctx: Ctx, actor: Principal): Promise<{ orgs: string[]; tokens: OrgCredentials<Token>[] }> {
  const user = signedIn(actor);
  const orgs = await myOrgs(ctx, user);
  const tokens: OrgCredentials<Token>[] = [];
  for (const o of orgs) {
    const list = await listTokens(ctx, actor, o.name, { limit: PAGE_REPOS }, { own: true });
    tokens.push({ org: o.name, items: list.tokens, more: list.next_cursor !== null });
  }
  return { orgs: orgs.map((o) => o.name), tokens };
}

/** The person's own SSH keys, wherever they were registered (a personal key acts for its person everywhere). */
export async function keySettingsView(ctx: Ctx, actor: Principal): Promise<{ handle: string; keys: OrgCredentials<SshKey>[] }> {
  const user = signedIn(actor);
  const keys: OrgCredentials<SshKey>[] = [];
  for (const o of await myOrgs(ctx, user)) {
    const list = await listSshKeys(ctx, actor, o.name, { limit: PAGE_REPOS }, { own: true });
    if (list.keys.length) keys.push({ org: o.name, items: list.keys, more: list.next_cursor !== null });
  }
  return { handle: user.handle, keys };
}
