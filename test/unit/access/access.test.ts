// The one authority function as a table (SPEC §2.13, §5.2–§5.5): each row is facts, an action
// and the verdict the spec requires.
import { describe, expect, test } from "bun:test";
import { decide, type Action, type Facts } from "../../../src/services/access/access.ts";

type Role = "viewer" | "member" | "admin" | "owner";
type Caller = Facts["caller"];
type RepoFacts = NonNullable<Facts["repo"]>;

const ORG = { id: "org-acme", name: "acme" };
const OTHER_ORG = "org-rival";
const REPO_ID = "repo-widgets";
const OTHER_REPO_ID = "repo-gadgets";

const anonymous: Caller = { kind: "anonymous" };
/** A person signed in with a session: every scope, bounded by roles. */
const session = (confirmed = true): Caller => ({ kind: "person", userId: "u-me", confirmed, scopes: "all", tokenOrgId: null, tokenRepoId: null });
/** A personal token minted in `orgId` (default: this org), optionally bound to one repo. */
const personal = (scopes: string[], orgId = ORG.id, repoId: string | null = null): Caller => ({
  kind: "person",
  userId: "u-me",
  confirmed: true,
  scopes,
  tokenOrgId: orgId,
  tokenRepoId: repoId,
});
/** An org service token. */
const service = (scopes: string[], orgId = ORG.id, repoId: string | null = null): Caller => ({
  kind: "service",
  scopes,
  tokenOrgId: orgId,
  tokenRepoId: repoId,
});

const privateRepo = (o: Partial<RepoFacts> = {}): RepoFacts => ({
  id: REPO_ID,
  fullName: "acme/widgets",
  public: false,
  writeBlocked: null,
  kind: "native",
  userGrant: null,
  teamGrants: [],
  ...o,
});
const publicRepo = (o: Partial<RepoFacts> = {}): RepoFacts => privateRepo({ public: true, ...o });
/** The same org's other repository (for repo-bound tokens). */
const otherRepo = (o: Partial<RepoFacts> = {}): RepoFacts => privateRepo({ id: OTHER_REPO_ID, fullName: "acme/gadgets", ...o });

type Expect = { allow: true; role?: Role | null } | { status: 401 | 402 | 403 | 404; message?: RegExp };

interface Row {
  name: string;
  caller: Caller;
  orgRole: Role | null;
  repo?: RepoFacts;
  action: Action;
  expect: Expect;
}

const ALLOW = (role?: Role | null): Expect => ({ allow: true, role });
const FORK_ADVICE = /acme\/widgets.*fork|fork.*acme\/widgets/is;

