// Resolve once (issue 26 plan §4): a RepoTarget is opened for repo:read and each service then
// decides its own action on the same facts. That answers what one decision for the action did
// only because every repository action refuses an unreadable (or missing) repository exactly like
// repo:read; this file checks that property over callers, roles and repositories, and the target's
// memo.
import { describe, expect, test } from "bun:test";
import { decide, type Action, type Facts } from "../../../src/services/access/access.ts";
import { may, need, repoTargetOf, spelledAs } from "../../../src/services/access/target.ts";
import type { Org, Repo, Role } from "../../../src/db/schema/index.ts";
import { ANONYMOUS } from "../../../src/services/access/principal.ts";

const ORG = { id: "org-acme", name: "acme" };
type Caller = Facts["caller"];
const CALLERS: Caller[] = [
  { kind: "anonymous" },
  { kind: "person", userId: "u", confirmed: true, scopes: "all", tokenOrgId: null, tokenRepoId: null },
  { kind: "person", userId: "u", confirmed: true, scopes: ["repo:write"], tokenOrgId: ORG.id, tokenRepoId: null },
  { kind: "person", userId: "u", confirmed: true, scopes: ["org:read"], tokenOrgId: ORG.id, tokenRepoId: null },
  { kind: "person", userId: "u", confirmed: true, scopes: ["repo:write"], tokenOrgId: ORG.id, tokenRepoId: "repo-other" },
  { kind: "person", userId: "u", confirmed: true, scopes: ["org:admin"], tokenOrgId: "org-rival", tokenRepoId: null },
  { kind: "service", scopes: ["repo:write"], tokenOrgId: ORG.id, tokenRepoId: null },
  { kind: "service", scopes: ["org:read"], tokenOrgId: ORG.id, tokenRepoId: null },
  { kind: "service", scopes: ["org:admin"], tokenOrgId: "org-rival", tokenRepoId: null },
  { kind: "runner-registration" },
  { kind: "runner", runnerId: "m-1" },
];
const ROLES: (Role | null)[] = [null, "viewer", "member", "admin", "owner"];
const REPOS: (Facts["repo"] | null)[] = [
  null, // missing
  { id: "repo-w", fullName: "acme/w", public: false, writeBlocked: null, kind: "native", userGrant: null, teamGrants: [] },
  { id: "repo-w", fullName: "acme/w", public: true, writeBlocked: null, kind: "native", userGrant: null, teamGrants: [] },
  { id: "repo-w", fullName: "acme/w", public: false, writeBlocked: "quota: over", kind: "mirror", userGrant: null, teamGrants: [] },
];
const ACTIONS: Action[] = ["repo:write", "repo:admin", "repo:sync", "repo:fork", { kind: "change:edit", author: true }, { kind: "change:edit", author: false }];

describe("every repository action refuses an unseen repository like repo:read", () => {
  test("callers × org roles × repositories", () => {
    const differ: string[] = [];
    for (const caller of CALLERS) {
      for (const orgRole of ROLES) {
        for (const repo of REPOS) {
          const facts: Facts = { caller, org: ORG, orgRole, repo };
          const read = decide(facts, "repo:read");
          if (read.allow) continue;
          for (const action of ACTIONS) {
            const d = decide(facts, action);
            if (JSON.stringify(d) !== JSON.stringify(read))
              differ.push(JSON.stringify({ caller: caller.kind, orgRole, repo: repo?.public ?? null, action, read, d }));
          }
        }
      }
    }
    expect(differ).toEqual([]);
  });
});

describe("a target decides on its own facts", () => {
  const org = { id: ORG.id, name: "acme" } as Org;
  const repoRow = { id: "repo-w", name: "w", public: false, kind: "native" } as Repo;
  const facts = (orgRole: Role | null): Facts => ({
    caller: { kind: "person", userId: "u", confirmed: true, scopes: "all", tokenOrgId: null, tokenRepoId: null },
    org: ORG,
    orgRole,
    repo: { id: "repo-w", fullName: "acme/w", public: false, writeBlocked: null, kind: "native", userGrant: null, teamGrants: [] },
  });

  test("need answers the role or throws the refusal as an AppError; may never throws", () => {
    const member = repoTargetOf(org, repoRow, ANONYMOUS, facts("member"));
    expect(need(member, "repo:write")).toBe("member");
    expect(may(member, "repo:admin")).toBe(false);
    expect(() => need(member, "repo:admin")).toThrow("administering acme/w needs the admin role");
    const outsider = repoTargetOf(org, repoRow, ANONYMOUS, facts(null));
    let status = 0;
    try {
      need(outsider, "repo:write");
    } catch (e) {
      status = (e as { status: number }).status;
    }
    expect(status).toBe(404);
  });

  test("once: one load per key, shared by a respelled target; a failed load is asked again", async () => {
    const t = repoTargetOf(org, repoRow, ANONYMOUS, facts("owner"));
    let loads = 0;
    const load = async () => ++loads;
    expect(await t.once("k", load)).toBe(1);
    expect(await t.once("k", load)).toBe(1);
    const page = spelledAs(t, { org: "ACME", repo: "w" });
    expect(page.named).toEqual({ org: "ACME", repo: "w" });
    expect(t.named).toEqual({ org: "acme", repo: "w" });
    expect(await page.once("k", load)).toBe(1);
    expect(need(page, "repo:admin")).toBe("owner");
    await expect(t.once("bad", async () => Promise.reject(new Error("nope")))).rejects.toThrow("nope");
    await Promise.resolve();
    expect(await t.once("bad", async () => "again")).toBe("again");
  });
});
