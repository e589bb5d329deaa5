// The one authority function. Every route, both git transports, the runner calls and the web
// pages ask `decide` (through `authorize`, `requireOrgFor` or `requireRepoFor`); nothing else
// derives allow / 401 / 402 / 403 / 404, and masking (404 where the caller may not see a thing)
// lives here too. SPEC §5.2–§5.5, §2.13, §4.2–§4.6.
import { AppError, NotFound } from "../../errors.ts";
import type { Org, Repo, Role } from "../../db/schema/index.ts";
import type { Ctx } from "../context.ts";
import { loadPersonInOrg, type PersonInOrg } from "./facts-store.ts";
import type { QuotaFacts } from "./quota.ts";
import { findOrg } from "./lookup.ts";
import { ANONYMOUS, personOf, type Principal } from "./principal.ts";
import { need, openRepoTarget, type RepoAction } from "./target.ts";

export { loadPersonInOrg, type PersonInOrg };

export type Scope = "repo:read" | "repo:write" | "org:read" | "org:admin";
export const SCOPES: readonly Scope[] = ["repo:read", "repo:write", "org:read", "org:admin"];

/** What the caller wants to do. String actions need only org (and repo) facts; the others carry their subject. */
export type Action =
  | "repo:read" // clone, fetch, read endpoints
  | "repo:write" // push, commits, refs
  | "repo:admin" // patch, delete, protections, webhooks
  | "repo:fork" // copy the repository into a namespace (decided on the source; the target needs org:create-repo)
  | "repo:sync" // ask a mirror to sync from its origin
  | "org:member" // any role in the org, no scope needed (own tokens, own keys)
  | "org:read" // listings, metrics, usage, audit
  | "org:write" // writers of the org's repositories (member role and repo:write): reading org CI variables
  | "org:admin" // people, credentials
  | "org:admin-masked" // org:admin where a non-admin must not learn the thing exists (billing): 404
  | "org:create-repo" // create repositories
  | { kind: "account:create-org" } // a confirmed person creates an organization
  | { kind: "account:self"; userId: string } // the person themself (addresses, profile, pins)
  | { kind: "account:person" } // any signed-in person acting for their own account (follow, watch)
  | { kind: "member:set-role"; from: Role; to: Role } // change someone's org role
  | { kind: "member:remove"; role: Role; self: boolean } // remove someone, or leave
  | { kind: "invite:create"; role: Role } // invite an address with a role
  | { kind: "token:mint"; tokenKind: "personal" | "service"; scopes: readonly Scope[] }
  | { kind: "credential:list" } // tokens or SSH keys: everything (admin) or one's own (member)
  | { kind: "credential:revoke"; ownerUserId: string | null; what: "token" | "key" } // someone else's credential is 404
  | { kind: "key:create"; deploy: boolean } // a personal SSH key, or a deploy key naming a token
  | { kind: "runner:register" } // a registration token (svcg_) registers one machine
  | { kind: "runner:claim" } // a registered machine (svcr_) claims a job
  | { kind: "runner:job"; jobTokenId: string | null } // the per-job token acts on its own running job
  | { kind: "quota"; what: "private-repo" | "people" } // the org's plan allows one more private repo / person (402 `quota:`)
  | { kind: "change:edit"; author: boolean } // edit, close or reopen a change: writers, or its author while they can read
  | { kind: "repo:discuss"; changeAuthor?: boolean } // comment on or review a change: a person with a role here (or the change's author, e.g. from a fork) and a token covering repo:write
  | { kind: "comment:delete"; author: boolean; changeAuthor?: boolean } // delete a comment: its author, or a repo admin
  | { kind: "thread:resolve"; changeAuthor: boolean } // resolve or unresolve a thread: writers, or the change's author
  | { kind: "issue:discuss" } // open an issue or comment on one: a person who can read (any signed-in person on a public repo)
  | { kind: "issue:edit"; author: boolean } // edit the title/body, close or reopen: writers, or the issue's author
  | { kind: "issue:triage" } // labels, assignees, labels of the repository: writers
  | { kind: "issue:comment-delete"; author: boolean }; // delete an issue comment: its author, or a repo admin

/** Roles in rank order; a grant role never includes owner. */
const RANK: Readonly<Record<Role, number>> = { viewer: 1, member: 2, admin: 3, owner: 4 };