const rows: Row[] = [
  // Anonymous callers (§5.5.1, §5.5.3).
  { name: "anonymous reads a private repo: 401", caller: anonymous, orgRole: null, repo: privateRepo(), action: "repo:read", expect: { status: 401 } },
  { name: "anonymous reads a public repo", caller: anonymous, orgRole: null, repo: publicRepo(), action: "repo:read", expect: ALLOW(null) },
  { name: "anonymous pushes to a public repo: 401", caller: anonymous, orgRole: null, repo: publicRepo(), action: "repo:write", expect: { status: 401 } },
  { name: "anonymous administers a public repo: 401", caller: anonymous, orgRole: null, repo: publicRepo(), action: "repo:admin", expect: { status: 401 } },
  { name: "anonymous org listing: 401", caller: anonymous, orgRole: null, action: "org:read", expect: { status: 401 } },
  { name: "anonymous creates a repo: 401", caller: anonymous, orgRole: null, action: "org:create-repo", expect: { status: 401 } },

  // Org roles on a private repo (§2.13).
  { name: "viewer reads", caller: session(), orgRole: "viewer", repo: privateRepo(), action: "repo:read", expect: ALLOW("viewer") },
  {
    name: "viewer push: 403 naming the repo and advising a fork",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo(),
    action: "repo:write",
    expect: { status: 403, message: FORK_ADVICE },
  },
  { name: "viewer administers: 403", caller: session(), orgRole: "viewer", repo: privateRepo(), action: "repo:admin", expect: { status: 403 } },
  { name: "member pushes", caller: session(), orgRole: "member", repo: privateRepo(), action: "repo:write", expect: ALLOW("member") },
  { name: "member administers: 403", caller: session(), orgRole: "member", repo: privateRepo(), action: "repo:admin", expect: { status: 403 } },
  { name: "admin administers", caller: session(), orgRole: "admin", repo: privateRepo(), action: "repo:admin", expect: ALLOW("admin") },
  { name: "owner administers", caller: session(), orgRole: "owner", repo: privateRepo(), action: "repo:admin", expect: ALLOW("owner") },
  { name: "outsider on a private repo: masked 404", caller: session(), orgRole: null, repo: privateRepo(), action: "repo:read", expect: { status: 404 } },
  { name: "outsider push to a private repo: masked 404", caller: session(), orgRole: null, repo: privateRepo(), action: "repo:write", expect: { status: 404 } },
  { name: "outsider reads a public repo as themself", caller: session(), orgRole: null, repo: publicRepo(), action: "repo:read", expect: ALLOW(null) },
  {
    name: "outsider push to a public repo: 403 advising a fork",
    caller: session(),
    orgRole: null,
    repo: publicRepo(),
    action: "repo:write",
    expect: { status: 403, message: FORK_ADVICE },
  },
  {
    name: "viewer push to a public repo: 403 advising a fork",
    caller: session(),
    orgRole: "viewer",
    repo: publicRepo(),
    action: "repo:write",
    expect: { status: 403, message: FORK_ADVICE },
  },

  // Per-repo user grants: the role outright, up or down (§5.2.1).
  {
    name: "viewer with an admin grant administers",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo({ userGrant: "admin" }),
    action: "repo:admin",
    expect: ALLOW("admin"),
  },
  {
    name: "viewer with a member grant pushes",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo({ userGrant: "member" }),
    action: "repo:write",
    expect: ALLOW("member"),
  },
  {
    name: "admin with a viewer grant reads",
    caller: session(),
    orgRole: "admin",
    repo: privateRepo({ userGrant: "viewer" }),
    action: "repo:read",
    expect: ALLOW("viewer"),
  },
  {
    name: "admin with a viewer grant cannot push",
    caller: session(),
    orgRole: "admin",
    repo: privateRepo({ userGrant: "viewer" }),
    action: "repo:write",
    expect: { status: 403, message: FORK_ADVICE },
  },
  {
    name: "owner with a member grant cannot administer",
    caller: session(),
    orgRole: "owner",
    repo: privateRepo({ userGrant: "member" }),
    action: "repo:admin",
    expect: { status: 403 },
  },
  {
    name: "user grant beats a higher team grant",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo({ userGrant: "viewer", teamGrants: ["admin"] }),
    action: "repo:write",
    expect: { status: 403 },
  },

  // Team grants only raise (§5.2.2).
  {
    name: "member with a viewer team grant still pushes",
    caller: session(),
    orgRole: "member",
    repo: privateRepo({ teamGrants: ["viewer"] }),
    action: "repo:write",
    expect: ALLOW("member"),
  },
  {
    name: "viewer with a member team grant pushes",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo({ teamGrants: ["member"] }),
    action: "repo:write",
    expect: ALLOW("member"),
  },
  {
    name: "two disagreeing teams: the higher",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo({ teamGrants: ["member", "admin", "viewer"] }),
    action: "repo:admin",
    expect: ALLOW("admin"),
  },
  {
    name: "admin with a viewer team grant keeps admin",
    caller: session(),
    orgRole: "admin",
    repo: privateRepo({ teamGrants: ["viewer"] }),
    action: "repo:admin",
    expect: ALLOW("admin"),
  },

  // No membership: no access whatever the grants say (§5.2.3).
  {
    name: "non-member with an admin user grant: 404",
    caller: session(),
    orgRole: null,
    repo: privateRepo({ userGrant: "admin" }),
    action: "repo:read",
    expect: { status: 404 },
  },
  {
    name: "non-member with a member team grant: 404",
    caller: session(),
    orgRole: null,
    repo: privateRepo({ teamGrants: ["member"] }),
    action: "repo:read",
    expect: { status: 404 },
  },
  {
    name: "non-member with a grant on a public repo cannot push",
    caller: session(),
    orgRole: null,
    repo: publicRepo({ userGrant: "admin" }),
    action: "repo:write",
    expect: { status: 403 },
  },

  // Personal tokens: minted scopes ∩ effective role (§5.3.1).
  {
    name: "member, repo:read token reads",
    caller: personal(["repo:read"]),
    orgRole: "member",
    repo: privateRepo(),
    action: "repo:read",
    expect: ALLOW("member"),
  },
  {
    name: "member, repo:read token cannot push",
    caller: personal(["repo:read"]),
    orgRole: "member",
    repo: privateRepo(),
    action: "repo:write",
    expect: { status: 403 },
  },
  {
    name: "member, repo:write token pushes",
    caller: personal(["repo:write"]),
    orgRole: "member",
    repo: privateRepo(),
    action: "repo:write",
    expect: ALLOW("member"),
  },
  {
    name: "viewer, repo:write token cannot push",
    caller: personal(["repo:write"]),
    orgRole: "viewer",
    repo: privateRepo(),
    action: "repo:write",
    expect: { status: 403 },
  },
  {
    name: "admin, repo:read token cannot administer",
    caller: personal(["repo:read"]),
    orgRole: "admin",
    repo: privateRepo(),
    action: "repo:admin",
    expect: { status: 403 },
  },
  {
    name: "admin, org:admin token administers",
    caller: personal(["org:admin"]),
    orgRole: "admin",
    repo: privateRepo(),
    action: "repo:admin",
    expect: ALLOW("admin"),
  },
  {
    name: "member, org:read-only token cannot read a private repo",
    caller: personal(["org:read"]),
    orgRole: "member",
    repo: privateRepo(),
    action: "repo:read",
    expect: { status: 404 },
  },
  {
    name: "member loses the role: token reads nothing",
    caller: personal(["repo:write"]),
    orgRole: null,
    repo: privateRepo(),
    action: "repo:read",
    expect: { status: 404 },
  },
  {
    name: "personal token of another org on a private repo: 404",
    caller: personal(["repo:read"], OTHER_ORG),
    orgRole: "owner",
    repo: privateRepo(),
    action: "repo:read",
    expect: { status: 404 },
  },
  {
    name: "personal token of another org reads a public repo",
    caller: personal(["repo:read"], OTHER_ORG),
    orgRole: null,
    repo: publicRepo(),
    action: "repo:read",
    expect: { allow: true },
  },
  {
    name: "repo-bound personal token on its repo",
    caller: personal(["repo:write"], ORG.id, REPO_ID),
    orgRole: "member",
    repo: privateRepo(),
    action: "repo:write",
    expect: ALLOW("member"),
  },
  {
    name: "repo-bound personal token on another repo: 404",
    caller: personal(["repo:write"], ORG.id, REPO_ID),
    orgRole: "member",
    repo: otherRepo(),
    action: "repo:read",
    expect: { status: 404 },
  },

  // Service tokens: authority from scopes alone, in their own org (§5.3.3, §5.5.3).
  { name: "service repo:read reads", caller: service(["repo:read"]), orgRole: null, repo: privateRepo(), action: "repo:read", expect: { allow: true } },
  { name: "service repo:read cannot push", caller: service(["repo:read"]), orgRole: null, repo: privateRepo(), action: "repo:write", expect: { status: 403 } },
  { name: "service repo:write pushes", caller: service(["repo:write"]), orgRole: null, repo: privateRepo(), action: "repo:write", expect: { allow: true } },
  {
    name: "service repo:write cannot administer",
    caller: service(["repo:write"]),
    orgRole: null,
    repo: privateRepo(),
    action: "repo:admin",
    expect: { status: 403 },
  },
  { name: "service org:admin administers", caller: service(["org:admin"]), orgRole: null, repo: privateRepo(), action: "repo:admin", expect: { allow: true } },
  {
    name: "service token of another org on a private repo: 404",
    caller: service(["org:admin"], OTHER_ORG),
    orgRole: null,
    repo: privateRepo(),
    action: "repo:read",
    expect: { status: 404 },
  },
  {
    name: "service token of another org reads a public repo anonymously",
    caller: service(["repo:read"], OTHER_ORG),
    orgRole: null,
    repo: publicRepo(),
    action: "repo:read",
    expect: ALLOW(null),
  },
  {
    name: "service token of another org cannot push to a public repo",
    caller: service(["org:admin"], OTHER_ORG),
    orgRole: null,
    repo: publicRepo(),
    action: "repo:write",
    expect: { status: 403 },
  },
  {
    name: "repo-bound service token on its repo",
    caller: service(["repo:write"], ORG.id, REPO_ID),
    orgRole: null,
    repo: privateRepo(),
    action: "repo:write",
    expect: { allow: true },
  },
  {
    name: "repo-bound service token on another repo: 404",
    caller: service(["repo:write"], ORG.id, REPO_ID),
    orgRole: null,
    repo: otherRepo(),
    action: "repo:read",
    expect: { status: 404 },
  },
  {
    name: "repo-bound service token reads another public repo",
    caller: service(["repo:write"], ORG.id, REPO_ID),
    orgRole: null,
    repo: otherRepo({ public: true }),
    action: "repo:read",
    expect: { allow: true },
  },
  {
    name: "repo-bound service token cannot push to another public repo",
    caller: service(["repo:write"], ORG.id, REPO_ID),
    orgRole: null,
    repo: otherRepo({ public: true }),
    action: "repo:write",
    expect: { status: 403 },
  },

  // write_blocked (§2.1, §7 402).
  {
    name: "member push to a write-blocked repo: 402 quota:",
    caller: session(),
    orgRole: "member",
    repo: privateRepo({ writeBlocked: "quota: subscription ended" }),
    action: "repo:write",
    expect: { status: 402, message: /^quota:/ },
  },
  {
    name: "service push to a write-blocked repo: 402",
    caller: service(["repo:write"]),
    orgRole: null,
    repo: privateRepo({ writeBlocked: "quota: no card on file" }),
    action: "repo:write",
    expect: { status: 402, message: /^quota:/ },
  },
  {
    name: "reads of a write-blocked repo still work",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo({ writeBlocked: "quota: subscription ended" }),
    action: "repo:read",
    expect: ALLOW("viewer"),
  },

  // Organization-level actions (§2.13, §4, §5.1, §5.3).
  { name: "viewer lists the org", caller: session(), orgRole: "viewer", action: "org:read", expect: ALLOW("viewer") },
  { name: "outsider lists the org: 404", caller: session(), orgRole: null, action: "org:read", expect: { status: 404 } },
  { name: "outsider org:admin: 404", caller: session(), orgRole: null, action: "org:admin", expect: { status: 404 } },
  { name: "member org:admin: 403", caller: session(), orgRole: "member", action: "org:admin", expect: { status: 403 } },
  { name: "member org:admin masked: 404", caller: session(), orgRole: "member", action: "org:admin-masked", expect: { status: 404 } },
  { name: "admin org:admin", caller: session(), orgRole: "admin", action: "org:admin", expect: ALLOW("admin") },
  { name: "owner org:admin", caller: session(), orgRole: "owner", action: "org:admin", expect: ALLOW("owner") },
  {
    name: "admin, personal repo:write token cannot manage people",
    caller: personal(["repo:write"]),
    orgRole: "admin",
    action: "org:admin",
    expect: { status: 403 },
  },
  { name: "admin, personal org:admin token manages people", caller: personal(["org:admin"]), orgRole: "admin", action: "org:admin", expect: ALLOW("admin") },
  { name: "member, repo:read token cannot list: 403", caller: personal(["repo:read"]), orgRole: "member", action: "org:read", expect: { status: 403 } },
  { name: "member, org:read token lists", caller: personal(["org:read"]), orgRole: "member", action: "org:read", expect: ALLOW("member") },
  {
    name: "personal token of another org on org routes: 404",
    caller: personal(["org:admin"], OTHER_ORG),
    orgRole: "owner",
    action: "org:read",
    expect: { status: 404 },
  },
  { name: "viewer creates a repo: 403", caller: session(), orgRole: "viewer", action: "org:create-repo", expect: { status: 403 } },
  { name: "member creates a repo", caller: session(), orgRole: "member", action: "org:create-repo", expect: ALLOW("member") },
  { name: "unconfirmed member creates a repo: 403", caller: session(false), orgRole: "member", action: "org:create-repo", expect: { status: 403 } },
  { name: "unconfirmed member still reads", caller: session(false), orgRole: "member", repo: privateRepo(), action: "repo:read", expect: ALLOW("member") },
  {
    name: "member, repo:read token creates a repo: 403",
    caller: personal(["repo:read"]),
    orgRole: "member",
    action: "org:create-repo",
    expect: { status: 403 },
  },
  { name: "service repo:write creates a repo", caller: service(["repo:write"]), orgRole: null, action: "org:create-repo", expect: { allow: true } },
  { name: "service org:admin manages the org", caller: service(["org:admin"]), orgRole: null, action: "org:admin", expect: { allow: true } },
  { name: "service repo:write cannot manage the org: 403", caller: service(["repo:write"]), orgRole: null, action: "org:admin", expect: { status: 403 } },
  {
    name: "service token of another org on org routes: 404",
    caller: service(["org:admin"], OTHER_ORG),
    orgRole: null,
    action: "org:admin",
    expect: { status: 404 },
  },
  {
    name: "repo-bound service token on org listing: 403",
    caller: service(["org:admin"], ORG.id, REPO_ID),
    orgRole: null,
    action: "org:read",
    expect: { status: 403 },
  },
  {
    name: "repo-bound service token on org admin: 403",
    caller: service(["org:admin"], ORG.id, REPO_ID),
    orgRole: null,
    action: "org:admin",
    expect: { status: 403 },
  },
  {
    name: "repo-bound personal token on org listing: 403",
    caller: personal(["org:read", "repo:read"], ORG.id, REPO_ID),
    orgRole: "owner",
    action: "org:read",
    expect: { status: 403 },
  },
  { name: "service token on a person-only action: 403", caller: service(["org:admin"]), orgRole: null, action: "org:member", expect: { status: 403 } },
  { name: "viewer on a person-only action", caller: session(), orgRole: "viewer", action: "org:member", expect: ALLOW("viewer") },

  // Discussion on changes (issue 28): repo:discuss, comment:delete, thread:resolve.
  { name: "discuss: viewer comments", caller: session(), orgRole: "viewer", repo: privateRepo(), action: { kind: "repo:discuss" }, expect: ALLOW("viewer") },
  { name: "discuss: member comments", caller: session(), orgRole: "member", repo: privateRepo(), action: { kind: "repo:discuss" }, expect: ALLOW("member") },
  {
    name: "discuss: anonymous on a public repo: 401",
    caller: anonymous,
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "repo:discuss" },
    expect: { status: 401 },
  },
  {
    name: "discuss: anonymous on a private repo: 401",
    caller: anonymous,
    orgRole: null,
    repo: privateRepo(),
    action: { kind: "repo:discuss" },
    expect: { status: 401 },
  },
  {
    name: "discuss: outsider on a private repo: masked 404",
    caller: session(),
    orgRole: null,
    repo: privateRepo(),
    action: { kind: "repo:discuss" },
    expect: { status: 404 },
  },
  {
    name: "discuss: outsider on a public repo: 403",
    caller: session(),
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "repo:discuss" },
    expect: { status: 403 },
  },
  {
    name: "discuss: outsider on a public repo who opened the change (from a fork)",
    caller: session(),
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "repo:discuss", changeAuthor: true },
    expect: ALLOW(null),
  },
  {
    name: "discuss: the change's author on a private repo they cannot read: masked 404",
    caller: session(),
    orgRole: null,
    repo: privateRepo(),
    action: { kind: "repo:discuss", changeAuthor: true },
    expect: { status: 404 },
  },
  {
    name: "discuss: the change's author with a read-only token: 403",
    caller: personal(["repo:read"]),
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "repo:discuss", changeAuthor: true },
    expect: { status: 403, message: /repo:write/ },
  },
  {
    name: "resolve: outsider who opened the change, on a public repo",
    caller: session(),
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "thread:resolve", changeAuthor: true },
    expect: ALLOW(null),
  },
  {
    name: "delete: outsider who opened the change, their own comment",
    caller: session(),
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "comment:delete", author: true, changeAuthor: true },
    expect: ALLOW(null),
  },
  {
    name: "delete: outsider who opened the change, someone else's comment: 403",
    caller: session(),
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "comment:delete", author: false, changeAuthor: true },
    expect: { status: 403 },
  },
  {
    name: "discuss: service token with repo:write: 403 (a person writes comments)",
    caller: service(["repo:write"]),
    orgRole: null,
    repo: privateRepo(),
    action: { kind: "repo:discuss" },
    expect: { status: 403, message: /person/ },
  },
  {
    name: "discuss: read-only personal token: 403",
    caller: personal(["repo:read"]),
    orgRole: "member",
    repo: privateRepo(),
    action: { kind: "repo:discuss" },
    expect: { status: 403, message: /repo:write/ },
  },
  {
    name: "discuss: viewer's repo:write token",
    caller: personal(["repo:write"]),
    orgRole: "viewer",
    repo: privateRepo(),
    action: { kind: "repo:discuss" },
    expect: ALLOW("viewer"),
  },
  {
    name: "discuss: token bound to another repo: masked 404",
    caller: personal(["repo:write"], ORG.id, OTHER_REPO_ID),
    orgRole: "member",
    repo: privateRepo(),
    action: { kind: "repo:discuss" },
    expect: { status: 404 },
  },
  {
    name: "discuss: on a write-blocked repo still allowed",
    caller: session(),
    orgRole: "member",
    repo: privateRepo({ writeBlocked: "over quota" }),
    action: { kind: "repo:discuss" },
    expect: ALLOW("member"),
  },
  {
    name: "delete: author viewer",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo(),
    action: { kind: "comment:delete", author: true },
    expect: ALLOW("viewer"),
  },
  {
    name: "delete: someone else's as member: 403",
    caller: session(),
    orgRole: "member",
    repo: privateRepo(),
    action: { kind: "comment:delete", author: false },
    expect: { status: 403 },
  },
  {
    name: "delete: someone else's as admin",
    caller: session(),
    orgRole: "admin",
    repo: privateRepo(),
    action: { kind: "comment:delete", author: false },
    expect: ALLOW("admin"),
  },
  {
    name: "delete: admin by repo grant",
    caller: session(),
    orgRole: "member",
    repo: privateRepo({ userGrant: "admin" }),
    action: { kind: "comment:delete", author: false },
    expect: ALLOW("admin"),
  },
  {
    name: "delete: author with a read-only token: 403",
    caller: personal(["repo:read"]),
    orgRole: "member",
    repo: privateRepo(),
    action: { kind: "comment:delete", author: true },
    expect: { status: 403 },
  },
  {
    name: "delete: outsider on a private repo: 404",
    caller: session(),
    orgRole: null,
    repo: privateRepo(),
    action: { kind: "comment:delete", author: true },
    expect: { status: 404 },
  },
  {
    name: "resolve: writer",
    caller: session(),
    orgRole: "member",
    repo: privateRepo(),
    action: { kind: "thread:resolve", changeAuthor: false },
    expect: ALLOW("member"),
  },
  {
    name: "resolve: viewer who is the change's author",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo(),
    action: { kind: "thread:resolve", changeAuthor: true },
    expect: ALLOW("viewer"),
  },
  {
    name: "resolve: viewer: 403",
    caller: session(),
    orgRole: "viewer",
    repo: privateRepo(),
    action: { kind: "thread:resolve", changeAuthor: false },
    expect: { status: 403 },
  },
  {
    name: "resolve: service token: 403",
    caller: service(["org:admin"]),
    orgRole: null,
    repo: privateRepo(),
    action: { kind: "thread:resolve", changeAuthor: false },
    expect: { status: 403 },
  },
  {
    name: "resolve: anonymous: 401",
    caller: anonymous,
    orgRole: null,
    repo: publicRepo(),
    action: { kind: "thread:resolve", changeAuthor: false },
    expect: { status: 401 },
  },
];

describe("decide", () => {
  test.each(rows.map((r) => [r.name, r] as const))("%s", (_name, row) => {
    const facts: Facts = { caller: row.caller, org: ORG, orgRole: row.orgRole, repo: row.repo };
    const d = decide(facts, row.action);
    if ("allow" in row.expect) {
      expect(d.allow).toBe(true);
      if (row.expect.role !== undefined && d.allow) expect(d.role).toBe(row.expect.role);
    } else {
      expect(d.allow).toBe(false);
      if (d.allow) return;
      expect(d.status).toBe(row.expect.status);
      expect(typeof d.message).toBe("string");
      expect(d.message.length).toBeGreaterThan(0);
      if (row.expect.message) expect(d.message).toMatch(row.expect.message);
    }
  });

  test("is pure: the same facts give the same verdict", () => {
    for (const row of rows) {
      const facts: Facts = { caller: row.caller, org: ORG, orgRole: row.orgRole, repo: row.repo };
      const snapshot = structuredClone(facts);
      const a = decide(facts, row.action);
      const b = decide(facts, row.action);
      expect(b).toEqual(a);
      expect(facts).toEqual(snapshot);
    }
  });
});
