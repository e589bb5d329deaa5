// Helpers for the content API black-box suites (content-*.test.ts): one server, a git sandbox,
// named people with tokens, a per-repository JSON client and the "nothing was written" check.
import { expect } from "bun:test";
import { createRepo, gitSandbox, lsRemote, mintTokenWithId, repoUrl, type GitSandbox, type OrgOwner } from "./git.ts";
import { client, createUser, login, startServer, type RunningServer } from "./server.ts";

/** A person in an org: their session cookie and a token with the scopes asked for. */
export interface Person {
  org: string;
  name: string;
  email: string;
  cookie: string;
  token: string;
}

let counter = 0;

/** Creates a confirmed person in `org` (created if missing) with `role`, signed in, with a token of `scopes`. */
export async function person(
  server: RunningServer,
  org: string,
  role: string,
  scopes: string[] = [role === "viewer" ? "repo:read" : "repo:write"],
): Promise<Person> {
  const n = ++counter;
  const name = `${role[0]!.toUpperCase()}${role.slice(1)} Person ${n}`;
  const email = `${role}.${n}@${org}.example.com`;
  const u = await createUser(server, { org, email, name, role });
  const cookie = await login(server, email, u.password);
  const { token } = await mintTokenWithId(server, cookie, org, { scopes, label: `content-${n}` });
  return { org, name, email, cookie, token };
}

/** One server, a git sandbox and the cast of one org; dispose with `close()`. */
export interface World {
  server: RunningServer;
  g: GitSandbox;
  owner: Person;
  admin: Person;
  member: Person;
  viewer: Person;
  /** The owner of another org: no role in `org`. */
  outsider: Person;
  /** A repo:read token of the owner. */
  ownerReadToken: string;
  close(): Promise<void>;
}

/** Starts the shared server of one test file and creates the cast (in parallel: each is a CLI run). */
export async function startWorld(org: string, opts: { env?: Record<string, string> } = {}): Promise<World> {
  const server = await startServer(opts);
  const g = gitSandbox("svc-content-");
  const owner = await person(server, org, "owner");
  const [admin, member, viewer, outsider] = await Promise.all([
    person(server, org, "admin"),
    person(server, org, "member"),
    person(server, org, "viewer"),
    person(server, `${org}-outsiders`, "owner"),
  ]);
  const { token: ownerReadToken } = await mintTokenWithId(server, owner.cookie, org, { scopes: ["repo:read"], label: "owner-read" });
  return {
    server,
    g,
    owner,
    admin,
    member,
    viewer,
    outsider,
    ownerReadToken,
    async close() {
      await server.stop();
      g[Symbol.dispose]();
    },
  };
}

/** A JSON response as the test client returns it. */
export type Res = Awaited<ReturnType<ReturnType<typeof client>["get"]>>;

/** The content routes of one repository, called with one credential (none: anonymous). */
export function repoApi(server: RunningServer, org: string, repo: string, token?: string) {
  const c = client(server, token ? { token } : undefined);
  const base = `/v1/orgs/${org}/repos/${repo}`;
  const q = (params: Record<string, string | number | undefined>) => {
    const s = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) s.set(k, String(v));
    const text = s.toString();
    return text ? `?${text}` : "";
  };
  return {
    base,
    c,
    commit: (body: unknown) => c.post(`${base}/commits`, body),
    log: (params: { ref?: string; path?: string; limit?: number; cursor?: string } = {}) => c.get(`${base}/commits${q(params)}`),
    show: (sha: string) => c.get(`${base}/commits/${sha}`),
    tree: (ref: string, path?: string) => c.get(`${base}/tree/${encodeURIComponent(ref)}${q({ path })}`),
    /** Raw blob fetch (bytes, not JSON). */
    blob: (ref: string, path: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${base}/blob/${encodeURIComponent(ref)}${q({ path })}`, {
        headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      }),
    refs: () => c.get(`${base}/refs`),
    /** PUT a ref; `name` goes into the URL as given (raw slashes). */
    putRef: (name: string, body: unknown) => c.put(`${base}/refs/${name}`, body),
    deleteRef: (name: string, expected?: string) => c.delete(`${base}/refs/${name}${q({ expected })}`),
    protections: () => c.get(`${base}/protections`),
    putProtection: (pattern: string, body: unknown) => c.put(`${base}/protections/${pattern}`, body),
    deleteProtection: (pattern: string) => c.delete(`${base}/protections/${pattern}`),
    patchRepo: (body: unknown) => c.patch(base, body),
  };
}

export type RepoApi = ReturnType<typeof repoApi>;

/** A fresh repository of the world's owner, with its API (owner token) and authenticated git URL. */
export interface TestRepo {
  name: string;
  url: string;
  api: RepoApi;
}

/** Creates a repository owned by the world's org. */
export async function newRepo(w: World, name: string, isPublic = false): Promise<TestRepo> {
  const owner: OrgOwner = { org: w.owner.org, email: w.owner.email, cookie: w.owner.cookie, token: w.owner.token };
  await createRepo(w.server, owner, name, isPublic);
  return { name, url: repoUrl(w.server, w.owner.org, name, w.owner.token), api: repoApi(w.server, w.owner.org, name, w.owner.token) };
}

/** Commits through the API and expects 201; returns the response body. */
export async function commitOk(api: RepoApi, body: Record<string, unknown>): Promise<{ commit: string; branch: string; parent: string | null; tree: string }> {
  const r = await api.commit({ message: "change", ...body });
  if (r.status !== 201) throw new Error(`commit failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Shorthand operations. */
export const put = (path: string, content: string) => ({ op: "put", path, content });
export const putB64 = (path: string, bytes: Uint8Array) => ({ op: "put_base64", path, content: Buffer.from(bytes).toString("base64") });
export const del = (path: string) => ({ op: "delete", path });

/** Everything visible about a repository's refs: the refs API and `git ls-remote`. */
export async function refState(w: World, repo: TestRepo): Promise<{ api: Record<string, string>; remote: Record<string, string> }> {
  const r = await repo.api.refs();
  expect(r.status).toBe(200);
  const api: Record<string, string> = {};
  for (const x of r.body.refs as { name: string; target: string }[]) api[x.name] = x.target;
  return { api, remote: await lsRemote(w.g, repo.url) };
}

/** Runs `fn` and asserts that no ref moved, by both the API and `git ls-remote`. */
export async function expectNothingWritten<T>(w: World, repo: TestRepo, fn: () => Promise<T>): Promise<T> {
  const before = await refState(w, repo);
  const out = await fn();
  expect(await refState(w, repo)).toEqual(before);
  return out;
}

/** Sorted lines of stdout (empty output: []). */
export function lines(s: string): string[] {
  return s.split("\n").filter((l) => l.length > 0);
}