/** Highest of several roles (null when none). */
export function highestRole(roles: (Role | null | undefined)[]): Role | null {
  let best: Role | null = null;
  for (const r of roles) if (r && (!best || RANK[r] > RANK[best])) best = r;
  return best;
}

/** Whether `role` is at least `min`. */
export function roleAtLeast(role: Role | null, min: Role): boolean {
  return role !== null && RANK[role] >= RANK[min];
}

/** Whether a scope set covers the needed scope (org:admin covers all; repo:write covers repo:read). */
export function scopeCovers(scopes: readonly string[] | "all", need: Scope): boolean {
  if (scopes === "all" || scopes.includes("org:admin")) return true;
  if (need === "repo:read") return scopes.includes("repo:read") || scopes.includes("repo:write");
  return scopes.includes(need);
}

/** The least role that can exercise each scope. */
const SCOPE_ROLE: Readonly<Record<Scope, Role>> = { "repo:read": "viewer", "org:read": "viewer", "repo:write": "member", "org:admin": "admin" };

/** Everything `decide` needs to know, loaded from the database by `loadFacts`. */
export interface Facts {
  caller:
    | { kind: "anonymous" }
    /** A person; scopes "all" for a session. tokenOrgId/tokenRepoId set for a personal token. */
    | { kind: "person"; userId: string; confirmed: boolean; scopes: readonly string[] | "all"; tokenOrgId: string | null; tokenRepoId: string | null }
    /** An org service token (or job token): authority from scopes alone. */
    | { kind: "service"; scopes: readonly string[]; tokenOrgId: string; tokenRepoId: string | null; tokenId?: string }
    /** A runner registration token (svcg_): good for registering one machine, nothing else. */
    | { kind: "runner-registration" }
    /** A registered machine (svcr_): good for claiming jobs, nothing else. */
    | { kind: "runner"; runnerId: string };
  /** The organization the action is in (absent for account-level actions). */
  org?: { id: string; name: string };
  /** The person's org role (null: not a member). */
  orgRole: Role | null;
  /** Grants naming the person or their teams across the org (for mint-time scope checks). */
  grants?: { userGrants: ReadonlyMap<string, Role>; teamGrants: ReadonlyMap<string, Role[]> };
  /** The repository; null when it does not exist (answered like one the caller may not see). */
  repo?: {
    id: string;
    fullName: string;
    public: boolean;
    writeBlocked: string | null;
    /** `mirror` repositories take their refs from the origin only. */
    kind: "native" | "mirror";
    /** A grant naming the person on this repo. */
    userGrant: Role | null;
    /** Grants of teams the person is in, on this repo. */
    teamGrants: Role[];
  } | null;
  /** What the org's plan refuses now (loaded for quota decisions only). */
  quota?: QuotaFacts;
}

/** The verdict: allowed with an effective role, or refused with a status and message. */
export type Decision = { allow: true; role: Role | null } | { allow: false; status: 401 | 402 | 403 | 404; message: string };

const deny = (status: 401 | 402 | 403 | 404, message: string): Decision => ({ allow: false, status, message });
const allow = (role: Role | null): Decision => ({ allow: true, role });

/** A service token's role-equivalent: what its scopes let it do in its own org. */
function serviceRole(scopes: readonly string[]): Role | null {
  if (scopes.includes("org:admin")) return "admin";
  if (scopes.includes("repo:write")) return "member";
  if (scopes.includes("repo:read") || scopes.includes("org:read")) return "viewer";
  return null;
}

/** Effective role of the caller on the repo in `facts`, before scopes (SPEC §5.2, §5.3). */
export function effectiveRepoRole(f: Facts): Role | null {
  const c = f.caller;
  if (c.kind === "anonymous" || c.kind === "runner" || c.kind === "runner-registration" || !f.repo || !f.org) return null;
  // Why: a token works with authority only inside the org it was minted in, and a repo-bound
  // token only on its repo; elsewhere it is as good as anonymous (it may still read public repos).
  if (c.tokenOrgId !== null && c.tokenOrgId !== f.org.id) return null;
  if (c.tokenRepoId !== null && c.tokenRepoId !== f.repo.id) return null;
  if (c.kind === "service") return serviceRole(c.scopes);
  // No org membership: no access, whatever the grants say.
  if (!f.orgRole) return null;
  if (f.repo.userGrant) return f.repo.userGrant;
  return f.repo.teamGrants.length ? highestRole([f.orgRole, ...f.repo.teamGrants]) : f.orgRole;
}

