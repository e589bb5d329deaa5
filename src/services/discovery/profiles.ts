// Public profiles of people and organizations (SPEC §2.8, §2.11, §4.2; DECISIONS §1 caps, §2
// PATCH fields). Profiles are anonymous reads: the same answer for every caller, never an
// address of a person, never a private repository.
import { Invalid, NotFound } from "../../errors.ts";
import type { Org, User } from "../../db/schema/index.ts";
import { authorizeAccount, requireOrgFor } from "../access/access.ts";
import { findOrg } from "../access/lookup.ts";
import type { Principal } from "../access/principal.ts";
import type { Ctx } from "../context.ts";
import { isEmail, isRepoName } from "../names.ts";
import type { OrgProfile, OrgProfilePatch, UserProfile, UserProfilePatch } from "./schemas.ts";
import * as store from "./store.ts";

/** DECISIONS §1 profile caps, in characters. */
export const CAPS = {
  name: 100,
  display_name: 100,
  bio: 500,
  location: 100,
  company: 100,
  pronouns: 40,
  label: 50,
  url: 2000,
  description: 500,
  links: 5,
} as const;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/** A text field: at most `cap` characters, no control characters (a bio may break lines); blank is null. */
export function checkText(field: string, value: string | null, cap: number, lines = false): string | null {
  if (value === null) return null;
  if ([...value].length > cap) throw Invalid(`${field} is longer than ${cap} characters`);
  if ((lines ? CONTROL_BUT_LINES : CONTROL).test(value)) throw Invalid(`${field} contains a control character`);
  return value.trim() ? value : null;
}

/** An absolute http(s) URL of at most 2,000 characters (SPEC §2.8 links, §2.11 website). */
export function checkUrl(field: string, value: string): string {
  const v = value.trim();
  if (v.length > CAPS.url) throw Invalid(`${field} is longer than ${CAPS.url} characters`);
  let u: URL | null = null;
  try {
    u = new URL(v);
  } catch {
    u = null;
  }
  // Why: a profile link is rendered as a link for every visitor; only http(s) may be clicked safely.
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname || !/^https?:\/\//i.test(v) || CONTROL.test(v)) {
    throw Invalid(`${field} must be an absolute http:// or https:// URL`);
  }
  return v;
}

/** Validates a links list: at most 5, each label capped and url http(s). */
export function checkLinks(links: { label: string; url: string }[] | null): { label: string; url: string }[] {
  if (links === null) return [];
  if (links.length > CAPS.links) throw Invalid(`a profile has at most ${CAPS.links} links`);
  return links.map((l, i) => ({ label: checkText(`links[${i}].label`, l.label, CAPS.label) ?? "", url: checkUrl(`links[${i}].url`, l.url) }));
}

/** A live account by handle, or 404 (a disabled account is as absent as an unknown one). */
export async function requireLiveUser(ctx: Ctx, handle: string): Promise<User> {
  const user = await store.liveUserByHandle(ctx.db.read, handle);
  if (!user) throw NotFound("no such user");
  return user;
}

/** The profile of `user`; `profile_repo` only while it is a public repository of their namespace. */
async function userProfileOf(ctx: Ctx, user: User): Promise<UserProfile> {
  const ns = await store.personalNamespace(ctx.db.read, user.id);
  const publicRepos = ns ? await store.publicRepoCount(ctx.db.read, ns.id) : 0;
  let profileRepo: string | null = null;
  if (ns && user.profileRepo) {
    const repo = await store.repoInOrg(ctx.db.read, ns.id, user.profileRepo);
    if (repo?.public) profileRepo = repo.name;
  }
  return {
    handle: user.handle,
    name: user.name,
    display_name: user.displayName,
    bio: user.bio,
    location: user.location,
    company: user.company,
    pronouns: user.pronouns,
    kind: user.kind,
    contrib_private_optin: user.contribPrivateOptin,
    profile_repo: profileRepo,
    created_at: user.createdAt,
    links: user.links,
    public_repos: publicRepos,
  };
}

/** GET /v1/users/{handle}: anonymous; 404 for an unknown or disabled account. */
export async function getUserProfile(ctx: Ctx, handle: string): Promise<UserProfile> {
  return userProfileOf(ctx, await requireLiveUser(ctx, handle));
}

