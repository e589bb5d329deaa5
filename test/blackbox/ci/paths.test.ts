// Path and tag filters of `on.push` (issue 29): the trigger passes the paths a push changed (the
// old tip's tree against the new one) and tag pushes, so `paths`, `paths-ignore` and `tags` work
// as on GitHub. Real `git push` of commits and an annotated tag. A branch's triggers run in push
// order, so once a later push's run exists, an earlier push that made none never will.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitFiles as gitCommit, gitSandbox, repoUrl, type GitSandbox } from "../../helpers/git.ts";
import { mintToken, type RunningServer } from "../../helpers/server.ts";
import { type Api, type CiServer, dbRows, runsOf, startCiServer, until } from "./helpers.ts";

let ci: CiServer;
let server: RunningServer;
let api: Api;
let g: GitSandbox;
let dir = "";

const job = "jobs:\n  t:\n    runs-on: [self-hosted, nobody-has-this]\n    steps: [ { run: 'true' } ]\n";

beforeAll(async () => {
  ci = await startCiServer({ repos: ["paths"] });
  ({ server, api } = ci);
  g = gitSandbox();
  const token = await mintToken(server, ci.owner.cookie, "acme", { scopes: ["repo:write"], label: "pusher" });
  dir = g.path("paths");
  await g.ok(["clone", "-q", repoUrl(server, "acme", "paths", token), dir]);
});

afterAll(async () => {
  await ci?.[Symbol.asyncDispose]();
  g?.[Symbol.dispose]();
});

const push = async (files: Record<string, string>, ref = "HEAD:main") => {
  const sha = await gitCommit(g, dir, files, "change");
  await g.ok(["push", "-q", "origin", ref], { cwd: dir });
  return sha;
};
const runsFor = async (sha: string) => (await runsOf(api, "paths")).filter((r) => r.commit === sha);

describe("push filters", () => {
  test("paths-ignore: a push touching only ignored paths starts no run; paths: only matching pushes", async () => {
    const first = await push({
      ".svc/workflows/code.yml": `on:\n  push:\n    paths-ignore: ['docs/**', '*.md']\n${job}`,
      ".svc/workflows/api.yml": `on:\n  push:\n    paths: ['api/**', '!api/README.txt']\n${job}`,
      ".svc/workflows/release.yml": `on:\n  push:\n    tags: ['v*']\n${job}`,
    });
    // The first push of a branch: the changed paths are unknown, filters match.
    await until("the first push's runs", async () => (await runsFor(first)).length === 2);
    const docs = await push({ "docs/guide.md": "guide\n", "NOTES.md": "n\n" });
    const code = await push({ "src/main.c": "int main;\n" });
    const codeRuns = await until("the code push's run", async () => {
      const r = await runsFor(code);
      return r.length ? r : null;
    });
    expect(codeRuns.map((r) => r.workflow)).toEqual([".svc/workflows/code.yml"]);
    expect(await runsFor(docs)).toEqual([]);
    const api1 = await push({ "api/handler.c": "x\n", "docs/api.md": "y\n" });
    const apiRuns = await until("the api push's runs", async () => {
      const r = await runsFor(api1);
      return r.length === 2 ? r : null;
    });
    expect(apiRuns.map((r) => r.workflow).sort()).toEqual([".svc/workflows/api.yml", ".svc/workflows/code.yml"]);
    // A negated pattern: the only changed path is excluded again, so api.yml does not run.
    const readme = await push({ "api/README.txt": "r\n", "src/other.c": "z\n" });
    const readmeRuns = await until("the readme push's run", async () => {
      const r = await runsFor(readme);
      return r.length ? r : null;
    });
    expect(readmeRuns.map((r) => r.workflow)).toEqual([".svc/workflows/code.yml"]);
  });

  test("a tag push runs the workflows filtering on tags, and only those", async () => {
    await g.ok(["tag", "-a", "v1.0", "-m", "release"], { cwd: dir });
    const head = await g.ok(["rev-parse", "HEAD"], { cwd: dir });
    await g.ok(["push", "-q", "origin", "refs/tags/v1.0"], { cwd: dir });
    const tagRuns = await until("the tag's run", async () => {
      const r = (await runsOf(api, "paths")).filter((x) => x.ref === "refs/tags/v1.0");
      return r.length ? r : null;
    });
    expect(tagRuns.map((r) => [r.workflow, r.commit, r.event])).toEqual([[".svc/workflows/release.yml", head, "push"]]);
    // A tag the filter does not name starts nothing (once every trigger job is done).
    await g.ok(["tag", "nightly"], { cwd: dir });
    await g.ok(["push", "-q", "origin", "refs/tags/nightly"], { cwd: dir });
    await until(
      "every ci.trigger job done",
      () => dbRows<{ n: number }>(server, "SELECT count(*) AS n FROM jobs WHERE kind = 'ci.trigger' AND done_at IS NULL")[0]!.n === 0,
    );
    expect(dbRows(server, "SELECT 1 FROM jobs WHERE kind = 'ci.trigger' AND payload LIKE '%refs/tags/nightly%'").length).toBe(1);
    expect((await runsOf(api, "paths")).filter((x) => x.ref === "refs/tags/nightly")).toEqual([]);
    // More than three tags in one push start nothing (GitHub's rule); the trigger jobs are written with the push.
    for (const v of ["v2.0", "v2.1", "v2.2", "v2.3"]) await g.ok(["tag", v], { cwd: dir });
    await g.ok(["push", "-q", "origin", "refs/tags/v2.0", "refs/tags/v2.1", "refs/tags/v2.2", "refs/tags/v2.3"], { cwd: dir });
    expect(dbRows(server, "SELECT 1 FROM jobs WHERE kind = 'ci.trigger' AND payload LIKE '%refs/tags/v2.%'")).toEqual([]);
  });
});