/** Repository actions (SPEC §5.5): unreadable is 401 to anonymous callers and 404 to others. */
function decideRepo(f: Facts, action: "repo:read" | "repo:write" | "repo:admin" | "repo:sync"): Decision {
  const c = f.caller;
  // Why: 401 lets git retry with credentials; authenticated callers who may not see the repo (or
  // ask for one that does not exist) get 404, so its existence is not disclosed.
  const unseen = () => (c.kind === "anonymous" ? deny(401, "authentication required") : deny(404, "repository not found"));
  if (!f.repo) return unseen();
  const role = effectiveRepoRole(f);
  const scopes = c.kind === "person" || c.kind === "service" ? c.scopes : [];
  const canRead = (role !== null && scopeCovers(scopes, "repo:read")) || f.repo.public;
  if (!canRead) return unseen();
  if (action === "repo:read") return allow(role);
  if (c.kind === "anonymous") return deny(401, "authentication required");
  if (action === "repo:write" || action === "repo:sync") {
    if (!roleAtLeast(role, "member") || !scopeCovers(scopes, "repo:write")) {
      if (action === "repo:sync") return deny(403, `syncing ${f.repo.fullName} needs write access`);
      return deny(403, `You have read access to ${f.repo.fullName} but cannot write to it. Fork the repository, or ask an administrator for write access.`);
    }
    // Why: a mirror's refs come from its origin alone (SPEC §6.2); a push, commit or ref edit here
    // would be undone by the next sync, or would silently fork the mirror from what it mirrors.
    if (action === "repo:write" && f.repo.kind === "mirror") {
      return deny(403, `${f.repo.fullName} is a read-only mirror: push to its origin instead, and the mirror follows`);
    }
    if (f.repo.writeBlocked) return deny(402, f.repo.writeBlocked);
    return allow(role);
  }
  if (!roleAtLeast(role, "admin") || !(scopeCovers(scopes, "repo:write") || scopeCovers(scopes, "org:admin"))) {
    return deny(403, `administering ${f.repo.fullName} needs the admin role`);
  }
  return allow(role);
}

/** The actions that involve no organization. */
type AccountAction = { kind: "account:create-org" } | { kind: "account:self"; userId: string } | { kind: "account:person" };
/**
 * Forking, as decided on the source repository (DECISIONS §3): whoever may read it may fork it
 * (unreadable is the same 401/404 as repo:read, so forking never discloses a private repository);
 * a fork has an owner, so anonymous callers are asked to sign in even for a public source.
 */
function decideFork(f: Facts): Decision {
  const read = decideRepo(f, "repo:read");
  if (!read.allow) return read;
  if (f.caller.kind === "anonymous") return deny(401, "authentication required");
  return read;
}

/** Account-level actions: no organization involved. */
function decideAccount(f: Facts, action: AccountAction): Decision {
  const c = f.caller;
  if (c.kind === "anonymous") return deny(401, "authentication required");
  if (action.kind === "account:person") {
    // Why 401: follows and watches are a person's; a service token belongs to nobody, so it is
    // no usable credential here (SPEC §4.2 follow: 401 for a service token).
    if (c.kind !== "person") return deny(401, "this needs a signed-in person; service tokens belong to nobody");
    if (c.tokenRepoId !== null) return deny(403, "this token is bound to one repository and does not speak for the account");
    return allow(null);
  }
  if (action.kind === "account:self") {
    // Why: account-level things belong to the person; a token bound to one repository does not speak for the account.
    if (c.kind !== "person" || c.userId !== action.userId || c.tokenRepoId !== null) return deny(403, "you can only manage your own account");
    return allow(null);
  }
  // Why: an org needs an owner, and a service token belongs to nobody (SPEC §4.4).
  if (c.kind !== "person") return deny(403, "service tokens cannot create organizations");
  if (c.tokenRepoId !== null) return deny(403, "this token is bound to one repository and cannot create organizations");
  if (c.scopes !== "all" && !c.scopes.includes("org:admin")) return deny(403, "creating an organization with a token needs the org:admin scope");
  if (!c.confirmed) return deny(403, "confirm your email address before creating an organization");
  return allow(null);
}

