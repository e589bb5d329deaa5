// The home page's activity feed over real HTTP and real git (issue 33): a push says which branch,
// how many commits and the newest first lines (linked); created and deleted branches and tags are
// entries of their own; a landing is ONE entry (the lander's push and its change.landed folded
// together), naming the change and what it brought.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { castPerson, pushMainAndFeature, type Cast } from "../../../helpers/cast.ts";
import { commitFiles, gitSandbox, repoUrl, type GitSandbox } from "../../../helpers/git.ts";
import { client, type RunningServer, startServer } from "../../../helpers/server.ts";

let server: RunningServer;
let g: GitSandbox;
let ada: Cast;
const commits: Record<string, string> = {};

async function home(): Promise<string> {
  const text = await (await fetch(`${server.url}/`, { headers: { cookie: ada.cookie } })).text();
  return /<ul class="list activity">[\s\S]*?<\/ul>\n?<\/section>/.exec(text)?.[0] ?? "";
}

/** The feed once it says `what` (pushes are summarised by a job just after they commit). */
async function feedSaying(...what: (string | RegExp)[]): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const feed = await home();
    if (what.every((w) => (typeof w === "string" ? feed.includes(w) : w.test(feed)))) return feed;
    if (Date.now() > deadline) throw new Error(`the feed never said ${what.join(", ")}:\n${feed}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  server = await startServer();
  g = gitSandbox("svc-web-activity-");
  ada = await castPerson(server, "feed", "ada", "owner", ["repo:write", "org:admin"]);
  const api = client(server, { token: ada.token });
  expect((await api.post("/v1/orgs/feed/repos", { name: "site", public: false })).status).toBe(201);
  const url = repoUrl(server, "feed", "site", ada.token);
  const { dir } = await pushMainAndFeature(g, "site", url);
  await g.ok(["checkout", "-q", "main"], { cwd: dir });
  for (const n of ["third", "fourth", "fifth"])
    commits[n] = await commitFiles(g, dir, { [`${n}.txt`]: `${n}\n` }, `${n}: a line about ${n}\n\nThe body is not shown.`);
  await g.ok(["push", "-q", url, "main"], { cwd: dir });
  await g.ok(["tag", "v1.0"], { cwd: dir });
  await g.ok(["push", "-q", url, "v1.0"], { cwd: dir });
  await g.ok(["push", "-q", url, "main:refs/heads/old"], { cwd: dir });
  await g.ok(["push", "-q", url, ":refs/heads/old"], { cwd: dir });
  expect((await api.post("/v1/orgs/feed/repos/site/changes", { title: "Feature work", branch: "feature" })).status).toBe(201);
  expect((await api.post("/v1/orgs/feed/repos/site/changes/1/land")).status).toBe(202);
  const deadline = Date.now() + 30_000;
  while ((await api.get("/v1/orgs/feed/repos/site/changes/1")).body.state !== "landed") {
    if (Date.now() > deadline) throw new Error("change #1 never landed");
    await Bun.sleep(50);
  }
});

afterAll(async () => {
  await server?.stop();
  g?.[Symbol.dispose]();
});

describe("the activity feed", () => {
  test("a push names its branch, its commit count and the newest first lines, linked", async () => {
    const feed = await feedSaying("pushed 3 commits to");
    expect(feed).toContain(
      `<a href="/ada">ada</a> pushed 3 commits to <a class="sha" href="/feed/site/tree/main">main</a> in <a href="/feed/site">feed/site</a>`,
    );
    for (const n of ["fifth", "fourth", "third"])
      expect(feed).toContain(`<a class="sha" href="/feed/site/commit/${commits[n]}">${commits[n]!.slice(0, 7)}</a> ${n}: a line about ${n}</li>`);
    expect(feed).not.toContain("The body is not shown");
    // Newest first.
    expect(feed.indexOf("fifth:")).toBeLessThan(feed.indexOf("third:"));
  });

  test("created and deleted branches and tags are entries of their own", async () => {
    const feed = await feedSaying("created tag", "deleted branch", "created branch");
    expect(feed).toContain(`created tag <a class="sha" href="/feed/site/tree/v1.0">v1.0</a> in`);
    expect(feed).toContain(`deleted branch <span class="sha">old</span> in`);
    // A branch made from commits main already has brings no new ones.
    expect(feed).toContain(`created branch <a class="sha" href="/feed/site/tree/old">old</a> in`);
    expect(feed).toMatch(/created branch <a class="sha" href="\/feed\/site\/tree\/feature">feature<\/a> with 1 new commit in/);
  });

  test("a landing is one entry: the change, the branch and what it brought; no separate lander push", async () => {
    const feed = await feedSaying("landed <a");
    expect(feed.match(/landed <a href="\/feed\/site\/changes\/1">change #1<\/a>/g)?.length).toBe(1);
    expect(feed).toMatch(
      /<a href="\/ada">ada<\/a> landed <a href="\/feed\/site\/changes\/1">change #1<\/a> in <a href="\/feed\/site">feed\/site<\/a> \(<span class="sha">main<\/span>\)/,
    );
    expect(feed).not.toContain("lander");
    // The merge commit and the change's own commit.
    expect(feed).toMatch(
      /\(<span class="sha">main<\/span>\): 2 commits<ul class="commits"><li><a class="sha" href="\/feed\/site\/commit\/[0-9a-f]{40}">[0-9a-f]{7}<\/a> Land change #1: Feature work<\/li>/,
    );
    expect(feed).toContain(`opened <a href="/feed/site/changes/1">change #1</a> <q>Feature work</q>`);
    // One list item per entry: the landing's push and change.landed rows made one.
    const items = feed.split(/<li><img class="avatar"|<li><div>/).length - 1;
    expect(items).toBe(8); // opened, landing, 2×old, tag, main, feature, first main
  });

  test("every entry carries its actor's picture", async () => {
    const feed = await home();
    expect(feed).toContain(`<img class="avatar" src="/avatars/ada" alt="" width="20" height="20"`);
  });
});
