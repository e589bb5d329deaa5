// The people and the change a review or notification test starts from (issue 28's black-box tests
// shared these setups word for word): a cast of people with known handles, each signed in and holding
// a token, and a repository whose `main` and `feature` branches are pushed by the real git client.
import { commitFiles, initRepo, mintTokenWithId, type GitSandbox } from "./git.ts";
import { createUser, login, type RunningServer } from "./server.ts";

/** A person of the cast: id, a known handle, email, a session cookie and a token. */
export interface Cast {
  id: string;
  handle: string;
  email: string;
  cookie: string;
  token: string;
}

/**
 * Creates `handle` (email `{handle}@{org}.example.com`, named like the handle) with `role` in
 * `org`, signs them in and mints a personal token of `scopes` labelled `{handle}-token`.
 */
export async function castPerson(server: RunningServer, org: string, handle: string, role: string, scopes: string[] = ["repo:write"]): Promise<Cast> {
  const u = await createUser(server, { org, email: `${handle}@${org}.example.com`, name: handle, role, handle });
  const cookie = await login(server, u.email, u.password);
  const { token } = await mintTokenWithId(server, cookie, org, { scopes, label: `${handle}-token` });
  return { id: u.id, handle: u.handle, email: u.email, cookie, token };
}

/** The people of `org` a review test needs, by handle: ada and bo write (members), cy only reads (a viewer), dee administers. */
export async function castReviewers(server: RunningServer, org: string): Promise<Record<"ada" | "bo" | "cy" | "dee", Cast>> {
  const [ada, bo, cy, dee] = await Promise.all([
    castPerson(server, org, "ada", "member"),
    castPerson(server, org, "bo", "member"),
    castPerson(server, org, "cy", "viewer", ["repo:read"]),
    castPerson(server, org, "dee", "admin"),
  ]);
  return { ada: ada!, bo: bo!, cy: cy!, dee: dee! };
}

/**
 * A local repository `name` with `main` (a.txt = "a\n") and `feature` on top of it (`feature`
 * files, a.txt gaining a line by default), both pushed to `url`; left checked out on `feature`.
 */
export async function pushMainAndFeature(
  g: GitSandbox,
  name: string,
  url: string,
  feature: Record<string, string> = { "a.txt": "a\nmore\n" },
): Promise<{ dir: string; main: string; head: string }> {
  const dir = await initRepo(g, name);
  await g.ok(["checkout", "-q", "-b", "main"], { cwd: dir });
  const main = await commitFiles(g, dir, { "a.txt": "a\n" }, "seed");
  await g.ok(["push", "-q", url, "main"], { cwd: dir });
  await g.ok(["checkout", "-q", "-b", "feature"], { cwd: dir });
  const head = await commitFiles(g, dir, feature, "feature");
  await g.ok(["push", "-q", url, "feature"], { cwd: dir });
  return { dir, main, head };
}