/** Whether the person can exercise `scope` somewhere in the org: org role, a direct grant or a team grant (SPEC §5.3). */
function canExerciseSomewhere(f: Facts, scope: Scope): boolean {
  const min = SCOPE_ROLE[scope];
  if (roleAtLeast(f.orgRole, min)) return true;
  if (!f.orgRole || !f.grants) return false;
  for (const r of f.grants.userGrants.values()) if (roleAtLeast(r, min)) return true;
  for (const list of f.grants.teamGrants.values()) for (const r of list) if (roleAtLeast(r, min)) return true;
  return false;
}

/** The message of every refused registration token, whatever the cause (SPEC §4.1: identical bodies). */
const BAD_TOKEN = "invalid or revoked token";

/** Runner calls (SPEC §4.1, §5 item 3; DECISIONS §3 runner per-job calls). */
function decideRunner(
  c: Facts["caller"],
  action: { kind: "runner:register" } | { kind: "runner:claim" } | { kind: "runner:job"; jobTokenId: string | null },
): Decision {
  switch (action.kind) {
    case "runner:register":
      // Why: every bad registration token answers the same 401 as an unknown bearer token, so the
      // answer never tells a spent token from an expired, unknown or misplaced one.
      return c.kind === "runner-registration" ? allow(null) : deny(401, BAD_TOKEN);
    case "runner:claim":
      return c.kind === "runner" ? allow(null) : deny(401, BAD_TOKEN);
    case "runner:job":
      if (c.kind === "anonymous" || c.kind === "runner" || c.kind === "runner-registration") return deny(401, "this call needs the job's token from claim");
      // Why: a job token acts only on its own job and only while it runs (it is deleted at the
      // verdict); any other credential may not learn whether the job exists.
      if (c.kind === "service" && c.tokenId !== undefined && c.tokenId === action.jobTokenId) return allow(null);
      return deny(404, "job not found");
  }
}

/**
 * Billing quotas (SPEC §2.12 may_create_private / may_add_people, §7 402). Asked after the role
 * decision of the same request: the quota describes the org, not the caller.
 */
function decideQuota(f: Facts, action: { kind: "quota"; what: "private-repo" | "people" }): Decision {
  if (!f.quota) throw new Error("quota decision without quota facts");
  // Why 402 and not 403: the refusal is lifted by paying, not by a role (SPEC §7).
  const refusal = action.what === "private-repo" ? f.quota.privateRepo : f.quota.people;
  return refusal ? deny(402, refusal) : allow(f.orgRole);
}

/**
 * Discussion on changes (DECISIONS §5 "Reviews on changes"; issue 28 plan §2). Commenting needs
 * only the viewer role, but a credential covering repo:write (decided: a read-only token stays
 * read-only) held by a person (decided: notifications and approvals always name someone, and a
 * service token belongs to nobody). Unreadable is the same 401/404 as repo:read.
 */
function decideDiscussion(
  f: Facts,
  action:
    | { kind: "repo:discuss"; changeAuthor?: boolean }
    | { kind: "comment:delete"; author: boolean; changeAuthor?: boolean }
    | { kind: "thread:resolve"; changeAuthor: boolean },
): Decision {
  const read = decideRepo(f, "repo:read");
  if (!read.allow) return read;
  const c = f.caller;
  if (c.kind === "anonymous") return deny(401, "authentication required");
  if (c.kind !== "person") return deny(403, "comments and reviews are written by a person; service tokens belong to nobody");
  const role = effectiveRepoRole(f);
  // Why the change's author too: someone who opened a change from a fork on a public repository
  // (no role here) must be able to answer the review of their own change.
  if (!roleAtLeast(role, "viewer") && action.changeAuthor !== true)
    return deny(403, `commenting on ${f.repo!.fullName} needs a role in its organization (or being the change's author)`);
  if (!scopeCovers(c.scopes, "repo:write")) return deny(403, "commenting needs a credential with the repo:write scope; this one is read-only");
  if (action.kind === "repo:discuss") return allow(role);
  if (action.kind === "comment:delete") {
    if (action.author) return allow(role);
    return roleAtLeast(role, "admin") ? allow(role) : deny(403, "only a comment's author or a repository admin can delete it");
  }
  // Why no mirror or write-block check: resolving a thread writes no git data.
  if (action.changeAuthor || roleAtLeast(role, "member")) return allow(role);
  return deny(403, "resolving a thread needs write access, or being the change's author");
}