/** PATCH /v1/users/{handle}: the person themself; absent keys untouched, null clears, links replaced. */
export async function patchUserProfile(ctx: Ctx, actor: Principal, handle: string, input: UserProfilePatch): Promise<UserProfile> {
  const user = await requireLiveUser(ctx, handle);
  authorizeAccount(actor, { kind: "account:self", userId: user.id });
  const set: Partial<User> = {};
  if (input.name !== undefined) {
    const name = checkText("name", input.name, CAPS.name);
    if (name === null) throw Invalid("name cannot be empty");
    // Why: the name is the author of the person's API commits; git's ident has no room for < or > (issue 25 row 14).
    if (/[<>]/.test(name)) throw Invalid("name may not contain < or > (it is the author name of your commits)");
    set.name = name;
  }
  if (input.display_name !== undefined) set.displayName = checkText("display_name", input.display_name, CAPS.display_name);
  if (input.bio !== undefined) set.bio = checkText("bio", input.bio, CAPS.bio, true);
  if (input.location !== undefined) set.location = checkText("location", input.location, CAPS.location);
  if (input.company !== undefined) set.company = checkText("company", input.company, CAPS.company);
  if (input.pronouns !== undefined) set.pronouns = checkText("pronouns", input.pronouns, CAPS.pronouns);
  if (input.links !== undefined) set.links = checkLinks(input.links);
  if (input.contrib_private_optin !== undefined) set.contribPrivateOptin = input.contrib_private_optin === true;
  await ctx.db.transaction(async (tx) => {
    if (input.profile_repo !== undefined) {
      if (input.profile_repo === null || input.profile_repo === "") set.profileRepo = null;
      else {
        if (!isRepoName(input.profile_repo)) throw Invalid("profile_repo must be a repository name");
        const ns = await store.personalNamespace(tx, user.id);
        const repo = ns ? await store.repoInOrg(tx, ns.id, input.profile_repo) : null;
        // Why one message for missing and private: the profile is public, so it may only name public work.
        if (!repo || !repo.public) throw Invalid(`profile_repo must name a public repository of ${user.handle}`);
        set.profileRepo = repo.name;
      }
    }
    await store.updateUser(tx, user.id, set);
  });
  return userProfileOf(ctx, { ...user, ...set });
}

/** The profile of `org`: a never-edited org reads like a cleared one (every field null). */
async function orgProfileOf(ctx: Ctx, org: Org): Promise<OrgProfile> {
  return {
    org: org.name,
    display_name: org.displayName,
    description: org.description,
    location: org.location,
    website: org.website,
    contact_email: org.contactEmail,
    public_repos: await store.publicRepoCount(ctx.db.read, org.id),
  };
}

/** GET /v1/orgs/{org}/profile: anonymous. */
export async function getOrgProfile(ctx: Ctx, orgName: string): Promise<OrgProfile> {
  const org = await findOrg(ctx, orgName);
  if (!org) throw NotFound("organization not found");
  return orgProfileOf(ctx, org);
}

/** PATCH /v1/orgs/{org}/profile: org:admin; null (or blank) clears. */
export async function patchOrgProfile(ctx: Ctx, actor: Principal, orgName: string, input: OrgProfilePatch): Promise<OrgProfile> {
  const { org } = await requireOrgFor(ctx, actor, orgName, "org:admin");
  const set: Partial<Org> = {};
  if (input.display_name !== undefined) set.displayName = checkText("display_name", input.display_name, CAPS.display_name);
  if (input.description !== undefined) set.description = checkText("description", input.description, CAPS.description, true);
  if (input.location !== undefined) set.location = checkText("location", input.location, CAPS.location);
  if (input.website !== undefined) set.website = input.website === null || !input.website.trim() ? null : checkUrl("website", input.website);
  if (input.contact_email !== undefined) {
    const v = input.contact_email?.trim() ?? "";
    if (v && (!isEmail(v) || v.length > 254)) throw Invalid("contact_email must be an email address");
    set.contactEmail = v || null;
  }
  await ctx.db.transaction((tx) => store.updateOrg(tx, org.id, set));
  return orgProfileOf(ctx, { ...org, ...set });
}