type IssueAction =
  | { kind: "issue:discuss" }
  | { kind: "issue:edit"; author: boolean }
  | { kind: "issue:triage" }
  | { kind: "issue:comment-delete"; author: boolean };

/**
 * Issues (DECISIONS §5 "Issues", issue 32). Readers open issues and comment, and on a public
 * repository so does any signed-in person (as on GitHub: an outsider reports a bug). Writers triage
 * (labels, assignees) and edit or close anyone's issue; an issue's author edits, closes and reopens
 * their own (decided, as GitHub). Unreadable is the same 401/404 as repo:read.
 */
function decideIssue(f: Facts, action: IssueAction): Decision {
  const read = decideRepo(f, "repo:read");
  if (!read.allow) return read;
  const c = f.caller;
  if (c.kind === "anonymous") return deny(401, "authentication required");
  // Why: an issue, a comment and a notification always name someone; a service token belongs to nobody.
  if (c.kind !== "person") return deny(403, "issues and comments are written by a person; service tokens belong to nobody");
  // Why: a token works only inside the org (and repository) it was minted for; elsewhere it reads
  // public repositories and nothing more, so it cannot speak for its owner here.
  if ((c.tokenOrgId !== null && c.tokenOrgId !== f.org?.id) || (c.tokenRepoId !== null && c.tokenRepoId !== f.repo!.id))
    return deny(403, "this token was minted for another organization or repository; it can only read here");
  // Why repo:write: a read-only token stays read-only (as for comments on changes).
  if (!scopeCovers(c.scopes, "repo:write")) return deny(403, "writing issues and comments needs a credential with the repo:write scope; this one is read-only");
  // Why: on a public repository anyone may sign up and write; an unconfirmed address is a throwaway
  // account's cheapest form (with the per-person rate limit, the spam guard).
  if (!c.confirmed) return deny(403, "confirm your email address before writing issues and comments");
  const role = effectiveRepoRole(f);
  const reader = roleAtLeast(role, "viewer") || f.repo!.public;
  const writer = roleAtLeast(role, "member");
  switch (action.kind) {
    case "issue:discuss":
      return reader ? allow(role) : deny(403, `opening issues on ${f.repo!.fullName} needs a role in its organization`);
    case "issue:edit":
      if (writer || (action.author && reader)) return allow(role);
      return deny(403, "editing, closing or reopening an issue needs write access, or being its author");
    case "issue:triage":
      return writer ? allow(role) : deny(403, `labels and assignees on ${f.repo!.fullName} need write access`);
    case "issue:comment-delete":
      if ((action.author && reader) || roleAtLeast(role, "admin")) return allow(role);
      return deny(403, "only a comment's author or a repository admin can delete it");
  }
}

/** Decides one action. Pure: the table-driven unit test exercises it directly. */
export function decide(f: Facts, action: Action): Decision {
  if (typeof action === "object" && (action.kind === "runner:register" || action.kind === "runner:claim" || action.kind === "runner:job"))
    return decideRunner(f.caller, action);
  // Why: runner credentials carry no authority outside the runner calls; presenting one elsewhere is an unusable credential.
  if (f.caller.kind === "runner" || f.caller.kind === "runner-registration") return deny(401, "a runner credential is good only for runner calls");
  if (typeof action === "object" && action.kind === "quota") return decideQuota(f, action);
  if (action === "repo:read" || action === "repo:write" || action === "repo:admin" || action === "repo:sync") return decideRepo(f, action);
  if (action === "repo:fork") return decideFork(f);
  if (typeof action === "object" && (action.kind === "account:create-org" || action.kind === "account:self" || action.kind === "account:person"))
    return decideAccount(f, action);
  if (typeof action === "object" && action.kind === "change:edit") {
    // Why: a change from a fork is opened by someone who may only read here; they keep control
    // of their own proposal (title, closing), while landing it still needs repo:write.
    const read = decideRepo(f, "repo:read");
    if (!read.allow) return read;
    if (f.caller.kind === "anonymous") return deny(401, "authentication required");
    if (!action.author || f.caller.kind !== "person") return decideRepo(f, "repo:write");
    if (!scopeCovers(f.caller.scopes, "repo:write")) return deny(403, "editing a change needs a credential with the repo:write scope");
    return f.repo?.writeBlocked ? deny(402, f.repo.writeBlocked) : read;
  }

  if (typeof action === "object" && (action.kind === "repo:discuss" || action.kind === "comment:delete" || action.kind === "thread:resolve"))
    return decideDiscussion(f, action);
  if (typeof action === "object" && action.kind.startsWith("issue:")) return decideIssue(f, action as IssueAction);

  // Organization-level actions.
  const c = f.caller;
  if (!f.org) throw new Error("organization action without organization facts");
  if (c.kind === "anonymous") return deny(401, "authentication required");
  if (c.tokenOrgId !== null && c.tokenOrgId !== f.org.id) return deny(404, "organization not found");
  if (c.tokenRepoId !== null) return deny(403, "this token is bound to one repository and cannot perform organization-level operations");
  const role = c.kind === "service" ? serviceRole(c.scopes) : f.orgRole;
  if (!role) return deny(404, "organization not found");
  const isPerson = c.kind === "person";
  const admin = roleAtLeast(role, "admin") && scopeCovers(c.scopes, "org:admin");
  const needAdmin = () => (admin ? allow(role) : deny(403, "this action needs org:admin"));
  // Why: only an owner may make, unmake, remove or invite owners; otherwise an admin could seize
  // the org. A service token with org:admin acts for the org itself and is not so limited.
  const ownerOnly = (message: string) => (isPerson && role !== "owner" ? deny(403, message) : allow(role));

  if (typeof action === "string") {
    switch (action) {
      case "org:member":
        return isPerson ? allow(role) : deny(403, "this action needs a person, not a service token");
      case "org:read":
        return scopeCovers(c.scopes, "org:read") ? allow(role) : deny(403, "this token lacks the org:read scope");
      case "org:write":
        return roleAtLeast(role, "member") && scopeCovers(c.scopes, "repo:write") ? allow(role) : deny(403, "this action needs the member role and repo:write");
      case "org:admin":
        return needAdmin();
      case "org:admin-masked":
        return admin ? allow(role) : deny(404, "organization not found");
      case "org:create-repo":
        if (!roleAtLeast(role, "member") || !scopeCovers(c.scopes, "repo:write"))
          return deny(403, "creating repositories needs the member role and repo:write");
        if (c.kind === "person" && !c.confirmed) return deny(403, "confirm your email address before creating repositories");
        return allow(role);
    }
  } else {
    switch (action.kind) {
      case "member:set-role": {
        if (!admin) return needAdmin();
        return action.to === "owner" || action.from === "owner" ? ownerOnly("only an owner can grant or remove the owner role") : allow(role);
      }
      case "member:remove": {
        if (action.self) return isPerson ? allow(role) : deny(403, "this action needs a person, not a service token");
        if (!admin) return needAdmin();
        return action.role === "owner" ? ownerOnly("only an owner can remove an owner") : allow(role);
      }
      case "invite:create":
        if (!admin) return needAdmin();
        return action.role === "owner" ? ownerOnly("only an owner can invite an owner") : allow(role);
      case "token:mint": {
        const callerScopes = c.scopes;
        // A token cannot mint a stronger one than itself.
        const weaker = action.scopes.find((s) => !scopeCovers(callerScopes, s));
        if (action.tokenKind === "service") {
          // Why: a service token belongs to nobody and acts for the org; only its admins may create one (SPEC §5.3).
          if (!admin) return needAdmin();
          return weaker ? deny(403, `the calling token lacks ${weaker}`) : allow(role);
        }
        if (!isPerson) return deny(403, "a personal token needs a person; service tokens may only mint service tokens");
        // Why: mint-time scope check, so a token never promises more than the person can do here (SPEC §5.3).
        const beyond = action.scopes.find((s) => !canExerciseSomewhere(f, s));
        if (beyond) return deny(403, `you cannot exercise ${beyond} in ${f.org.name}`);
        return weaker ? deny(403, `the calling token lacks ${weaker}`) : allow(role);
      }
      case "credential:list":
        return admin || isPerson ? allow(role) : deny(403, "this action needs a person, not a service token");
      case "credential:revoke":
        // Why: someone else's credential id answers 404, not 403, so ids cannot be probed (SPEC §4.6).
        if (admin) return allow(role);
        if (!isPerson) return deny(403, "this action needs a person, not a service token");
        return action.ownerUserId === c.userId ? allow(role) : deny(404, `${action.what} not found`);
      case "key:create":
        // Why: a deploy key inherits a token's authority, so only those who manage tokens may make one.
        if (action.deploy) return needAdmin();
        if (!isPerson) return deny(403, "a personal key needs a person; name a token_id to create a deploy key");
        // Why: a personal key carries all of its person's authority, so a narrower token may not
        // create one (that would turn a read-only token into push access).
        if (c.scopes !== "all" && !c.scopes.includes("org:admin")) {
          return deny(403, "a personal key carries all of your authority: register it signed in, or with a token holding org:admin");
        }
        return allow(role);
    }
  }
  throw new Error(`unknown action ${JSON.stringify(action)}`);
}

/** The caller part of the facts, from the resolved principal. */
export function callerFacts(p: Principal): Facts["caller"] {
  if (p.kind === "anonymous") return { kind: "anonymous" };
  if (p.kind === "runner-registration") return { kind: "runner-registration" };
  if (p.kind === "runner") return { kind: "runner", runnerId: p.runner.id };
  if (p.kind === "session")
    return { kind: "person", userId: p.user.id, confirmed: p.user.emailVerifiedAt !== null, scopes: "all", tokenOrgId: null, tokenRepoId: null };
  if (p.user) {
    return {
      kind: "person",
      userId: p.user.id,
      confirmed: p.user.emailVerifiedAt !== null,
      scopes: p.token.scopes,
      tokenOrgId: p.token.orgId,
      tokenRepoId: p.token.repoId,
    };
  }
  return { kind: "service", scopes: p.token.scopes, tokenOrgId: p.token.orgId, tokenRepoId: p.token.repoId, tokenId: p.token.id };
}

/** Builds the full facts for one org (and optionally one repo of it, null meaning missing). */
export function buildFacts(
  p: Principal,
  org: { id: string; name: string },
  person: PersonInOrg,
  repo?: (Pick<Repo, "id" | "name" | "public"> & { kind?: Repo["kind"]; writeBlocked?: string | null }) | null,
): Facts {
  return {
    caller: callerFacts(p),
    org,
    orgRole: person.orgRole,
    grants: person,
    repo:
      repo === undefined
        ? undefined
        : repo === null
          ? null
          : {
              id: repo.id,
              fullName: `${org.name}/${repo.name}`,
              public: repo.public,
              writeBlocked: repo.writeBlocked ?? null,
              kind: repo.kind ?? "native",
              userGrant: person.userGrants.get(repo.id) ?? null,
              teamGrants: person.teamGrants.get(repo.id) ?? [],
            },
  };
}

/** Loads the facts about `p` in `org` (and `repo`, with its write block; the plan's quotas when asked) from the database. */
export async function loadFacts(ctx: Ctx, p: Principal, org: Org, repo?: Repo | null, opts: { quota?: boolean } = {}): Promise<Facts> {
  const person = await loadPersonInOrg(ctx, personOf(p)?.id ?? null, org.id);
  const target = repo ? { ...repo, writeBlocked: ctx.resolvers.quota.writeBlocked(ctx, org, repo) } : repo;
  const facts = buildFacts(p, org, person, target);
  if (opts.quota) facts.quota = await ctx.resolvers.quota.facts(ctx, org);
  return facts;
}

/** Throws a refusal as the AppError the transports render. */
export function enforce(d: Decision): Role | null {
  if (!d.allow) throw new AppError(d.status, d.message);
  return d.role;
}

/** Loads facts, decides, and throws the refusal as an AppError; answers the effective role. */
export async function authorize(ctx: Ctx, p: Principal, org: Org, action: Action, repo?: Repo): Promise<Role | null> {
  return enforce(decide(await loadFacts(ctx, p, org, repo), action));
}

/** Decides an account-level action (no organization). */
export function authorizeAccount(p: Principal, action: AccountAction): void {
  enforce(decide({ caller: callerFacts(p), orgRole: null }, action));
}

/** The org named `orgName` (404 when missing) after `action` is allowed on it; answers the role too. */
export async function requireOrgFor(ctx: Ctx, p: Principal, orgName: string, action: Action): Promise<{ org: Org; role: Role | null }> {
  const org = await findOrg(ctx, orgName);
  if (!org) throw NotFound("organization not found");
  return { org, role: await authorize(ctx, p, org, action) };
}

/**
 * The org and repo at `orgName/repoName` after `action` is allowed on it. A missing org or repo
 * is refused exactly like one the caller may not see (401 anonymous, 404 otherwise). A wrapper
 * over the one resolution (target.ts openRepoTarget) for services not yet taking a RepoTarget.
 */
export async function requireRepoFor(
  ctx: Ctx,
  p: Principal,
  orgName: string,
  repoName: string,
  action: RepoAction,
): Promise<{ org: Org; repo: Repo; facts: Facts; role: Role | null }> {
  const t = await openRepoTarget(ctx, p, orgName, repoName, action);
  return { org: t.org, repo: t.repo, facts: t.facts, role: need(t, action) };
}

/** The org named `orgName` (404 when missing) and the caller's facts in it, for several decisions at once. */
export async function orgFacts(ctx: Ctx, p: Principal, orgName: string, opts: { quota?: boolean } = {}): Promise<{ org: Org; facts: Facts }> {
  const org = await findOrg(ctx, orgName);
  if (!org) throw NotFound("organization not found");
  return { org, facts: await loadFacts(ctx, p, org, undefined, opts) };
}

/** Whether `action` would be allowed, without throwing (for viewer_* fields and list filters). */
export function allows(facts: Facts, action: Action): boolean {
  return decide(facts, action).allow;
}

/**
 * The repositories `caller` may read, as a set (for search, which cannot decide row by row over
 * every repository): every public one, plus every repository of `orgIds` (the orgs where the
 * person holds a role, or the service token's org). The set form of `decideRepo(…, "repo:read")`:
 * any org role reads every repository of its org and grants only exist for members, so grants add
 * nothing; a token adds nothing without a read scope, stays in its org and, when bound, its repo.
 * Null for a runner credential, which reads nothing at all (401, as `decide` answers). The unit
 * test checks it against `decide` cell by cell.
 */
export function readableScope(caller: Facts["caller"], memberOrgIds: readonly string[]): { orgIds: string[]; repoId: string | null } | null {
  switch (caller.kind) {
    case "runner":
    case "runner-registration":
      return null;
    case "anonymous":
      return { orgIds: [], repoId: null };
    case "service":
      if (!scopeCovers(caller.scopes, "repo:read") || serviceRole(caller.scopes) === null) return { orgIds: [], repoId: null };
      return { orgIds: [caller.tokenOrgId], repoId: caller.tokenRepoId };
    case "person": {
      if (!scopeCovers(caller.scopes, "repo:read")) return { orgIds: [], repoId: null };
      const orgIds = caller.tokenOrgId === null ? [...memberOrgIds] : memberOrgIds.filter((id) => id === caller.tokenOrgId);
      return { orgIds, repoId: caller.tokenRepoId };
    }
  }
}

/**
 * Facts for work done later on someone's behalf: the lander landing what `userId` queued decides
 * repo:write with that person's roles as they are now (and the repository's write block); a land
 * request from a service token (no person) acts as an org service with repo:write.
 */
export async function deferredFacts(ctx: Ctx, userId: string | null, org: Org, repo: Repo): Promise<Facts> {
  const person = await loadPersonInOrg(ctx, userId, org.id);
  const facts = buildFacts(ANONYMOUS, org, person, { ...repo, writeBlocked: ctx.resolvers.quota.writeBlocked(ctx, org, repo) });
  facts.caller = userId
    ? { kind: "person", userId, confirmed: true, scopes: "all", tokenOrgId: null, tokenRepoId: null }
    : { kind: "service", scopes: ["repo:write"], tokenOrgId: org.id, tokenRepoId: repo.id };
  return facts;
}
